-- A round opens in a tab of its own: a file list on the left, and for the
-- file picked there a diff of two read-only scratch buffers, the base
-- (`before`) or the previous round's text (`previous`) on the left, the
-- agent's text (`after`) on the right. `s` in the list switches between the
-- whole change and the changes since the previous round; `]f` and `[f` in a
-- diff go through the files.

local model = require("parley.rounds.model")
local buffers = require("parley.rounds.buffers")
local rpc = require("parley.rpc")

local api = vim.api
local value, fail, info = model.value, model.fail, model.info
local SCHEME = buffers.SCHEME
local M = {}

-- review_id → { tab, list_win, left_win, right_win, list_buf, mode = "all"|"since", path, lines = lnum → path }.
local views = {}

-- The view of round `id`, or nil when it has no tab here.
function M.of(id)
  return views[id]
end

-- The ids of the rounds with a tab here.
function M.open_ids()
  return vim.tbl_keys(views)
end

-- Closes everything of round `id`: its tab, its diff buffers, its draft editors.
function M.close(id)
  local view = views[id]
  views[id] = nil
  if view and api.nvim_tabpage_is_valid(view.tab) and #api.nvim_list_tabpages() > 1 then
    local number = api.nvim_tabpage_get_number(view.tab)
    pcall(vim.cmd, "tabclose " .. number)
  end
  buffers.wipe_round(id)
  model.rounds[id] = nil
end

-- The diff buffer showing `kind` ("old", "new" or "previous") of `file`, made when needed.
function M.buffer_for(round, file, kind)
  local id = round.review_id
  local path = (kind == "old" and value(file.old_path)) or file.path
  local buf, fresh = buffers.scratch(id, kind .. "/" .. file.path, SCHEME .. id .. "/" .. kind .. "/" .. path)
  local lines, side = buffers.side_text(file, kind)
  buffers.set_info(buf, { review_id = id, path = file.path, kind = kind, side = side })
  if fresh then
    buffers.set_lines(buf, lines)
    buffers.detect_filetype(buf, path)
    vim.keymap.set("n", "]f", function()
      M.next_file(id, 1)
    end, { buffer = buf, desc = "Parley: the round's next file" })
    vim.keymap.set("n", "[f", function()
      M.next_file(id, -1)
    end, { buffer = buf, desc = "Parley: the round's previous file" })
  end
  return buf
end

-- Redraws round `id`: the marks on its diff buffers and the file list.
function M.redraw(id)
  local round = model.rounds[id]
  if not round then
    return
  end
  for key, buf in pairs(buffers.of_round(id)) do
    if api.nvim_buf_is_valid(buf) and buffers.info(buf) and key ~= "list" then
      buffers.draw(round, buf)
    end
  end
  if views[id] then
    M.render_list(id)
  end
end

--------------------------------------------------------------------------
-- The file list

local STATUS = { modified = "M", added = "A", deleted = "D", renamed = "R" }

-- Fills the file list of round `id`: a header, then one line per file with its status.
function M.render_list(id)
  local round, view = model.rounds[id], views[id]
  if not round or not view or not api.nvim_buf_is_valid(view.list_buf) then
    return
  end
  local previous = model.previous_round(round)
  local lines = {
    "Review " .. id .. ", round " .. tostring(round.round) .. " · asked by " .. (value(round.asked_by) or "an agent"),
    model.first_line(round.summary),
  }
  if model.is_plan(round) then
    lines[1] = "Plan " .. tostring(round.round) .. " of " .. (value(round.asked_by) or "an agent") .. " · review " .. id
    lines[2] = model.plan_title(round.summary)
  end
  if model.is_plan(round) and view.mode == "since" then
    lines[#lines + 1] = "Changes since plan " .. previous .. " (s: the whole plan)"
  elseif model.is_plan(round) then
    lines[#lines + 1] = previous and ("The whole plan (s: changes since plan " .. previous .. ")") or "The whole plan"
  elseif view.mode == "since" then
    lines[#lines + 1] = "Changes since round " .. previous .. " (s: the whole change)"
  elseif previous then
    lines[#lines + 1] = "The whole change (s: changes since round " .. previous .. ")"
  else
    lines[#lines + 1] = "The whole change"
  end
  local drafts = #(round.drafts or {})
  if model.is_plan(round) then
    lines[#lines + 1] = model.plural(drafts, "draft") .. " · <CR> opens the plan · :ParleyRoundSubmit approve|request_changes sends"
  else
    lines[#lines + 1] = model.plural(drafts, "draft") .. " · <CR> opens a file · :ParleyRoundSubmit sends"
  end
  lines[#lines + 1] = ""
  view.lines = {}
  for _, file in ipairs(round.files or {}) do
    local name = file.path
    if file.status == "renamed" and value(file.old_path) then
      name = file.old_path .. " → " .. file.path
    end
    local notes = {}
    if model.unchanged_since(round, file) then
      notes[#notes + 1] = "unchanged since round " .. previous
    elseif view.mode == "since" and value(file.previous) == nil and not file.binary and not file.too_large then
      notes[#notes + 1] = "new since round " .. previous
    end
    if file.binary then
      notes[#notes + 1] = "binary"
    elseif file.too_large then
      notes[#notes + 1] = "too large"
    end
    local n = model.drafts_on(round, file.path)
    if n > 0 then
      notes[#notes + 1] = model.plural(n, "draft")
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
  buffers.set_lines(view.list_buf, lines)
end

local function list_buffer(id)
  local buf, fresh = buffers.scratch(id, "list", SCHEME .. id)
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
        M.close(id)
      end
    end, { buffer = buf, desc = "Parley: close the round's tab (the drafts stay)" })
  end
  return buf
end

--------------------------------------------------------------------------
-- The tab and its diff

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
  local round, view = model.rounds[id], views[id]
  local file = round and model.file_of(round, path)
  if not file or not view then
    return fail("no file " .. tostring(path) .. " in round " .. tostring(id))
  end
  ensure_windows(view)
  local left = M.buffer_for(round, file, view.mode == "since" and "previous" or "old")
  local right = M.buffer_for(round, file, "new")
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
  buffers.draw(round, left)
  buffers.draw(round, right)
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
  local round, view = model.rounds[id], views[id]
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
    if not model.unchanged_since(round, file) then
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
  local round, view = model.rounds[id], views[id]
  if not round or not view then
    return
  end
  if not model.previous_round(round) then
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

-- Shows `round` (a round/get answer) in its tab, in `mode` ("all" or "since").
local function show(round, mode)
  local id = round.review_id
  local known = model.rounds[id]
  if known and known.round ~= round.round then
    -- A later round of the same review: its texts differ, start over.
    M.close(id)
  end
  model.rounds[id] = round
  if mode == "since" and not model.previous_round(round) then
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
  if view.path and model.file_of(round, view.path) then
    path = view.path
  end
  if path then
    M.open_file(id, path)
  else
    M.render_list(id)
    api.nvim_set_current_win(view.list_win)
    info("no file of round " .. tostring(round.round) .. " changed since round " .. tostring(model.previous_round(round)))
  end
  return view
end

--------------------------------------------------------------------------
-- Which round a command means

-- The round the current buffer belongs to (a diff buffer, the file list, a draft editor, the drafts list).
function M.current_id()
  local buf = api.nvim_get_current_buf()
  local id = buffers.round_of(buf)
  if id then
    return id
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
function M.default_id()
  local id = M.current_id()
  if id then
    return id
  end
  local newest = model.waiting_list()[1]
  return newest and newest.review_id
end

-- Fetches round `id` (a full id, a unique prefix or a `-001` tail) and calls `next(round)`.
function M.fetch(id, next)
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
  id = id or M.default_id()
  if not id then
    return info("no review round waits for you here (:ParleyInbox lists what does)")
  end
  M.fetch(id, function(round)
    show(round, mode or (views[round.review_id] and views[round.review_id].mode) or "all")
  end)
end

return M
