-- The selection an agent asks for: the live visual selection when Neovim is
-- in visual mode, else the last one made (in whichever buffer), as a protocol
-- Selection — 0-based lines, byte columns (hello says "utf-8"), the end just
-- after the last selected character.

local paths = require("parley.paths")

local api = vim.api
local M = {}

local CTRL_V = "\22"

-- The buffer and mode ("v", "V" or CTRL-V) of the last visual selection.
local last = { buf = nil, mode = nil }

-- Length in bytes of the UTF-8 character starting at byte `col` (0-based) of `line`.
local function char_len(line, col)
  local byte = line:byte(col + 1)
  if not byte then
    return 0
  elseif byte >= 0xF0 then
    return 4
  elseif byte >= 0xE0 then
    return 3
  elseif byte >= 0xC0 then
    return 2
  end
  return 1
end

-- A Selection from two positions (1-based lines, 0-based byte columns, in
-- either order) in `buf`, selected in visual `mode`; nil when it is empty or
-- the buffer is not a file.
function M.from_positions(buf, line1, col1, line2, col2, mode)
  local path = paths.of_buffer(buf)
  if not path or line1 < 1 or line2 < 1 then
    return nil
  end
  if line2 < line1 or (line2 == line1 and col2 < col1) then
    line1, col1, line2, col2 = line2, col2, line1, col1
  end
  local lines = api.nvim_buf_get_lines(buf, line1 - 1, line2, false)
  if #lines == 0 then
    return nil
  end
  local first, final = lines[1], lines[#lines]
  local start_col, end_col
  local text
  if mode == "V" then
    start_col, end_col = 0, #final
    text = table.concat(lines, "\n")
  elseif mode == CTRL_V then
    local left, right = math.min(col1, col2), math.max(col1, col2)
    local parts = {}
    for i, line in ipairs(lines) do
      local stop = math.min(#line, right + math.max(char_len(line, right), 1))
      parts[i] = line:sub(left + 1, stop)
    end
    start_col = math.min(left, #first)
    end_col = math.min(#final, right + math.max(char_len(final, right), 1))
    text = table.concat(parts, "\n")
  else
    start_col = math.min(col1, #first)
    if vim.o.selection == "exclusive" then
      end_col = math.min(col2, #final)
    else
      end_col = math.min(#final, col2 + math.max(char_len(final, col2), 1))
    end
    if #lines == 1 then
      text = first:sub(start_col + 1, end_col)
    else
      local parts = { first:sub(start_col + 1) }
      for i = 2, #lines - 1 do
        parts[#parts + 1] = lines[i]
      end
      parts[#parts + 1] = final:sub(1, end_col)
      text = table.concat(parts, "\n")
    end
  end
  if text == "" then
    return nil
  end
  local filetype = vim.bo[buf].filetype
  return {
    path = path,
    text = text,
    start = { line = line1 - 1, character = start_col },
    ["end"] = { line = line2 - 1, character = end_col },
    language_id = filetype ~= "" and filetype or nil,
  }
end

-- The last visual selection made in `buf`, from its '< and '> marks.
function M.marked(buf, mode)
  local s = api.nvim_buf_get_mark(buf, "<")
  local e = api.nvim_buf_get_mark(buf, ">")
  if s[1] == 0 or e[1] == 0 then
    return nil
  end
  return M.from_positions(buf, s[1], s[2], e[1], e[2], mode or vim.fn.visualmode())
end

-- The current visual selection, or the last one, or nil.
function M.current()
  local mode = api.nvim_get_mode().mode
  local kind = mode:sub(1, 1)
  if kind == "v" or kind == "V" or kind == CTRL_V then
    local v = vim.fn.getpos("v")
    local cursor = vim.fn.getpos(".")
    return M.from_positions(api.nvim_get_current_buf(), v[2], v[3] - 1, cursor[2], cursor[3] - 1, kind)
  end
  local buf = last.buf
  if not buf or not api.nvim_buf_is_valid(buf) then
    buf = api.nvim_get_current_buf()
    return M.marked(buf, nil)
  end
  return M.marked(buf, last.mode)
end

-- ModeChanged: remember where visual mode is used; when it ends, tell the
-- daemon (its fallback when this window is too busy to answer selection/get).
function M.on_mode_changed(notify)
  local event = vim.v.event or {}
  local new = (event.new_mode or ""):sub(1, 1)
  local old = (event.old_mode or ""):sub(1, 1)
  local visual = { v = true, V = true, [CTRL_V] = true }
  if visual[new] then
    last.buf = api.nvim_get_current_buf()
    last.mode = new
  elseif visual[old] then
    vim.schedule(function()
      notify(M.current())
    end)
  end
end

return M
