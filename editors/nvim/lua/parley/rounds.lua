-- Review rounds that wait on a person: an agent asked for a human review and
-- waits (await_review) for the verdict given here.
--
-- The daemon tells this window of each round of its folders an agent asks
-- for (round/requested), and `inbox`, asked after every hello, gives the
-- rounds that were waiting before: the person is told of each once. A round
-- opens in a tab of its own: a file list on the left, and for the file picked
-- there a diff of two read-only scratch buffers, the base (`before`) or the
-- previous round's text (`previous`) on the left, the agent's text (`after`)
-- on the right. Comments on lines of either side are drafts kept by the
-- daemon (round/comment), so the command line and other editors share them,
-- until the person submits a verdict (round/submit). round/changed keeps the
-- drafts in step, and closes the round when it was submitted or cancelled.
--
-- Lines on the wire are 0-based, ranges include their last line.

local config = require("parley.config")
local rpc = require("parley.rpc")

local api = vim.api
local M = {}

-- review_id → WaitingRound, for the rounds waiting on a person in this window's folders.
M.waiting = {}
-- The threads waiting on a person's answer, as the last `inbox` gave them.
M.inbox_threads = {}
-- review_id → the round as round/get described it, drafts kept current, for rounds opened here.
M.rounds = {}

local ns = api.nvim_create_namespace("parley_rounds")
M.namespace = ns

local SCHEME = "parley-round://"
local VERDICTS = { "approve", "request_changes", "comment" }

-- "id#round" → true once the person was told of that round.
local announced = {}
-- review_id → { tab, list_win, left_win, right_win, list_buf, mode = "all"|"since", path, lines = lnum → path }.
local views = {}
-- review_id → { ["old/src/a.rs"] = buf, … }: every scratch buffer of a round, closed with it.
local buffers = {}
-- buf → { review_id, path, kind = "old"|"new"|"previous", side = "old"|"new"|nil }.
local buffer_info = {}
-- Rounds submitted from this window: their round/changed needs no second message.
local submitted_here = {}

-- JSON null arrives as vim.NIL.
local function value(x)
  if x == vim.NIL then
    return nil
  end
  return x
end

local function first_line(text)
  return ((value(text) or ""):match("^[^\n]*"))
end

local function fail(message)
  vim.notify("Parley: " .. message, vim.log.levels.ERROR)
end

local function info(message)
  vim.notify("Parley: " .. message, vim.log.levels.INFO)
end

local function plural(n, word)
  return n .. " " .. word .. (n == 1 and "" or "s")
end

-- The lines of a file's text, or nil when there is none (added, deleted, binary, too large).
local function text_lines(text)
  text = value(text)
  if text == nil then
    return nil
  end
  local lines = vim.split(text, "\n", { plain = true })
  if #lines > 0 and lines[#lines] == "" then
    table.remove(lines)
  end
  return lines
end

local function file_of(round, path)
  for _, file in ipairs(round.files or {}) do
    if file.path == path then
      return file
    end
  end
  return nil
end

local function previous_round(round)
  return tonumber(value(round.previous_round))
end

-- Whether a file is the same as at the previous round (so it starts collapsed).
local function unchanged_since(round, file)
  return previous_round(round) ~= nil and file.changed_since_previous == false
end

--------------------------------------------------------------------------
-- Being asked

local function announce(waiting)
  local key = tostring(waiting.review_id) .. "#" .. tostring(waiting.round)
  if announced[key] then
    return
  end
  announced[key] = true
  if not config.options.notify then
    return
  end
  local again = (tonumber(waiting.round) or 1) > 1 and (" again (round " .. waiting.round .. ")") or ""
  vim.notify(
    string.format(
      "Parley: %s asks you to review%s: %s — :ParleyReviewRound %s",
      value(waiting.asked_by) or "an agent",
      again,
      first_line(waiting.summary),
      waiting.review_id
    ),
    vim.log.levels.INFO
  )
end

local function on_requested(params)
  if type(params) ~= "table" or not params.review_id then
    return
  end
  M.waiting[params.review_id] = params
  announce(params)
end

-- The waiting rounds, newest first.
function M.waiting_list()
  local list = vim.tbl_values(M.waiting)
  table.sort(list, function(a, b)
    if (a.requested_at or "") ~= (b.requested_at or "") then
      return (a.requested_at or "") > (b.requested_at or "")
    end
    return a.review_id > b.review_id
  end)
  return list
end

--------------------------------------------------------------------------
-- Scratch buffers

local function wipe(buf)
  buffer_info[buf] = nil
  if api.nvim_buf_is_valid(buf) then
    pcall(api.nvim_buf_delete, buf, { force = true })
  end
end

-- Closes everything of round `id`: its tab, its diff buffers, its draft editors.
local function close(id)
  local view = views[id]
  views[id] = nil
  if view and api.nvim_tabpage_is_valid(view.tab) and #api.nvim_list_tabpages() > 1 then
    local number = api.nvim_tabpage_get_number(view.tab)
    pcall(vim.cmd, "tabclose " .. number)
  end
  for _, buf in pairs(buffers[id] or {}) do
    wipe(buf)
  end
  buffers[id] = nil
  M.rounds[id] = nil
end
M.close = close

local function set_lines(buf, lines)
  vim.bo[buf].modifiable = true
  vim.bo[buf].readonly = false
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].readonly = true
  vim.bo[buf].modified = false
end

local function scratch(id, key, name)
  buffers[id] = buffers[id] or {}
  local buf = buffers[id][key]
  if buf and api.nvim_buf_is_valid(buf) then
    return buf, false
  end
  buf = api.nvim_create_buf(false, true)
  buffers[id][key] = buf
  -- A buffer of the same name may survive from a round closed elsewhere.
  for _, other in ipairs(api.nvim_list_bufs()) do
    if other ~= buf and api.nvim_buf_get_name(other) == name then
      wipe(other)
    end
  end
  api.nvim_buf_set_name(buf, name)
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "hide"
  vim.bo[buf].swapfile = false
  return buf, true
end

-- Syntax for a diff buffer from the file's name, the way Neovim would for the file.
local function detect_filetype(buf, path)
  api.nvim_buf_call(buf, function()
    pcall(vim.cmd, "silent doautocmd filetypedetect BufRead " .. vim.fn.fnameescape(path))
  end)
end

-- The text shown for `kind` of `file`, and the side comments on it are on (nil: none).
local function side_text(round, file, kind)
  if file.binary then
    return { "(binary file: not shown)" }, nil
  elseif file.too_large then
    return { "(too large to show here)" }, nil
  end
  if kind == "old" then
    local lines = text_lines(file.before)
    return lines or {}, lines and "old" or nil
  elseif kind == "new" then
    local lines = text_lines(file.after)
    return lines or {}, lines and "new" or nil
  end
  -- The previous round's text: shown, but comments go on the whole change's sides.
  return text_lines(file.previous) or {}, nil
end

local function buffer_for(round, file, kind)
  local id = round.review_id
  local path = (kind == "old" and value(file.old_path)) or file.path
  local buf, fresh = scratch(id, kind .. "/" .. file.path, SCHEME .. id .. "/" .. kind .. "/" .. path)
  local lines, side = side_text(round, file, kind)
  buffer_info[buf] = { review_id = id, path = file.path, kind = kind, side = side }
  if fresh then
    set_lines(buf, lines)
    detect_filetype(buf, path)
    vim.keymap.set("n", "]f", function()
      M.next_file(id, 1)
    end, { buffer = buf, desc = "Parley: the round's next file" })
    vim.keymap.set("n", "[f", function()
      M.next_file(id, -1)
    end, { buffer = buf, desc = "Parley: the round's previous file" })
  end
  return buf
end

--------------------------------------------------------------------------
-- Drafts and earlier comments on the diff buffers

-- Where an earlier comment's thread is now on the agent's side: its live
-- range when this window follows the thread, else where the daemon said it is.
local function earlier_lines(comment)
  local ok, threads = pcall(require, "parley.threads")
  local thread = ok and value(comment.thread_id) and threads.threads[comment.thread_id]
  if thread and thread.range and thread.state ~= "orphaned" then
    return thread.range.start.line, thread.range["end"].line
  end
  return tonumber(comment.line), tonumber(value(comment.end_line)) or tonumber(comment.line)
end

local function place(buf, row, end_row, opts)
  local count = api.nvim_buf_line_count(buf)
  if not row or row < 0 or row >= count then
    return
  end
  opts.end_row = math.max(row, math.min(end_row or row, count - 1))
  opts.end_col = 0
  if opts.end_row == row then
    opts.end_row = nil
    opts.end_col = nil
  end
  api.nvim_buf_set_extmark(buf, ns, row, 0, opts)
end

local function draw_buffer(round, buf)
  local at = buffer_info[buf]
  api.nvim_buf_clear_namespace(buf, ns, 0, -1)
  if not at then
    return
  end
  for _, draft in ipairs(round.drafts or {}) do
    if draft.path == at.path and draft.side == at.side then
      local severity = value(draft.severity)
      local text = "draft" .. (severity and (" (" .. severity .. ")") or "") .. ": " .. first_line(draft.body)
      if value(draft.suggestion) then
        text = text .. " [suggests a change]"
      end
      place(buf, tonumber(draft.start_line), tonumber(draft.end_line), {
        sign_text = config.options.signs.draft,
        sign_hl_group = "ParleyDraftSign",
        virt_text = { { text, "ParleyDraftText" } },
        virt_text_pos = "eol",
      })
    end
  end
  -- Earlier rounds' comments are threads on the code as it is now: they go on the agent's side.
  for _, comment in ipairs(round.earlier or {}) do
    if comment.path == at.path and at.kind == "new" then
      local row, end_row = earlier_lines(comment)
      local text = "round " .. tostring(comment.round) .. " · " .. tostring(comment.state) .. ": " .. first_line(comment.body)
      local replies = #(comment.comments or {})
      if replies > 1 then
        text = text .. " [" .. replies .. "]"
      end
      place(buf, row, end_row, {
        sign_text = config.options.signs.thread,
        sign_hl_group = comment.state == "resolved" and "ParleyStanding" or "ParleySign",
        virt_text = { { text, comment.state == "resolved" and "ParleyStanding" or "ParleyText" } },
        virt_text_pos = "eol",
      })
    end
  end
end

-- Redraws round `id`: the marks on its diff buffers and the file list.
local function redraw(id)
  local round = M.rounds[id]
  if not round then
    return
  end
  for key, buf in pairs(buffers[id] or {}) do
    if api.nvim_buf_is_valid(buf) and buffer_info[buf] and key ~= "list" then
      draw_buffer(round, buf)
    end
  end
  if views[id] then
    M.render_list(id)
  end
end

--------------------------------------------------------------------------
-- The round's tab: file list and diff

local STATUS = { modified = "M", added = "A", deleted = "D", renamed = "R" }

local function drafts_on(round, path)
  local n = 0
  for _, draft in ipairs(round.drafts or {}) do
    if draft.path == path then
      n = n + 1
    end
  end
  return n
end

-- Fills the file list of round `id`: a header, then one line per file with its status.
function M.render_list(id)
  local round, view = M.rounds[id], views[id]
  if not round or not view or not api.nvim_buf_is_valid(view.list_buf) then
    return
  end
  local previous = previous_round(round)
  local lines = {
    "Review " .. id .. ", round " .. tostring(round.round) .. " · asked by " .. (value(round.asked_by) or "an agent"),
    first_line(round.summary),
  }
  if view.mode == "since" then
    lines[#lines + 1] = "Changes since round " .. previous .. " (s: the whole change)"
  elseif previous then
    lines[#lines + 1] = "The whole change (s: changes since round " .. previous .. ")"
  else
    lines[#lines + 1] = "The whole change"
  end
  local drafts = #(round.drafts or {})
  lines[#lines + 1] = plural(drafts, "draft") .. " · <CR> opens a file · :ParleyRoundSubmit sends"
  lines[#lines + 1] = ""
  view.lines = {}
  for _, file in ipairs(round.files or {}) do
    local name = file.path
    if file.status == "renamed" and value(file.old_path) then
      name = file.old_path .. " → " .. file.path
    end
    local notes = {}
    if unchanged_since(round, file) then
      notes[#notes + 1] = "unchanged since round " .. previous
    elseif view.mode == "since" and value(file.previous) == nil and not file.binary and not file.too_large then
      notes[#notes + 1] = "new since round " .. previous
    end
    if file.binary then
      notes[#notes + 1] = "binary"
    elseif file.too_large then
      notes[#notes + 1] = "too large"
    end
    local n = drafts_on(round, file.path)
    if n > 0 then
      notes[#notes + 1] = plural(n, "draft")
    end
    local line = (STATUS[file.status] or "?") .. "  " .. name
    if #notes > 0 then
      line = line .. "  (" .. table.concat(notes, ", ") .. ")"
    end
    if view.path == file.path then
      line = line .. "  <"
    end
    lines[#lines + 1] = line
    view.lines[#lines] = file.path
  end
  set_lines(view.list_buf, lines)
end

local function win_ok(win)
  return win and api.nvim_win_is_valid(win)
end

-- Makes sure the round's tab has its three windows (a person may have closed some).
local function ensure_windows(view)
  if not api.nvim_tabpage_is_valid(view.tab) then
    vim.cmd("tabnew")
    view.tab = api.nvim_get_current_tabpage()
    view.list_win = api.nvim_get_current_win()
    view.left_win, view.right_win = nil, nil
  end
  api.nvim_set_current_tabpage(view.tab)
  if not win_ok(view.list_win) then
    api.nvim_set_current_win(api.nvim_tabpage_list_wins(view.tab)[1])
    vim.cmd("topleft vsplit")
    view.list_win = api.nvim_get_current_win()
  end
  api.nvim_win_set_buf(view.list_win, view.list_buf)
  if not win_ok(view.left_win) or not win_ok(view.right_win) then
    for _, win in ipairs({ view.left_win, view.right_win }) do
      if win_ok(win) then
        api.nvim_win_close(win, true)
      end
    end
    api.nvim_set_current_win(view.list_win)
    vim.cmd("rightbelow vsplit")
    view.left_win = api.nvim_get_current_win()
    vim.cmd("rightbelow vsplit")
    view.right_win = api.nvim_get_current_win()
  end
  api.nvim_win_set_width(view.list_win, math.min(45, math.floor(vim.o.columns / 4) + 10))
  vim.wo[view.list_win].winfixwidth = true
  vim.wo[view.list_win].wrap = false
  vim.wo[view.list_win].number = false
end

-- Shows `path` of round `id` as a diff in the round's tab; the cursor goes to the right side.
function M.open_file(id, path)
  local round, view = M.rounds[id], views[id]
  local file = round and file_of(round, path)
  if not file or not view then
    return fail("no file " .. tostring(path) .. " in round " .. tostring(id))
  end
  ensure_windows(view)
  local left = buffer_for(round, file, view.mode == "since" and "previous" or "old")
  local right = buffer_for(round, file, "new")
  for _, pair in ipairs({ { view.left_win, left }, { view.right_win, right } }) do
    api.nvim_win_call(pair[1], function()
      vim.cmd("diffoff")
    end)
    api.nvim_win_set_buf(pair[1], pair[2])
  end
  for _, win in ipairs({ view.left_win, view.right_win }) do
    api.nvim_win_call(win, function()
      vim.cmd("diffthis")
    end)
  end
  view.path = path
  draw_buffer(round, left)
  draw_buffer(round, right)
  M.render_list(id)
  for lnum, p in pairs(view.lines) do
    if p == path then
      api.nvim_win_set_cursor(view.list_win, { lnum, 0 })
    end
  end
  api.nvim_set_current_win(view.right_win)
end

-- ]f / [f in a diff buffer: the next (or previous) file of the list.
function M.next_file(id, step)
  local round, view = M.rounds[id], views[id]
  if not round or not view then
    return
  end
  local files = round.files or {}
  for i, file in ipairs(files) do
    if file.path == view.path then
      local next_one = files[i + step]
      if next_one then
        return M.open_file(id, next_one.path)
      end
      return info(step > 0 and "that was the last file" or "that was the first file")
    end
  end
end

-- The file a person starts on: the first that changed (since the previous round, in that view).
local function first_file(round, mode)
  for _, file in ipairs(round.files or {}) do
    if not unchanged_since(round, file) then
      return file.path
    end
  end
  if mode == "since" then
    return nil
  end
  return round.files and round.files[1] and round.files[1].path
end

-- Switches round `id` between the whole change and the changes since the previous round.
function M.toggle(id)
  local round, view = M.rounds[id], views[id]
  if not round or not view then
    return
  end
  if not previous_round(round) then
    return info("round " .. tostring(round.round) .. " is the first: there is no earlier round to compare with")
  end
  view.mode = view.mode == "since" and "all" or "since"
  local path = view.path or first_file(round, view.mode)
  if path then
    M.open_file(id, path)
  else
    M.render_list(id)
  end
end

local function list_buffer(id)
  local buf, fresh = scratch(id, "list", SCHEME .. id)
  if fresh then
    vim.bo[buf].filetype = "parley-round"
    vim.keymap.set("n", "<CR>", function()
      local view = views[id]
      local path = view and view.lines[api.nvim_win_get_cursor(0)[1]]
      if path then
        M.open_file(id, path)
      end
    end, { buffer = buf, desc = "Parley: open this file's diff" })
    vim.keymap.set("n", "s", function()
      M.toggle(id)
    end, { buffer = buf, desc = "Parley: the whole change / changes since the last round" })
    vim.keymap.set("n", "q", function()
      local view = views[id]
      if view and api.nvim_tabpage_is_valid(view.tab) and #api.nvim_list_tabpages() > 1 then
        vim.cmd("tabclose " .. api.nvim_tabpage_get_number(view.tab))
      else
        -- The last tab cannot close: drop the round's buffers instead (the daemon keeps the drafts).
        close(id)
      end
    end, { buffer = buf, desc = "Parley: close the round's tab (the drafts stay)" })
  end
  return buf
end

-- Shows `round` (a round/get answer) in its tab, in `mode` ("all" or "since").
local function show(round, mode)
  local id = round.review_id
  local known = M.rounds[id]
  if known and known.round ~= round.round then
    -- A later round of the same review: its texts differ, start over.
    close(id)
  end
  M.rounds[id] = round
  if mode == "since" and not previous_round(round) then
    info("round " .. tostring(round.round) .. " is the first: showing the whole change")
    mode = "all"
  end
  local view = views[id]
  local empty = nil
  if not view then
    vim.cmd("tabnew")
    empty = api.nvim_get_current_buf()
    view = { tab = api.nvim_get_current_tabpage(), list_win = api.nvim_get_current_win(), lines = {} }
    views[id] = view
  end
  view.list_buf = list_buffer(id)
  view.mode = mode or view.mode or "all"
  ensure_windows(view)
  -- The empty buffer :tabnew made is not wanted.
  if empty and api.nvim_buf_is_valid(empty) and api.nvim_buf_get_name(empty) == "" and #vim.fn.win_findbuf(empty) == 0 then
    pcall(api.nvim_buf_delete, empty, {})
  end
  local path = first_file(round, view.mode)
  if view.path and file_of(round, view.path) then
    path = view.path
  end
  if path then
    M.open_file(id, path)
  else
    M.render_list(id)
    api.nvim_set_current_win(view.list_win)
    info("no file of round " .. tostring(round.round) .. " changed since round " .. tostring(previous_round(round)))
  end
  return view
end

-- The round the current buffer belongs to (a diff buffer, the file list, a draft editor, the drafts list).
local function current_id()
  local buf = api.nvim_get_current_buf()
  if buffer_info[buf] then
    return buffer_info[buf].review_id
  end
  for id, list in pairs(buffers) do
    for _, b in pairs(list) do
      if b == buf then
        return id
      end
    end
  end
  if vim.bo[buf].buftype == "quickfix" then
    local qf = vim.fn.getqflist({ context = 0, idx = 0 })
    local context = type(qf.context) == "table" and qf.context or {}
    if context.parley_drafts then
      return context.parley_drafts.review_id
    end
    if context.parley_inbox then
      local entry = context.parley_inbox[vim.fn.line(".")]
      return entry and entry.review_id
    end
  end
  return nil
end

-- The round a command without an id means: the current buffer's, else the newest waiting one.
local function default_id()
  local id = current_id()
  if id then
    return id
  end
  local newest = M.waiting_list()[1]
  return newest and newest.review_id
end

-- Fetches round `id` (a full id, a unique prefix or a `-001` tail) and calls `next(round)`.
local function fetch(id, next)
  rpc.request("round/get", { review_id = id }, function(err, round)
    if err then
      return fail(tostring(err))
    end
    if type(round) ~= "table" or not round.review_id then
      return fail("the daemon sent no round for " .. id)
    end
    next(round)
  end)
end

-- :ParleyReviewRound [ID] [since] — opens a round (without ID: this buffer's, else the newest waiting one).
function M.review(args)
  local id, mode = nil, nil
  for _, word in ipairs(vim.split(vim.trim(args or ""), "%s+", { trimempty = true })) do
    if word == "since" or word == "all" then
      mode = word
    elseif not id then
      id = word
    else
      return fail(":ParleyReviewRound takes a review id and `since` or `all`, not " .. word)
    end
  end
  id = id or default_id()
  if not id then
    return info("no review round waits for you here (:ParleyInbox lists what does)")
  end
  fetch(id, function(round)
    show(round, mode or (views[round.review_id] and views[round.review_id].mode) or "all")
  end)
end

--------------------------------------------------------------------------
-- Drafts

-- Puts `draft` into round `id` (a new one, or the new text of one we have).
local function keep_draft(id, draft)
  local round = M.rounds[id]
  if not round or type(draft) ~= "table" then
    return
  end
  round.drafts = round.drafts or {}
  for i, known in ipairs(round.drafts) do
    if known.id == draft.id then
      round.drafts[i] = draft
      return redraw(id)
    end
  end
  table.insert(round.drafts, draft)
  redraw(id)
end

local SEVERITIES = { critical = true, major = true, minor = true, suggestion = true }

-- A comment may start with its severity in brackets: "[major] Check the length".
-- Without one, the daemon takes it from the verdict.
function M.split_severity(text)
  local tag, rest = text:match("^%s*%[(%a+)%]%s*(.*)$")
  if tag and SEVERITIES[tag:lower()] and rest ~= "" then
    return tag:lower(), rest
  end
  return nil, text
end

local function send_draft(params, on_saved)
  local severity, body = M.split_severity(params.body)
  params = vim.tbl_extend("force", params, { body = body, severity = severity or params.severity })
  rpc.request("round/comment", params, function(err, result)
    if err then
      return fail("the draft was not saved: " .. tostring(err))
    end
    local draft = type(result) == "table" and result.draft or nil
    keep_draft(params.review_id, draft)
    if M.waiting[params.review_id] and M.rounds[params.review_id] then
      M.waiting[params.review_id].drafts = #M.rounds[params.review_id].drafts
    end
    if on_saved then
      on_saved(draft)
    end
  end)
end

-- Splits a draft editor's text into the comment and the suggestion (a
-- ```suggestion fenced block, as on a pull request).
function M.parse_draft(lines)
  lines = vim.list_extend({}, lines)
  if lines[1] and lines[1]:match("^<!%-%-.*%-%->%s*$") then
    table.remove(lines, 1)
  end
  local body, suggestion = {}, nil
  local i = 1
  while i <= #lines do
    if suggestion == nil and lines[i]:match("^```suggestion%s*$") then
      local close_at = nil
      for j = #lines, i + 1, -1 do
        if lines[j]:match("^```%s*$") then
          close_at = j
          break
        end
      end
      if close_at then
        suggestion = table.concat(vim.list_slice(lines, i + 1, close_at - 1), "\n")
        i = close_at + 1
      else
        body[#body + 1] = lines[i]
        i = i + 1
      end
    else
      body[#body + 1] = lines[i]
      i = i + 1
    end
  end
  return vim.trim(table.concat(body, "\n")), suggestion
end

-- Opens a small buffer to write a draft in; `:w` saves it (round/comment) and closes it.
-- `target`: { review_id, path, side, start_line, end_line, draft_id? }.
local function compose(target, body, suggestion)
  local id = target.review_id
  local where = string.format("%s:%d-%d", target.path, target.start_line + 1, target.end_line + 1)
  local key = "draft/" .. target.side .. "/" .. where .. (target.draft_id and ("#" .. target.draft_id) or "")
  local buf = scratch(id, key, SCHEME .. id .. "/draft/" .. target.side .. "/" .. where)
  vim.bo[buf].buftype = "acwrite"
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].filetype = "markdown"
  local lines = {
    string.format("<!-- comment on %s (%s side); :w saves the draft, :q! drops it -->", where, target.side),
  }
  vim.list_extend(lines, vim.split(body or "", "\n", { plain = true }))
  if suggestion then
    lines[#lines + 1] = "```suggestion"
    vim.list_extend(lines, vim.split(suggestion, "\n", { plain = true }))
    lines[#lines + 1] = "```"
  end
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modified = false
  api.nvim_create_autocmd("BufWriteCmd", {
    buffer = buf,
    callback = function()
      local text, suggested = M.parse_draft(api.nvim_buf_get_lines(buf, 0, -1, false))
      if text == "" then
        return fail("write the comment above the suggestion first (an empty comment is not saved)")
      end
      local params = vim.tbl_extend("force", target, { body = text, suggestion = suggested })
      send_draft(params, function()
        if api.nvim_buf_is_valid(buf) then
          vim.bo[buf].modified = false
          for _, win in ipairs(vim.fn.win_findbuf(buf)) do
            if #api.nvim_tabpage_list_wins(api.nvim_win_get_tabpage(win)) > 1 then
              api.nvim_win_close(win, true)
            end
          end
          wipe(buf)
        end
      end)
    end,
  })
  vim.keymap.set("n", "q", "<Cmd>close!<CR>", { buffer = buf, desc = "Parley: drop this draft" })
  vim.cmd("belowright " .. math.max(4, math.min(#lines + 2, 12)) .. "split")
  api.nvim_win_set_buf(0, buf)
  api.nvim_win_set_cursor(0, { math.min(2, #lines), 0 })
  return buf
end

-- Where a comment command applies: the round, file, side and lines of the current diff buffer.
local function target_here(opts)
  local buf = api.nvim_get_current_buf()
  local at = buffer_info[buf]
  if not at or at.kind == "list" then
    return nil, "run this in a diff buffer of a round (:ParleyReviewRound opens one)"
  end
  if at.kind == "previous" then
    return nil,
      "the left side here is the previous round's text; comment on the right side, or on removed lines in the whole change (s in the file list)"
  end
  if not at.side then
    return nil, "this side has no lines to comment on (the file is added, deleted, binary or too large)"
  end
  local line1 = opts.range > 0 and opts.line1 or api.nvim_win_get_cursor(0)[1]
  local line2 = opts.range > 0 and opts.line2 or line1
  return {
    review_id = at.review_id,
    path = at.path,
    side = at.side,
    start_line = line1 - 1,
    end_line = line2 - 1,
  }
end

-- :[range]ParleyRoundComment [text] — a draft on the lines; without text, an editor for it.
function M.comment(opts)
  local target, why = target_here(opts)
  if not target then
    return fail(why)
  end
  local text = vim.trim(opts.args or "")
  if text ~= "" then
    send_draft(vim.tbl_extend("force", target, { body = text }))
  else
    compose(target, "", nil)
  end
end

-- :[range]ParleyRoundSuggest [text] — an editor with the lines as the suggestion to edit.
function M.suggest(opts)
  local target, why = target_here(opts)
  if not target then
    return fail(why)
  end
  local lines = api.nvim_buf_get_lines(0, target.start_line, target.end_line + 1, false)
  compose(target, vim.trim(opts.args or ""), table.concat(lines, "\n"))
end

-- The draft under the cursor in a diff buffer (the narrowest), or on a :ParleyRoundDrafts entry.
local function draft_here()
  local buf = api.nvim_get_current_buf()
  if vim.bo[buf].buftype == "quickfix" then
    local qf = vim.fn.getqflist({ context = 0 })
    local context = type(qf.context) == "table" and qf.context.parley_drafts
    if context then
      local round = M.rounds[context.review_id]
      local wanted = context.ids[vim.fn.line(".")]
      for _, draft in ipairs(round and round.drafts or {}) do
        if draft.id == wanted then
          return context.review_id, draft
        end
      end
    end
    return nil
  end
  local at = buffer_info[buf]
  local round = at and M.rounds[at.review_id]
  if not round then
    return nil
  end
  local row = api.nvim_win_get_cursor(0)[1] - 1
  local best = nil
  for _, draft in ipairs(round.drafts or {}) do
    if draft.path == at.path and draft.side == at.side and row >= draft.start_line and row <= draft.end_line then
      if not best or (draft.end_line - draft.start_line) <= (best.end_line - best.start_line) then
        best = draft
      end
    end
  end
  return at.review_id, best
end

-- :ParleyRoundUncomment — removes the draft under the cursor.
function M.uncomment()
  local id, draft = draft_here()
  if not draft then
    return fail("no draft under the cursor (:ParleyRoundDrafts lists them)")
  end
  rpc.request("round/uncomment", { review_id = id, draft_id = draft.id }, function(err)
    if err then
      return fail("the draft was not removed: " .. tostring(err))
    end
    local round = M.rounds[id]
    if round then
      round.drafts = vim.tbl_filter(function(d)
        return d.id ~= draft.id
      end, round.drafts or {})
      redraw(id)
    end
  end)
end

-- :ParleyRoundEdit — edits the draft under the cursor in a draft editor.
function M.edit()
  local id, draft = draft_here()
  if not draft then
    return fail("no draft under the cursor (:ParleyRoundDrafts lists them)")
  end
  local target = {
    review_id = id,
    path = draft.path,
    side = draft.side,
    start_line = draft.start_line,
    end_line = draft.end_line,
    draft_id = draft.id,
  }
  local severity = value(draft.severity)
  compose(target, (severity and ("[" .. severity .. "] ") or "") .. draft.body, value(draft.suggestion))
end

-- :ParleyRoundDrafts — the drafts of the current (or newest) round in the quickfix list.
function M.drafts_to_quickfix(id)
  id = id or current_id() or default_id()
  if not id then
    return info("no review round waits for you here (:ParleyInbox lists what does)")
  end
  local function fill(round)
    M.rounds[round.review_id] = round
    local items, ids = {}, {}
    -- A copy of the list (vim.deepcopy cannot copy the vim.NIL in it on Neovim 0.7).
    local drafts = vim.list_extend({}, round.drafts or {})
    table.sort(drafts, function(a, b)
      if a.path ~= b.path then
        return a.path < b.path
      end
      if a.side ~= b.side then
        return a.side > b.side
      end
      return a.start_line < b.start_line
    end)
    for _, draft in ipairs(drafts) do
      local file = file_of(round, draft.path)
      local buf = file and buffer_for(round, file, draft.side)
      local severity = value(draft.severity)
      local text = "[" .. draft.side .. "] " .. (severity and (severity .. ": ") or "") .. first_line(draft.body)
      if value(draft.suggestion) then
        text = text .. " [suggests a change]"
      end
      items[#items + 1] = {
        bufnr = buf,
        lnum = draft.start_line + 1,
        end_lnum = draft.end_line + 1,
        col = 1,
        text = text,
        valid = 1,
      }
      ids[#items] = draft.id
    end
    vim.fn.setqflist({}, " ", {
      title = "Parley drafts of " .. round.review_id,
      items = items,
      context = { parley_drafts = { review_id = round.review_id, ids = ids } },
    })
    if #items == 0 then
      info("no drafts yet in review " .. round.review_id)
    end
    vim.cmd("botright copen")
  end
  if M.rounds[id] then
    fill(M.rounds[id])
  else
    fetch(id, fill)
  end
end

--------------------------------------------------------------------------
-- Verdicts

local function verdict_of(word)
  word = (word or ""):gsub("%-", "_")
  if word == "changes" then
    word = "request_changes"
  end
  for _, v in ipairs(VERDICTS) do
    if v == word then
      return v
    end
  end
  return nil
end

-- :ParleyRoundSubmit approve|request_changes|comment [summary]
function M.submit(args)
  local word, summary = vim.trim(args or ""):match("^(%S+)%s*(.*)$")
  local verdict = verdict_of(word)
  if not verdict then
    return fail(":ParleyRoundSubmit takes approve, request_changes or comment, then an optional summary")
  end
  local id = default_id()
  if not id then
    return info("no review round waits for you here (:ParleyInbox lists what does)")
  end
  local params = { review_id = id, verdict = verdict }
  if summary and summary ~= "" then
    params.summary = summary
  end
  -- round/changed may come before the answer: it is ours, and needs no message.
  submitted_here[id] = true
  rpc.request("round/submit", params, function(err, result)
    if err then
      submitted_here[id] = nil
      return fail("the review was not submitted: " .. tostring(err))
    end
    result = type(result) == "table" and result or {}
    local full = result.review_id or id
    local review = type(result.review) == "table" and result.review or {}
    -- The line comments (the summary travels as a general comment of its own).
    local comments = #vim.tbl_filter(function(c)
      return c.type ~= "general"
    end, review.comments or {})
    local opened = #(result.threads or {})
    local message = string.format(
      "review %s, round %s: %s sent (%s; %s opened on the code)",
      full,
      tostring(result.round or "?"),
      tostring(value(result.verdict) or verdict),
      plural(comments, "comment"),
      plural(opened, "thread")
    )
    for _, warning in ipairs(result.warnings or {}) do
      message = message .. "\n" .. tostring(warning)
    end
    info(message)
    M.waiting[full] = nil
    close(full)
  end)
end

--------------------------------------------------------------------------
-- Keeping up with the daemon

local function on_changed(params)
  if type(params) ~= "table" or not params.review_id then
    return
  end
  local id = params.review_id
  local round = M.rounds[id]
  local same_round = not round or not params.round or tonumber(params.round) == tonumber(round.round)
  if params.state == "drafts" then
    if M.waiting[id] then
      M.waiting[id].drafts = #(params.drafts or {})
    end
    if round and same_round then
      round.drafts = params.drafts or {}
      redraw(id)
    end
    return
  end
  -- submitted or cancelled: the round no longer waits.
  local waiting = M.waiting[id]
  if waiting and (not params.round or tonumber(params.round) == tonumber(waiting.round)) then
    M.waiting[id] = nil
  end
  if not same_round then
    return
  end
  local was_open = round ~= nil or views[id] ~= nil
  close(id)
  if submitted_here[id] then
    submitted_here[id] = nil
    return
  end
  if config.options.notify and (was_open or waiting) then
    if params.state == "cancelled" then
      info("review " .. id .. " was cancelled by the agent")
    else
      local verdict = value(params.verdict)
      info("review " .. id .. " was submitted" .. (verdict and (" (" .. verdict .. ")") or "") .. " elsewhere")
    end
  end
end

local function workspaces()
  local ok, parley = pcall(require, "parley")
  if ok and parley.workspaces then
    return parley.workspaces()
  end
  return { (vim.uv or vim.loop).cwd() }
end

-- Asks the daemon what waits on a person in this window's folders; `done(err)` after.
function M.refresh(done)
  local folders = workspaces()
  local rounds, threads, seen, left, failure = {}, {}, {}, #folders, nil
  for _, folder in ipairs(folders) do
    rpc.request("inbox", { workspace = folder }, function(err, result)
      if err then
        failure = err
      elseif type(result) == "table" then
        for _, w in ipairs(result.rounds or {}) do
          rounds[w.review_id] = w
        end
        for _, t in ipairs(result.threads or {}) do
          if not seen[t.id] then
            seen[t.id] = true
            threads[#threads + 1] = t
          end
        end
      end
      left = left - 1
      if left > 0 then
        return
      end
      if not failure then
        M.waiting = rounds
        M.inbox_threads = threads
        for _, w in pairs(rounds) do
          announce(w)
        end
        -- Rounds open here that no longer wait were submitted or cancelled meanwhile.
        for id in pairs(vim.tbl_extend("force", {}, M.rounds, views)) do
          if not rounds[id] then
            close(id)
          end
        end
      end
      if done then
        done(failure)
      end
    end)
  end
end

-- After a reconnect: refetch the open rounds, whose drafts may have changed meanwhile.
local function catch_up()
  M.refresh(function(err)
    if err then
      return
    end
    for id in pairs(views) do
      if M.waiting[id] then
        rpc.request("round/get", { review_id = id }, function(gerr, round)
          if not gerr and type(round) == "table" and M.rounds[id] and round.round == M.rounds[id].round then
            M.rounds[id].drafts = round.drafts or {}
            M.rounds[id].earlier = round.earlier or {}
            redraw(id)
          end
        end)
      end
    end
  end)
end

local function latest_time(thread)
  local comments = thread.comments or {}
  local latest = comments[#comments]
  return (latest and latest.created_at) or thread.updated_at or thread.created_at or ""
end

-- :ParleyInbox — the rounds waiting on you, then the threads waiting on your answer, each newest first.
function M.inbox()
  M.refresh(function(err)
    if err then
      fail("the inbox could not be read: " .. tostring(err) .. " (showing what this window knew)")
    end
    local items, context = {}, {}
    for _, w in ipairs(M.waiting_list()) do
      local files = #(w.files or {})
      local drafts = tonumber(w.drafts) or 0
      local text = string.format(
        "review %s round %s · %s: %s (%s%s) — :ParleyReviewRound %s",
        w.review_id,
        tostring(w.round),
        value(w.asked_by) or "an agent",
        first_line(w.summary),
        plural(files, "file"),
        drafts > 0 and (", " .. plural(drafts, "draft")) or "",
        w.review_id
      )
      items[#items + 1] = { text = text, valid = 0 }
      context[#items] = { review_id = w.review_id }
    end
    local list = vim.list_extend({}, M.inbox_threads)
    table.sort(list, function(a, b)
      return latest_time(a) > latest_time(b)
    end)
    for _, t in ipairs(list) do
      local comments = t.comments or {}
      local latest = comments[#comments] or {}
      local range = t.range or { start = { line = 0, character = 0 } }
      items[#items + 1] = {
        filename = t.file,
        lnum = range.start.line + 1,
        col = range.start.character + 1,
        text = "thread · " .. tostring(latest.author or "?") .. ": " .. first_line(latest.body),
        valid = 1,
      }
      context[#items] = { thread_id = t.id }
    end
    vim.fn.setqflist({}, " ", { title = "Parley inbox", items = items, context = { parley_inbox = context } })
    if #items == 0 then
      info("nothing waits for you: no review round, no thread to answer")
    end
    vim.cmd("botright copen")
    -- <CR> on a round opens it; on a thread, the quickfix list's own jump.
    vim.keymap.set("n", "<CR>", function()
      local qf = vim.fn.getqflist({ context = 0 })
      local entries = type(qf.context) == "table" and qf.context.parley_inbox
      local line = vim.fn.line(".")
      local entry = entries and entries[line]
      if entry and entry.review_id then
        vim.cmd("wincmd p")
        M.review(entry.review_id)
      else
        vim.cmd(line .. "cc")
      end
    end, { buffer = api.nvim_get_current_buf(), desc = "Parley: open the round or thread" })
  end)
end

-- The number of rounds waiting on this window's person, for :ParleyStatus.
function M.count()
  return vim.tbl_count(M.waiting)
end

local attached = false

-- Registers the handlers; called from setup() (once is enough).
function M.attach()
  if attached then
    return
  end
  attached = true
  rpc.notification_handlers["round/requested"] = on_requested
  rpc.notification_handlers["round/changed"] = on_changed
  rpc.on("connect", catch_up)
end

M.verdicts = VERDICTS

return M
