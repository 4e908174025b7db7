-- Walkthroughs agents present (present_walkthrough): a guided tour of a
-- change, shown in a markdown buffer of its own (:ParleyWalkthrough). Its
-- comments are feedback threads on the code (parley.threads draws them);
-- here they are listed with their lines, or with why they were not placed.
-- <CR> opens what is under the cursor: a comment's lines, a file reference,
-- a gitdiff block's `git diff`. ]w and [w (or :ParleyWalkthroughNext and
-- :ParleyWalkthroughPrev anywhere) go through the comments' places, opening
-- each in the code window. :ParleyWalkthroughAct N presses button N; the
-- button shows where its message to the agent stands as the daemon tells
-- (walkthrough/updated).
--
--   walkthroughs/render.lua  the buffer's lines, what <CR> does on each, the steps
--   walkthroughs/diff.lua    a gitdiff block as a `git diff` buffer

local config = require("parley.config")
local diff = require("parley.walkthroughs.diff")
local paths = require("parley.paths")
local render = require("parley.walkthroughs.render")
local rpc = require("parley.rpc")

local api = vim.api
local M = {}

local SCHEME = "parley://walkthrough/"

-- id → the walkthrough as the daemon last described it.
M.known = {}
-- The id of the walkthrough shown last: the one commands mean outside its buffer.
M.current_id = nil
-- id → the step moved to last (1-based), for ]w and [w.
local step_of = {}
-- buf → what render() made for it: { id, lines, targets, steps, blocks }.
local shown = {}

local function info(message)
  vim.notify("Parley: " .. message, vim.log.levels.INFO)
end

local function fail(message)
  vim.notify("Parley: " .. message, vim.log.levels.ERROR)
end

local function err_text(err)
  return tostring(type(err) == "table" and err.message or err)
end

-- How far a walkthrough's clicks have gone: states only move on, so a
-- description of the same revision with less progress is an older one.
local function progress(w)
  local rank = { waiting = 1, delivered = 2, read = 3 }
  local total = 0
  for _, block in ipairs(w.blocks or {}) do
    for _, click in ipairs(block.clicks or {}) do
      total = total + 1 + (rank[click.state] or 0)
    end
  end
  return total
end

-- id → the buffer showing it.
local buffers = {}

local function buffer_of(id)
  local buf = buffers[id]
  if buf and api.nvim_buf_is_valid(buf) then
    return buf
  end
  buffers[id] = nil
  return nil
end

-- The walkthrough the current buffer shows, else the one shown last, else
-- the newest that arrived.
local function current()
  local view = shown[api.nvim_get_current_buf()]
  local id = view and view.id or M.current_id
  if id and M.known[id] then
    return M.known[id]
  end
  local newest = nil
  for _, w in pairs(M.known) do
    if not newest or tostring(w.updated_at) > tostring(newest.updated_at) then
      newest = w
    end
  end
  return newest
end

-- Puts walkthrough `w` into `buf`, keeping every window's cursor where it was.
local function draw(buf, w)
  local made = render.render(w, require("parley.threads").threads)
  made.id = w.id
  shown[buf] = made
  local cursors = {}
  for _, win in ipairs(api.nvim_list_wins()) do
    if api.nvim_win_get_buf(win) == buf then
      cursors[win] = api.nvim_win_get_cursor(win)
    end
  end
  vim.bo[buf].modifiable = true
  api.nvim_buf_set_lines(buf, 0, -1, false, made.lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
  vim.b[buf].parley_walkthrough = w.id
  vim.b[buf].parley_revision = w.revision
  for win, cursor in pairs(cursors) do
    pcall(api.nvim_win_set_cursor, win, { math.min(cursor[1], #made.lines), cursor[2] })
  end
end

local function announce(w, known)
  if not config.options.notify then
    return
  end
  local what = known and ("updated its walkthrough (revision " .. tostring(w.revision) .. ")") or "presents a walkthrough"
  local hint = buffer_of(w.id) and "" or (" — :ParleyWalkthrough " .. w.id:sub(1, 8) .. " to read it")
  info(tostring(w.presented_by) .. " " .. what .. ": " .. tostring(w.title) .. hint)
end

-- Takes a walkthrough from the daemon (walkthrough/updated, or an answer);
-- `live` announces a new one or a new revision.
function M.update(w, live)
  if type(w) ~= "table" or not w.id then
    return
  end
  local known = M.known[w.id]
  if known then
    if (known.revision or 0) > (w.revision or 0) then
      return
    end
    if known.revision == w.revision and progress(w) < progress(known) then
      return
    end
  end
  M.known[w.id] = w
  local buf = buffer_of(w.id)
  if buf then
    draw(buf, w)
  end
  if live and (not known or known.revision ~= w.revision) then
    announce(w, known)
  end
end

-- A thread changed: the walkthrough listing it shows its replies again.
function M.thread_changed(thread)
  local mark = type(thread) == "table" and thread.walkthrough
  if type(mark) ~= "table" or not M.known[mark.id] then
    return
  end
  local buf = buffer_of(mark.id)
  if buf then
    draw(buf, M.known[mark.id])
  end
end

--------------------------------------------------------------------------
-- Opening code, diffs and steps

-- A window of the current tab for code: the one the person came from, else
-- any that shows no walkthrough, else a new split left of the walkthrough.
local function code_window()
  local here = api.nvim_get_current_win()
  local function usable(win)
    local buf = api.nvim_win_get_buf(win)
    return api.nvim_win_is_valid(win) and not shown[buf] and vim.bo[buf].buftype ~= "quickfix"
      and api.nvim_win_get_config(win).relative == ""
  end
  if usable(here) then
    return here
  end
  local previous = vim.fn.win_getid(vim.fn.winnr("#"))
  if previous ~= 0 and previous ~= here and usable(previous) then
    return previous
  end
  for _, win in ipairs(api.nvim_tabpage_list_wins(0)) do
    if usable(win) then
      return win
    end
  end
  vim.cmd("aboveleft vsplit")
  return api.nvim_get_current_win()
end

-- Opens `path` (absolute) at `line` (1-based) in the code window.
function M.open_file(path, line)
  api.nvim_set_current_win(code_window())
  vim.cmd("edit " .. vim.fn.fnameescape(path))
  if line then
    local last = api.nvim_buf_line_count(0)
    api.nvim_win_set_cursor(0, { math.max(1, math.min(line, last)), 0 })
    vim.cmd("normal! zv")
  end
end

local function open_place(w, place)
  local path = paths.join(tostring(w.workspace), place.path)
  if vim.fn.filereadable(path) ~= 1 then
    return fail(place.path .. " is not in " .. tostring(w.workspace) .. " any more")
  end
  M.open_file(path, (tonumber(place.start_line) or 0) + 1)
end

-- Opens the diff of gitdiff `block` beside the walkthrough.
local function open_diff(w, block)
  local buf, problem = diff.show(w, block, M.open_file)
  if not buf then
    return fail(problem)
  end
  api.nvim_set_current_win(code_window())
  api.nvim_win_set_buf(0, buf)
  return buf
end

-- <CR> in the walkthrough buffer: a comment's lines, a file reference, a diff.
function M.follow()
  local buf = api.nvim_get_current_buf()
  local view, w = shown[buf], current()
  if not view or not w then
    return false
  end
  local lnum = api.nvim_win_get_cursor(0)[1]
  local target = view.targets[lnum]
  if target and target.kind == "place" then
    open_place(w, target.place)
    return true
  elseif target and target.kind == "diff" then
    open_diff(w, target.block)
    return true
  elseif target and target.kind == "action" then
    info("press this button with :ParleyWalkthroughAct " .. tostring(target.block.index))
    return true
  end
  -- A file reference in the markdown, as in reviews.
  local ref = require("parley.review").reference_at(w, api.nvim_get_current_line(), api.nvim_win_get_cursor(0)[2])
  if not ref then
    return false
  end
  if ref.problem and vim.fn.filereadable(ref.path) ~= 1 then
    info("this reference does not resolve: " .. ref.problem)
    return true
  end
  M.open_file(ref.path, ref.line)
  return true
end

-- ]w / [w, :ParleyWalkthroughNext / Prev: the next (or previous) comment's place.
function M.step(direction)
  local w = current()
  if not w then
    return info("no walkthrough yet (:ParleyWalkthrough shows the latest)")
  end
  local made = render.render(w, nil)
  local steps = made.steps
  if #steps == 0 then
    return info("this walkthrough has no comment placed on the code")
  end
  local at = step_of[w.id]
  local next_step
  if not at then
    next_step = direction > 0 and 1 or #steps
  else
    next_step = at + direction
  end
  if next_step < 1 or next_step > #steps then
    return info(direction > 0 and "that was the last step" or "that was the first step")
  end
  step_of[w.id] = next_step
  M.current_id = w.id
  local step = steps[next_step]
  -- The walkthrough's window, if one shows it, follows the step.
  local buf = buffer_of(w.id)
  for _, win in ipairs(buf and vim.fn.win_findbuf(buf) or {}) do
    pcall(api.nvim_win_set_cursor, win, { step.lnum, 0 })
  end
  open_place(w, step.place)
  local body = ((step.block.body or ""):match("^[^\n]*"))
  info(string.format("step %d of %d, %s: %s", next_step, #steps, render.place_text(step.place), body))
end

--------------------------------------------------------------------------
-- The buffer and the commands

local function setup_buffer(buf, id)
  api.nvim_buf_set_name(buf, SCHEME .. id)
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "hide"
  vim.bo[buf].swapfile = false
  vim.bo[buf].filetype = "markdown"
  local function map(lhs, fn, desc)
    vim.keymap.set("n", lhs, fn, { buffer = buf, desc = "Parley: " .. desc })
  end
  map("<CR>", function()
    if not M.follow() then
      info("nothing to open under the cursor")
    end
  end, "open the comment's lines, the reference or the diff under the cursor")
  map("gf", function()
    if not M.follow() then
      pcall(vim.cmd, "normal! gf")
    end
  end, "open the comment's lines, the reference or the diff under the cursor")
  map("]w", function()
    M.step(1)
  end, "the walkthrough's next step")
  map("[w", function()
    M.step(-1)
  end, "the walkthrough's previous step")
  map("q", "<Cmd>close<CR>", "close the walkthrough")
end

-- Shows walkthrough `w` in its buffer, beside the current window, focused.
function M.show(w)
  M.update(w, false)
  M.current_id = w.id
  local buf = buffer_of(w.id)
  if not buf then
    buf = api.nvim_create_buf(false, true)
    setup_buffer(buf, w.id)
    buffers[w.id] = buf
  end
  draw(buf, M.known[w.id])
  return require("parley.review").show_beside(buf)
end

-- :ParleyWalkthrough list — every walkthrough of this window's folders; the one picked opens.
local function pick(on_done)
  rpc.request("walkthrough/list", vim.empty_dict(), function(err, result)
    if err then
      return fail("walkthrough/list failed: " .. err_text(err))
    end
    local list = result and result.walkthroughs or {}
    if #list == 0 then
      return info("no walkthrough yet: an agent presents one with its present_walkthrough tool")
    end
    vim.ui.select(list, {
      prompt = "Walkthrough",
      format_item = function(s)
        return string.format(
          "%s · %s · revision %d by %s · %d placed, %d not placed",
          s.id:sub(1, 8),
          s.title,
          s.revision,
          s.presented_by,
          s.placed,
          s.unplaced
        )
      end,
    }, function(choice)
      if choice then
        M.open(choice.id, on_done)
      end
    end)
  end)
end

-- :ParleyWalkthrough [ID|list] — walkthrough ID (or a unique beginning of
-- it), else the latest of this window's folders.
function M.open(arg, on_done)
  arg = vim.trim(arg or "")
  if arg == "list" then
    return pick(on_done)
  end
  local params = arg ~= "" and { id = arg } or vim.empty_dict()
  rpc.request("walkthrough/get", params, function(err, result)
    if err then
      fail(err_text(err))
    elseif type(result) ~= "table" or type(result.walkthrough) ~= "table" then
      info("no walkthrough for this window's folders yet: an agent presents one with its present_walkthrough tool")
    else
      M.show(result.walkthrough)
    end
    if on_done then
      on_done()
    end
  end)
end

-- The action block `n` of `w` means (without `n`: the one under the cursor).
local function action_of(w, n)
  if n == nil then
    local view = shown[api.nvim_get_current_buf()]
    local target = view and view.targets[api.nvim_win_get_cursor(0)[1]]
    if target and target.kind == "action" then
      return target.block
    end
    return nil, "put the cursor on a button of the walkthrough, or give its number: :ParleyWalkthroughAct N"
  end
  local buttons = {}
  for _, block in ipairs(w.blocks or {}) do
    if block.kind == "action" then
      if block.index == n then
        return block
      end
      buttons[#buttons + 1] = tostring(block.index)
    end
  end
  if #buttons == 0 then
    return nil, "walkthrough " .. tostring(w.title) .. " has no button"
  end
  return nil, "block " .. n .. " is not a button: the buttons are " .. table.concat(buttons, ", ")
end

-- :ParleyWalkthroughAct [N] — presses button N (the `[N]` the buffer shows):
-- its message goes to the agent that presented the walkthrough.
function M.act(arg, on_done)
  local w = current()
  if not w then
    return info("no walkthrough yet (:ParleyWalkthrough shows the latest)")
  end
  arg = vim.trim(arg or "")
  local n = tonumber(arg)
  if arg ~= "" and (not n or n < 0 or n % 1 ~= 0) then
    return fail(":ParleyWalkthroughAct takes a button's number, as the walkthrough shows it in [ ], not " .. arg)
  end
  local block, problem = action_of(w, n)
  if not block then
    return fail(problem)
  end
  if block.problem and block.problem ~= vim.NIL then
    return fail("button " .. block.index .. " cannot be pressed: " .. block.problem)
  end
  local params = { id = w.id, block_index = block.index, author = require("parley.threads").author() }
  rpc.request("walkthrough/act", params, function(err, result)
    if err then
      fail("the button was not pressed: " .. err_text(err))
    elseif type(result) == "table" and result.walkthrough then
      M.update(result.walkthrough, false)
      info("sent [" .. tostring(block.button) .. "] to " .. tostring(w.presented_by) .. ": "
        .. render.click_state(result.click or {}, tostring(w.presented_by)))
    end
    if on_done then
      on_done()
    end
  end)
end

-- Fetches again the walkthroughs shown here (after a reconnect the daemon may be a new run).
local function refresh()
  for id in pairs(buffers) do
    if buffer_of(id) then
      rpc.request("walkthrough/get", { id = id }, function(err, result)
        if not err and type(result) == "table" and type(result.walkthrough) == "table" then
          M.update(result.walkthrough, false)
        end
      end)
    end
  end
end

local attached = false

-- Registers what the plugin needs; called from setup() (once is enough).
-- walkthrough/updated itself comes through parley.sync, in sequence.
function M.attach()
  if attached then
    return
  end
  attached = true
  rpc.on("connect", refresh)
end

return M
