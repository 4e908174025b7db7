-- Reviews that agents present: the newest per base folder, shown in a
-- markdown scratch buffer that follows every update, with <CR> and gf on a
-- file reference opening the file at its line. Older revisions (the daemon
-- keeps the last 100, each with who made it) open in buffers of their own
-- with :ParleyReview N, and :ParleyReview history lists them.

local config = require("parley.config")
local paths = require("parley.paths")

local api = vim.api
local M = {}

-- Shows `buf` (a review or a walkthrough) in the window of this tab that
-- already has it, else in a new one on the right, wrapping its prose.
function M.show_beside(buf)
  for _, win in ipairs(api.nvim_tabpage_list_wins(0)) do
    if api.nvim_win_get_buf(win) == buf then
      api.nvim_set_current_win(win)
      return buf
    end
  end
  vim.cmd("botright vsplit")
  api.nvim_win_set_buf(0, buf)
  vim.wo.wrap = true
  vim.wo.linebreak = true
  return buf
end

local BUFFER_NAME = "parley://review"

-- base_uri → the wire Review, the highest revision seen.
M.reviews = {}

-- The review to show: the most recently updated one.
function M.current()
  local newest = nil
  for _, review in pairs(M.reviews) do
    if not newest or (review.updated_at or "") > (newest.updated_at or "") then
      newest = review
    end
  end
  return newest
end

local function review_buffer()
  for _, buf in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_is_valid(buf) and api.nvim_buf_get_name(buf) == BUFFER_NAME then
      return buf
    end
  end
  return nil
end

local function content_lines(review)
  local lines = vim.split(review.content or "", "\n", { plain = true })
  if #lines > 1 and lines[#lines] == "" then
    lines[#lines] = nil
  end
  return lines
end

-- Puts the current review into the buffer, keeping every window's cursor where it was.
local function render(buf)
  local review = M.current()
  local lines = review and content_lines(review)
    or { "No review yet.", "", "When an agent calls present_review on this folder, it appears here." }
  local cursors = {}
  for _, win in ipairs(api.nvim_list_wins()) do
    if api.nvim_win_get_buf(win) == buf then
      cursors[win] = api.nvim_win_get_cursor(win)
    end
  end
  vim.bo[buf].modifiable = true
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
  vim.b[buf].parley_base = review and review.base_uri or nil
  vim.b[buf].parley_revision = review and review.revision or nil
  for win, cursor in pairs(cursors) do
    pcall(api.nvim_win_set_cursor, win, { math.min(cursor[1], #lines), cursor[2] })
  end
end

local function announce(review, known)
  if not config.options.notify then
    return
  end
  local where = vim.fn.fnamemodify(review.base_uri or "", ":~")
  local what = known and ("Review updated (revision " .. review.revision .. ")") or "New review"
  local hint = review_buffer() and "" or " — :ParleyReview to read it"
  vim.notify("Parley: " .. what .. " in " .. where .. hint, vim.log.levels.INFO)
end

-- Takes a review from the daemon; `live` announces it when it is news.
function M.update(review, live)
  if type(review) ~= "table" or not review.base_uri then
    return
  end
  local known = M.reviews[review.base_uri]
  if known and (known.revision or 0) >= (review.revision or 0) then
    return
  end
  M.reviews[review.base_uri] = review
  local buf = review_buffer()
  if buf then
    render(buf)
  end
  if live then
    announce(review, known)
  end
end

-- Replaces every review with `list` (after a refetch); announces the ones
-- that changed when `live`.
function M.replace_all(list, live)
  local old = M.reviews
  M.reviews = {}
  for _, review in ipairs(list or {}) do
    M.reviews[review.base_uri] = review
  end
  local buf = review_buffer()
  if buf then
    render(buf)
  end
  if live then
    for base, review in pairs(M.reviews) do
      local known = old[base]
      if not known or (known.revision or 0) < (review.revision or 0) then
        announce(review, known)
      end
    end
  end
end

-- File references in one line of markdown, as the daemon recognises them:
-- [`path`][], [`path:12`][], [`path:12-20`][], [text](path), [text](path#L12),
-- [text](path#L12-L20). Each is { first, last (1-based byte columns), path, line?, end_line? }.
function M.parse(text)
  local found = {}
  local init = 1
  while true do
    local s, e, inner = text:find("%[`([^`]+)`%]%[%]", init)
    if not s then
      break
    end
    local path, a, b = inner:match("^(.-):(%d+)%-(%d+)$")
    if not path then
      path, a = inner:match("^(.-):(%d+)$")
    end
    found[#found + 1] = { first = s, last = e, path = path or inner, line = tonumber(a), end_line = tonumber(b) }
    init = e + 1
  end
  init = 1
  while true do
    local s, e, target = text:find("%[[^%]]*%]%(([^%)%s]+)%)", init)
    if not s then
      break
    end
    local is_url = target:match("^%a[%w+.%-]*:") or target:sub(1, 1) == "#"
    if not is_url then
      local path, fragment = target:match("^([^#]*)#(.*)$")
      path = path or target
      local a, b = (fragment or ""):match("^L(%d+)%-L(%d+)$")
      if not a then
        a = (fragment or ""):match("^L(%d+)$")
      end
      if path ~= "" then
        found[#found + 1] = { first = s, last = e, path = path, line = tonumber(a), end_line = tonumber(b) }
      end
    end
    init = e + 1
  end
  return found
end

-- The reference at byte column `col` (0-based) of `text`, resolved against
-- `review`: the daemon's own list first, then the markdown itself.
-- Returns { path (absolute), line?, problem? } or nil.
function M.reference_at(review, text, col)
  for _, ref in ipairs(review.references or {}) do
    local init = 1
    while ref.text and ref.text ~= "" do
      local s, e = text:find(ref.text, init, true)
      if not s then
        break
      end
      if col >= s - 1 and col <= e - 1 then
        if ref.resolved_path then
          return { path = ref.resolved_path, line = ref.line }
        end
        return { path = paths.join(review.base_uri, ref.path), line = ref.line, problem = ref.problem }
      end
      init = e + 1
    end
  end
  for _, ref in ipairs(M.parse(text)) do
    if col >= ref.first - 1 and col <= ref.last - 1 then
      return { path = paths.join(review.base_uri, ref.path), line = ref.line }
    end
  end
  return nil
end

-- Opens `path` at `line` in the window the review was opened from (or a new split).
local function open_at(path, line)
  local here = api.nvim_get_current_win()
  local previous = vim.fn.win_getid(vim.fn.winnr("#"))
  if previous ~= 0 and previous ~= here and api.nvim_win_is_valid(previous) then
    api.nvim_set_current_win(previous)
  else
    vim.cmd("aboveleft split")
  end
  vim.cmd("edit " .. vim.fn.fnameescape(path))
  if line then
    local last = api.nvim_buf_line_count(0)
    api.nvim_win_set_cursor(0, { math.max(1, math.min(line, last)), 0 })
    vim.cmd("normal! zv")
  end
end

-- Follows the reference under the cursor. Returns false when there is none.
function M.follow()
  local review = vim.b.parley_revision_review or M.current()
  if not review then
    return false
  end
  local cursor = api.nvim_win_get_cursor(0)
  local text = api.nvim_get_current_line()
  local ref = M.reference_at(review, text, cursor[2])
  if not ref then
    return false
  end
  if ref.problem and vim.fn.filereadable(ref.path) ~= 1 then
    vim.notify("Parley: this reference does not resolve: " .. ref.problem, vim.log.levels.WARN)
    return true
  end
  open_at(ref.path, ref.line)
  return true
end

local function setup_buffer(buf, name)
  api.nvim_buf_set_name(buf, name or BUFFER_NAME)
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "hide"
  vim.bo[buf].swapfile = false
  vim.bo[buf].filetype = "markdown"
  vim.keymap.set("n", "<CR>", function()
    if not M.follow() then
      vim.notify("Parley: no file reference under the cursor", vim.log.levels.INFO)
    end
  end, { buffer = buf, desc = "Parley: open the referenced file at its line" })
  vim.keymap.set("n", "gf", function()
    if not M.follow() then
      pcall(vim.cmd, "normal! gf")
    end
  end, { buffer = buf, desc = "Parley: open the referenced file at its line" })
  vim.keymap.set("n", "q", "<Cmd>close<CR>", { buffer = buf, desc = "Parley: close the review" })
end

-- Shows `review` (an older revision) in a buffer of its own, beside the current
-- window; it does not follow updates. The first line says who made it.
local function show_revision(review)
  local name = BUFFER_NAME .. "/" .. review.revision
  local buf = nil
  for _, b in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_is_valid(b) and api.nvim_buf_get_name(b) == name then
      buf = b
    end
  end
  if not buf then
    buf = api.nvim_create_buf(false, true)
    setup_buffer(buf, name)
  end
  local source = review.source and review.source.label or "source not recorded"
  local lines = { "<!-- revision " .. review.revision .. " · " .. source .. " · " .. (review.updated_at or "") .. " -->", "" }
  vim.list_extend(lines, content_lines(review))
  vim.bo[buf].modifiable = true
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
  vim.b[buf].parley_base = review.base_uri
  vim.b[buf].parley_revision = review.revision
  vim.b[buf].parley_revision_review = review
  return M.show_beside(buf)
end

-- The folder whose review history is meant: the current review's.
local function history_base()
  local review = M.current()
  if not review then
    vim.notify("Parley: no review yet, so no earlier revisions", vim.log.levels.INFO)
    return nil
  end
  return review.base_uri
end

-- :ParleyReview N — opens revision N of the current review, fetched from the daemon.
function M.open_revision(revision, on_done)
  local base = history_base()
  if not base then
    return
  end
  require("parley.rpc").request("review/get", { workspace = base, revision = revision }, function(err, result)
    if err then
      vim.notify("Parley: " .. tostring(type(err) == "table" and err.message or err), vim.log.levels.WARN)
    elseif result and result.reviews and result.reviews[1] then
      show_revision(result.reviews[1])
    end
    if on_done then
      on_done()
    end
  end)
end

-- :ParleyReview history — lists the kept revisions with who made each; the
-- one picked opens.
function M.pick_revision()
  local base = history_base()
  if not base then
    return
  end
  require("parley.rpc").request("review/history", { workspace = base }, function(err, result)
    if err then
      vim.notify("Parley: " .. tostring(type(err) == "table" and err.message or err), vim.log.levels.WARN)
      return
    end
    local revisions = vim.tbl_filter(function(r)
      return r.base_uri == base
    end, result and result.revisions or {})
    vim.ui.select(revisions, {
      prompt = "Revision of the review of " .. base,
      format_item = function(r)
        return string.format("%d · %s · %s · %s", r.revision, r.source.label, r.updated_at, r.title)
      end,
    }, function(choice)
      if choice then
        M.open_revision(choice.revision)
      end
    end)
  end)
end

-- :ParleyReview — shows the review buffer (creating it), focused, beside the current window.
function M.open()
  local buf = review_buffer()
  if not buf then
    buf = api.nvim_create_buf(false, true)
    setup_buffer(buf)
  end
  render(buf)
  return M.show_beside(buf)
end

return M
