-- The scratch buffers of the review rounds opened here: the file list, the
-- two sides of each file's diff, and the draft editors. Every buffer belongs
-- to one round and closes with it. The diff buffers carry marks: the drafts
-- on their lines, and on the agent's side the earlier rounds' comments.

local config = require("parley.config")
local model = require("parley.rounds.model")

local api = vim.api
local value, first_line = model.value, model.first_line
local M = {}

local ns = api.nvim_create_namespace("parley_rounds")
M.namespace = ns

M.SCHEME = "parley-round://"

-- review_id → { ["old/src/a.rs"] = buf, … }: every scratch buffer of a round, closed with it.
local buffers = {}
-- buf → { review_id, path, kind = "old"|"new"|"previous", side = "old"|"new"|nil }.
local buffer_info = {}

-- What a diff buffer shows (see buffer_info above), or nil for any other buffer.
function M.info(buf)
  return buffer_info[buf]
end

function M.set_info(buf, info)
  buffer_info[buf] = info
end

-- The round a buffer of ours belongs to, or nil.
function M.round_of(buf)
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
  return nil
end

-- The buffers of round `id`, key → buf.
function M.of_round(id)
  return buffers[id] or {}
end

function M.wipe(buf)
  buffer_info[buf] = nil
  if api.nvim_buf_is_valid(buf) then
    pcall(api.nvim_buf_delete, buf, { force = true })
  end
end

-- Wipes every buffer of round `id`.
function M.wipe_round(id)
  for _, buf in pairs(buffers[id] or {}) do
    M.wipe(buf)
  end
  buffers[id] = nil
end

function M.set_lines(buf, lines)
  vim.bo[buf].modifiable = true
  vim.bo[buf].readonly = false
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].readonly = true
  vim.bo[buf].modified = false
end

-- Round `id`'s buffer under `key`, named `name`; made (and true) when it has none.
function M.scratch(id, key, name)
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
      M.wipe(other)
    end
  end
  api.nvim_buf_set_name(buf, name)
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "hide"
  vim.bo[buf].swapfile = false
  return buf, true
end

-- Syntax for a diff buffer from the file's name, the way Neovim would for the file.
function M.detect_filetype(buf, path)
  api.nvim_buf_call(buf, function()
    pcall(vim.cmd, "silent doautocmd filetypedetect BufRead " .. vim.fn.fnameescape(path))
  end)
end

-- The text shown for `kind` of `file`, and the side comments on it are on (nil: none).
function M.side_text(file, kind)
  if file.binary then
    return { "(binary file: not shown)" }, nil
  elseif file.too_large then
    return { "(too large to show here)" }, nil
  end
  if kind == "old" then
    local lines = model.text_lines(file.before)
    return lines or {}, lines and "old" or nil
  elseif kind == "new" then
    local lines = model.text_lines(file.after)
    return lines or {}, lines and "new" or nil
  end
  -- The previous round's text: shown, but comments go on the whole change's sides.
  return model.text_lines(file.previous) or {}, nil
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

-- Draws `round`'s drafts (and, on the agent's side, earlier comments) on diff buffer `buf`.
function M.draw(round, buf)
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

return M
