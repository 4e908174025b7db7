-- Feedback threads in buffers: each open thread is an extmark over its text
-- (a sign, and its latest comment as virtual text) that moves with edits;
-- commands to comment on a selection, reply, resolve and list them.
--
-- Positions from the daemon are for the file on disk. A buffer with unsaved
-- changes keeps its marks where the edits moved them, and its text is sent
-- (buffer/changed, debounced) so the daemon re-anchors the threads in it.

local config = require("parley.config")
local deliveries = require("parley.deliveries")
local paths = require("parley.paths")
local rpc = require("parley.rpc")
local selection = require("parley.selection")

local api = vim.api
local uv = vim.uv or vim.loop
local M = {}

-- Open threads by id, as the daemon last described them.
M.threads = {}

local ns = api.nvim_create_namespace("parley_threads")
M.namespace = ns

-- One extmark id per thread, the same in every buffer, so a mark is updated in place.
local mark_of = {}
local thread_of = {}
local next_mark = 0

-- buf → { tick = changedtick the positions belong to, threads = id → thread positioned in the unsaved text }.
local views = {}
-- buf → debounce timer for buffer/changed.
local timers = {}
-- buf → the file's stat when the buffer last matched the disk (read or written).
local disk = {}

local function mark_id(id)
  if not mark_of[id] then
    next_mark = next_mark + 1
    mark_of[id] = next_mark
    thread_of[next_mark] = id
  end
  return mark_of[id]
end
M.mark_id = mark_id

-- Your login name as the system knows it (what `id -un` prints, and what the
-- daemon and the `parley` command line use), even where $USER is unset.
local function login_name()
  local ok, passwd = pcall(vim.loop.os_get_passwd)
  if ok and type(passwd) == "table" and passwd.username and passwd.username ~= "" then
    return passwd.username
  end
  return vim.env.LOGNAME or vim.env.USER
end

local function author()
  return config.options.author or login_name()
end

local function orphaned(thread)
  return thread.state == "orphaned" or thread.state == "unreadable" or thread.state == "stale"
end

local function file_of(thread)
  if not thread._canonical then
    thread._canonical = paths.canonical(thread.file)
  end
  return thread._canonical
end

local function first_line(text)
  return ((text or ""):match("^[^\n]*"))
end

-- "[orphaned] dana: Handle expired tokens [2]"
local function summary(thread, view)
  local comments = thread.comments or {}
  local latest = comments[#comments] or {}
  local prefix = ""
  if orphaned(view) then
    prefix = "[" .. view.state .. "] "
  elseif view.state == "modified" then
    prefix = "[changed] "
  end
  local count = #comments > 1 and (" [" .. #comments .. "]") or ""
  -- A walkthrough's comment says whose: the agent's guide it is a step of.
  local walkthrough = thread.walkthrough and (' (walkthrough "' .. (thread.walkthrough.title or "") .. '")') or ""
  -- A thread from a pull request says which, and how GitHub sees its lines.
  local github = ""
  if thread.github then
    github = " (GitHub " .. (thread.github.pull_request or "")
    if thread.github.side == "LEFT" then
      github = github .. ", removed lines"
    end
    if thread.github.outdated then
      github = github .. ", outdated"
    end
    github = github .. ")"
  end
  return prefix .. (latest.author or "?") .. ": " .. first_line(latest.body) .. count .. walkthrough .. github
end

-- Where the thread stands with the agents, when one has done something
-- with it since a person last commented: "seen by claude", "addressed by
-- claude"; for a thread with a message to an agent, where the newest stands
-- ("waiting for claude-1", "read by claude-1"). Nil for an open thread (and
-- from a daemon that does not say).
local function standing(thread)
  local delivery = deliveries.of_thread(thread)
  if delivery then
    return delivery
  end
  if thread.standing == "seen" then
    return "seen by " .. (thread.seen_by or "an agent")
  elseif thread.standing == "addressed" then
    return "addressed by " .. (thread.addressed_by or "an agent")
  end
  return nil
end

local function clamp(value, low, high)
  return math.max(low, math.min(value, high))
end

-- Draws `thread` in `buf`. With `range`, the mark goes there; without, it
-- stays where edits have moved it (false when there is no mark yet).
local function draw(buf, thread, range)
  local view = (views[buf] and views[buf].threads[thread.id]) or thread
  local id = mark_id(thread.id)
  local sr, sc, er, ec
  if range and orphaned(view) then
    sr, sc, er, ec = 0, 0, 0, 0
  elseif range then
    local count = api.nvim_buf_line_count(buf)
    sr = clamp(range.start.line, 0, count - 1)
    er = clamp(range["end"].line, sr, count - 1)
    local first = api.nvim_buf_get_lines(buf, sr, sr + 1, false)[1] or ""
    local last = api.nvim_buf_get_lines(buf, er, er + 1, false)[1] or ""
    sc = clamp(range.start.character, 0, #first)
    ec = clamp(range["end"].character, 0, #last)
    if er == sr and ec < sc then
      ec = sc
    end
  else
    local at = api.nvim_buf_get_extmark_by_id(buf, ns, id, { details = true })
    if not at or #at == 0 then
      return false
    end
    sr, sc = at[1], at[2]
    er, ec = at[3].end_row or sr, at[3].end_col or sc
  end
  local opts = {
    id = id,
    end_row = er,
    end_col = ec,
    right_gravity = false,
    end_right_gravity = true,
    sign_text = orphaned(view) and config.options.signs.orphaned or config.options.signs.thread,
    sign_hl_group = orphaned(view) and "ParleyOrphanedSign" or "ParleySign",
    hl_group = "ParleyRange",
  }
  if config.options.virtual_text then
    opts.virt_text = { { summary(thread, view), orphaned(view) and "ParleyOrphanedText" or "ParleyText" } }
    local stands = standing(thread)
    if stands then
      opts.virt_text[2] = { " · " .. stands, "ParleyStanding" }
    end
    opts.virt_text_pos = "eol"
  end
  api.nvim_buf_set_extmark(buf, ns, sr, sc, opts)
  return true
end

local function erase(id)
  local mark = mark_of[id]
  if not mark then
    return
  end
  for _, buf in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_is_loaded(buf) then
      pcall(api.nvim_buf_del_extmark, buf, ns, mark)
    end
    if views[buf] then
      views[buf].threads[id] = nil
    end
  end
end

local function stat_of(file)
  local st = file and uv.fs_stat(file)
  return st and { st.size, st.mtime.sec, st.mtime.nsec, st.ino } or nil
end

-- Whether the buffer holds the file's text as it is on disk: not modified,
-- and the file not changed since it was read (an agent may have written it).
local function matches_disk(buf)
  if vim.bo[buf].modified then
    return false
  end
  local now = stat_of(paths.of_buffer(buf))
  if not disk[buf] then
    disk[buf] = now
  end
  return vim.deep_equal(now, disk[buf])
end

local function threads_of(file)
  local found = {}
  for _, thread in pairs(M.threads) do
    if file_of(thread) == file then
      found[#found + 1] = thread
    end
  end
  return found
end

-- Sends the unsaved text of `buf` and places its threads where the daemon finds them in it.
function M.send_buffer(buf)
  local file = paths.of_buffer(buf)
  if not file or not rpc.connected() then
    return
  end
  local tick = api.nvim_buf_get_changedtick(buf)
  local lines = api.nvim_buf_get_lines(buf, 0, -1, false)
  local text = table.concat(lines, "\n")
  if vim.bo[buf].eol or vim.bo[buf].fixeol then
    text = text .. "\n"
  end
  rpc.request("buffer/changed", { path = file, text = text }, function(err, result)
    if err or type(result) ~= "table" or not api.nvim_buf_is_loaded(buf) then
      return
    end
    -- Typing went on meanwhile: these positions are for older text; another request follows.
    if api.nvim_buf_get_changedtick(buf) ~= tick then
      return
    end
    local seen = {}
    views[buf] = { tick = tick, threads = {} }
    for _, positioned in ipairs(result.threads or {}) do
      seen[positioned.id] = true
      views[buf].threads[positioned.id] = positioned
      draw(buf, M.threads[positioned.id] or positioned, positioned.range)
    end
    for _, thread in ipairs(threads_of(file)) do
      if not seen[thread.id] then
        pcall(api.nvim_buf_del_extmark, buf, ns, mark_id(thread.id))
      end
    end
  end)
end

-- Debounced send_buffer, for TextChanged and InsertLeave.
function M.buffer_edited(buf)
  local file = paths.of_buffer(buf)
  if not file or #threads_of(file) == 0 then
    return
  end
  local timer = timers[buf]
  if not timer then
    timer = uv.new_timer()
    timers[buf] = timer
  end
  timer:stop()
  timer:start(config.options.debounce_ms, 0, vim.schedule_wrap(function()
    if api.nvim_buf_is_loaded(buf) and vim.bo[buf].modified then
      M.send_buffer(buf)
    end
  end))
end

-- Shows `thread` (new or changed) in every buffer of its file. Where the
-- buffer's text is not the file's (unsaved edits, or the file changed on disk
-- since it was read), the mark stays where it is, or the daemon is asked
-- where the thread is in the buffer's text.
local function show(thread)
  for _, buf in ipairs(paths.buffers_of(file_of(thread))) do
    if matches_disk(buf) then
      if views[buf] then
        views[buf].threads[thread.id] = nil
      end
      draw(buf, thread, thread.range)
    elseif not draw(buf, thread, nil) then
      M.send_buffer(buf)
    elseif vim.bo[buf].modified then
      M.buffer_edited(buf)
    end
  end
end

-- Draws every thread of a buffer's file afresh (after it was read from disk).
function M.buffer_read(buf)
  local file = paths.of_buffer(buf)
  if not file then
    return
  end
  views[buf] = nil
  disk[buf] = stat_of(file)
  api.nvim_buf_clear_namespace(buf, ns, 0, -1)
  for _, thread in ipairs(threads_of(file)) do
    draw(buf, thread, thread.range)
  end
end

-- Drops what was kept for a buffer that is gone.
function M.forget(buf)
  if timers[buf] then
    timers[buf]:stop()
    timers[buf]:close()
    timers[buf] = nil
  end
  views[buf] = nil
  disk[buf] = nil
end

-- After :w the file on disk is the buffer: ask the daemon to re-anchor against it.
function M.buffer_written(buf)
  local file = paths.of_buffer(buf)
  disk[buf] = stat_of(file)
  if not file or #threads_of(file) == 0 then
    return
  end
  views[buf] = nil
  rpc.request("feedback/list", { path = file }, function(err, result)
    if err or type(result) ~= "table" then
      return
    end
    for _, thread in ipairs(result.threads or {}) do
      if M.threads[thread.id] then
        M.threads[thread.id] = thread
        show(thread)
      end
    end
  end)
end

local function tell_reply(thread)
  local latest = thread.comments and thread.comments[#thread.comments]
  if config.options.notify and latest and latest.author ~= author() then
    local where = thread.path .. ":" .. (thread.range.start.line + 1)
    local message = latest.author .. " replied on " .. where .. ": " .. first_line(latest.body)
    vim.notify("Parley: " .. message, vim.log.levels.INFO)
  end
end

-- Applies a feedback/changed event: created, replied, resolved, reopened,
-- moved or seen (an agent read it).
function M.apply(change, thread, live)
  if type(thread) ~= "table" or not thread.id then
    return
  end
  if thread.resolved then
    M.threads[thread.id] = nil
    erase(thread.id)
    return
  end
  M.threads[thread.id] = thread
  show(thread)
  if live and change == "replied" then
    tell_reply(thread)
  end
end

-- The agents at work changed: threads whose message waits for one that came
-- or went are drawn again (they say when it has gone).
function M.agents_changed()
  for _, thread in pairs(M.threads) do
    if deliveries.newest(thread) then
      show(thread)
    end
  end
end

-- Replaces every thread with `list` (the open threads of this window's folders).
function M.replace_all(list)
  local fresh = {}
  for _, thread in ipairs(list or {}) do
    fresh[thread.id] = thread
  end
  for id in pairs(M.threads) do
    if not fresh[id] then
      erase(id)
    end
  end
  M.threads = fresh
  for _, thread in pairs(fresh) do
    show(thread)
  end
end

-- Where a thread is now in the loaded buffer of its file (following unsaved
-- edits), else where the daemon says: { line, col, end_line, end_col }, 0-based.
local function live_range(thread)
  for _, buf in ipairs(paths.buffers_of(file_of(thread))) do
    local at = api.nvim_buf_get_extmark_by_id(buf, ns, mark_id(thread.id), { details = true })
    if at and #at > 0 then
      return at[1], at[2], at[3].end_row or at[1], at[3].end_col or at[2]
    end
  end
  local r = thread.range
  return r.start.line, r.start.character, r["end"].line, r["end"].character
end

-- The thread under the cursor (in a file, or on a :ParleyThreads quickfix entry).
function M.at_cursor()
  local buf = api.nvim_get_current_buf()
  if vim.bo[buf].buftype == "quickfix" then
    local info = vim.fn.getqflist({ context = 0, idx = 0 })
    local ids = type(info.context) == "table" and info.context.parley_threads
    local index = vim.fn.line(".")
    return ids and M.threads[ids[index]] or nil
  end
  local row = api.nvim_win_get_cursor(0)[1] - 1
  local best, best_span = nil, nil
  for _, mark in ipairs(api.nvim_buf_get_extmarks(buf, ns, 0, -1, { details = true })) do
    local start_row, details = mark[2], mark[4] or {}
    local end_row = details.end_row or start_row
    if row >= start_row and row <= end_row then
      local span = end_row - start_row
      local thread = M.threads[thread_of[mark[1]]]
      if thread and (not best_span or span < best_span) then
        best, best_span = thread, span
      end
    end
  end
  return best
end

local function fail(message)
  vim.notify("Parley: " .. message, vim.log.levels.ERROR)
end

-- Asks for text (or takes `given`), then calls `next(text)` with it.
local function with_text(prompt, given, next)
  if given and given ~= "" then
    return next(given)
  end
  vim.ui.input({ prompt = prompt }, function(text)
    if text and vim.trim(text) ~= "" then
      next(text)
    end
  end)
end

-- The text a command with a range is about: the visual selection when the
-- range is the one just selected, else the range's whole lines (the cursor's
-- line without a range). Nil, with what is wrong, when the buffer has no file.
function M.chosen(opts)
  local buf = api.nvim_get_current_buf()
  local file = paths.of_buffer(buf)
  if not file then
    return nil, "this buffer has no file on disk"
  end
  local chosen
  local s = api.nvim_buf_get_mark(buf, "<")
  local e = api.nvim_buf_get_mark(buf, ">")
  if opts.range == 2 and s[1] == opts.line1 and e[1] == opts.line2 then
    -- A block selection is not one range of text: comment on the text from its first to its last corner.
    local mode = vim.fn.visualmode()
    chosen = selection.marked(buf, mode == "\22" and "v" or mode)
  else
    local line1 = opts.range > 0 and opts.line1 or api.nvim_win_get_cursor(0)[1]
    local line2 = opts.range > 0 and opts.line2 or line1
    chosen = selection.from_positions(buf, line1, 0, line2, 0, "V")
  end
  if not chosen then
    return nil, "select some lines first"
  end
  return chosen
end

M.author = author
M.fail = fail
M.with_text = with_text

-- :ParleyComment — a thread on the selection (or the command's line range).
-- `opts` is what nvim_create_user_command passes: range, line1, line2, args.
function M.comment(opts)
  -- In a buffer with unsaved edits the daemon finds the selected text on
  -- disk, nearest the selection, and refuses text only the buffer has.
  local chosen, problem = M.chosen(opts)
  if not chosen then
    return fail("comment on a file: " .. problem)
  end
  with_text("Comment: ", opts.args, function(body)
    local params = {
      path = chosen.path,
      range = { start = chosen.start, ["end"] = chosen["end"] },
      text = chosen.text,
      body = body,
      author = author(),
    }
    rpc.request("feedback/create", params, function(err, result)
      if err then
        return fail("the comment was not saved: " .. err)
      end
      M.apply("created", result.thread, false)
    end)
  end)
end

local function target(id)
  if id and id ~= "" then
    local thread = M.threads[id]
    if not thread then
      fail("no open thread " .. id)
    end
    return thread
  end
  local thread = M.at_cursor()
  if not thread then
    fail("no thread under the cursor (:ParleyThreads lists them)")
  end
  return thread
end

-- :ParleyReply [text] — answers the thread under the cursor.
function M.reply(text)
  local thread = target(nil)
  if not thread then
    return
  end
  with_text("Reply: ", text, function(body)
    rpc.request("feedback/reply", { thread_id = thread.id, body = body, author = author() }, function(err, result)
      if err then
        return fail("the reply was not saved: " .. err)
      end
      M.apply("replied", result.thread, false)
    end)
  end)
end

-- :ParleyResolve [id] — marks the thread under the cursor (or `id`) addressed.
function M.resolve(id)
  local thread = target(id)
  if not thread then
    return
  end
  rpc.request("feedback/resolve", { thread_id = thread.id }, function(err, result)
    if err then
      return fail("the thread was not resolved: " .. err)
    end
    M.apply("resolved", result.thread, false)
  end)
end

-- Opens `url` in the browser: vim.ui.open (Neovim 0.10), else the system's
-- opener. Nil, or what went wrong.
local function open_url(url)
  if vim.ui.open then
    local _, err = vim.ui.open(url)
    return err
  end
  local opener = { "xdg-open", url }
  if vim.fn.has("mac") == 1 then
    opener = { "open", url }
  elseif vim.fn.has("win32") == 1 then
    opener = { "rundll32", "url.dll,FileProtocolHandler", url }
  end
  if vim.fn.executable(opener[1]) == 0 then
    return "there is no " .. opener[1] .. " to open it with"
  end
  if vim.fn.jobstart(opener, { detach = true }) <= 0 then
    return opener[1] .. " could not be started"
  end
  return nil
end

-- :ParleyOpenOnGitHub [id] — opens the pull request's thread the one under
-- the cursor (or `id`) came from, or was pushed to, in the browser.
function M.open_on_github(id)
  local thread = target(id)
  if not thread then
    return
  end
  local url = thread.github and thread.github.url or ""
  if url == "" then
    return fail("this thread is not on GitHub (`parley pr pull` brings a pull request's threads in, `parley pr push` sends this one)")
  end
  -- Only a web page: the opener (xdg-open, rundll32) would run anything else.
  if not url:match("^[Hh][Tt][Tt][Pp][Ss]?://") then
    return fail("this thread's link is not a web address, so it was not opened: " .. url)
  end
  local err = open_url(url)
  if err then
    fail("could not open " .. url .. ": " .. err)
  end
end

-- The quickfix items for every open thread, ordered by file then line;
-- orphaned threads are file-level entries marked [orphaned].
function M.items()
  local list = {}
  for _, thread in pairs(M.threads) do
    list[#list + 1] = thread
  end
  local entries = {}
  for _, thread in ipairs(list) do
    local line, col, end_line, end_col = live_range(thread)
    local entry = { thread = thread, filename = thread.file, text = summary(thread, thread) }
    if orphaned(thread) then
      entry.lnum = 0
      entry.text = entry.text .. " (was: " .. first_line(thread.original_quote) .. ")"
    else
      entry.lnum, entry.col, entry.end_lnum, entry.end_col = line + 1, col + 1, end_line + 1, end_col + 1
    end
    local stands = standing(thread)
    if stands then
      entry.text = entry.text .. " · " .. stands
    end
    entries[#entries + 1] = entry
  end
  table.sort(entries, function(a, b)
    if a.filename ~= b.filename then
      return a.filename < b.filename
    end
    return a.lnum < b.lnum
  end)
  return entries
end

-- :ParleyThreads — every open thread in the quickfix list.
function M.to_quickfix()
  local items, ids = {}, {}
  for i, entry in ipairs(M.items()) do
    ids[i] = entry.thread.id
    entry.thread = nil
    entry.valid = 1
    items[i] = entry
  end
  vim.fn.setqflist({}, " ", { title = "Parley threads", items = items, context = { parley_threads = ids } })
  if #items == 0 then
    vim.notify("Parley: no open threads", vim.log.levels.INFO)
  end
  vim.cmd("botright copen")
end

return M
