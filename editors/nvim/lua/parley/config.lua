-- The plugin's options: the defaults, and what setup() was given.

local M = {}

M.defaults = {
  -- The daemon's socket. Default: what `parley socket-path` prints.
  socket = nil,
  -- The `parley` command line, used for `socket-path` and to start a daemon.
  parley_cmd = "parley",
  -- Start `parley daemon` when none is running ($PARLEY_NO_SPAWN disables it too).
  start_daemon = true,
  -- The folders this window works on; reviews and threads inside them reach
  -- it. Default: the current directory (followed when it changes).
  roots = nil,
  -- This window's id, for agents whose $PARLEY_EDITOR_ID names it. Default:
  -- "nvim-<pid>". It is exported as $PARLEY_EDITOR_ID to terminals and jobs
  -- started from this Neovim, so an agent run there asks this window.
  editor_id = nil,
  -- The author of your comments. Default: your login name (as `id -un` prints it).
  author = nil,
  -- Sign column text for threads, and for draft comments in a review round's diff (1 or 2 cells).
  signs = { thread = "C", orphaned = "?", draft = "D" },
  -- Show the latest comment at the end of a thread's first line.
  virtual_text = true,
  -- vim.notify when a review arrives, an agent asks you to review, or an agent answers a thread.
  notify = true,
  -- How long typing must pause before unsaved text is sent for re-anchoring.
  debounce_ms = 300,
}

M.options = vim.deepcopy(M.defaults)

function M.set(opts)
  M.options = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts or {})
  return M.options
end

return M
