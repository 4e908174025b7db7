-- How a buffer's file and a path the daemon names are compared: both made
-- absolute and resolved through symbolic links, so /tmp/x and a link to it
-- are the same file.

local M = {}
local uv = vim.uv or vim.loop

-- The canonical form of an absolute path (or the path itself when it does not exist).
function M.canonical(path)
  if not path or path == "" then
    return nil
  end
  return uv.fs_realpath(path) or path
end

-- The canonical file a buffer shows, or nil for buffers that are not files.
function M.of_buffer(buf)
  if not vim.api.nvim_buf_is_valid(buf) or vim.bo[buf].buftype ~= "" then
    return nil
  end
  local name = vim.api.nvim_buf_get_name(buf)
  if name == "" then
    return nil
  end
  return M.canonical(vim.fn.fnamemodify(name, ":p"))
end

-- Loaded buffers showing `file` (a canonical path).
function M.buffers_of(file)
  local found = {}
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) and M.of_buffer(buf) == file then
      found[#found + 1] = buf
    end
  end
  return found
end

-- `path` joined to `base` unless it is absolute.
function M.join(base, path)
  if path:sub(1, 1) == "/" then
    return path
  end
  return (base:gsub("/+$", "")) .. "/" .. path
end

return M
