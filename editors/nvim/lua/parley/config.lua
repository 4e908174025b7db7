-- The plugin's options: each with its type and default (the schema, as
-- gitsigns.nvim keeps its own), and what setup() was given. setup() checks
-- every option it is given: an unknown one, or one of the wrong type, gets a
-- warning naming it and what it takes, and the default stands in for it.
-- Options and their defaults are described in doc/parley.txt (:help parley-options).

local M = {}

-- A sign's text: one or two cells, as the sign column takes.
local function sign_text(v)
  local cells = vim.fn.strdisplaywidth(v)
  return cells >= 1 and cells <= 2
end

-- name → { type = a Lua type, default, default_help = the default in words when it is nil,
--          takes = what a warning says the option takes,
--          check = an optional test of a value of the right type,
--          fields = for a table merged into its default: its own schema }.
M.schema = {
  -- The daemon's socket. Default: what `parley socket-path` prints.
  socket = { type = "string", default = nil, default_help = "what `parley socket-path` prints", takes = "a socket path" },
  -- The `parley` command line, used for `socket-path` and to start a daemon.
  parley_cmd = { type = "string", default = "parley", takes = "a command name or path" },
  -- Start `parley daemon` when none is running ($PARLEY_NO_SPAWN disables it too).
  start_daemon = { type = "boolean", default = true, takes = "true or false" },
  -- The folders this window works on; reviews and threads inside them reach
  -- it. Default: the current directory (followed when it changes).
  roots = {
    type = "table",
    default = nil,
    default_help = "the current directory",
    takes = "a list of folders",
    check = function(v)
      return (vim.islist or vim.tbl_islist)(v) and #vim.tbl_filter(function(root)
        return type(root) ~= "string"
      end, v) == 0
    end,
  },
  -- This window's id, for agents whose $PARLEY_EDITOR_ID names it. Default:
  -- "nvim-<pid>". It is exported as $PARLEY_EDITOR_ID to terminals and jobs
  -- started from this Neovim, so an agent run there asks this window.
  editor_id = {
    type = "string",
    default = nil,
    default_help = "nvim-<pid>",
    takes = "a non-empty string",
    check = function(v)
      return v ~= ""
    end,
  },
  -- The author of your comments. Default: your login name (as `id -un` prints it).
  author = {
    type = "string",
    default = nil,
    default_help = "your login name",
    takes = "a non-empty string",
    check = function(v)
      return vim.trim(v) ~= ""
    end,
  },
  -- Sign column text for threads, and for draft comments in a review round's diff (1 or 2 cells).
  signs = {
    type = "table",
    takes = "a table of sign texts (thread, orphaned, draft)",
    fields = {
      thread = { type = "string", default = "C", takes = "a text of 1 or 2 cells", check = sign_text },
      orphaned = { type = "string", default = "?", takes = "a text of 1 or 2 cells", check = sign_text },
      draft = { type = "string", default = "D", takes = "a text of 1 or 2 cells", check = sign_text },
    },
  },
  -- Show the latest comment at the end of a thread's first line.
  virtual_text = { type = "boolean", default = true, takes = "true or false" },
  -- vim.notify when a review arrives, an agent asks you to review, or an agent answers a thread.
  notify = { type = "boolean", default = true, takes = "true or false" },
  -- How long typing must pause before unsaved text is sent for re-anchoring.
  debounce_ms = {
    type = "number",
    default = 300,
    takes = "a number of milliseconds (0 or more)",
    check = function(v)
      return v >= 0 and v < math.huge
    end,
  },
}

-- The defaults of a schema, as a table of options.
local function defaults_of(schema)
  local options = {}
  for name, spec in pairs(schema) do
    if spec.fields then
      options[name] = defaults_of(spec.fields)
    else
      options[name] = vim.deepcopy(spec.default)
    end
  end
  return options
end

M.defaults = defaults_of(M.schema)
M.options = vim.deepcopy(M.defaults)

local function warn(message)
  vim.notify("Parley: " .. message, vim.log.levels.WARN)
end

-- A value as a warning quotes it: short, one line.
local function shown(v)
  local text = vim.inspect(v):gsub("%s+", " ")
  if #text > 40 then
    text = text:sub(1, 37) .. "..."
  end
  return text
end

local function sorted_names(schema)
  local names = vim.tbl_keys(schema)
  table.sort(names)
  return table.concat(names, ", ")
end

-- Checks `given` against `schema` and returns the options: what was given
-- where it is right, the defaults elsewhere. `prefix` names a nested table.
local function checked(schema, given, defaults, prefix)
  local options = vim.deepcopy(defaults)
  local names = vim.tbl_keys(given)
  table.sort(names, function(a, b)
    return tostring(a) < tostring(b)
  end)
  for _, name in ipairs(names) do
    local v = given[name]
    local spec = type(name) == "string" and schema[name] or nil
    local full = prefix .. tostring(name)
    if not spec then
      warn(string.format("unknown option `%s` is ignored (the options are %s)", full, sorted_names(schema)))
    elseif type(v) ~= spec.type or (spec.check and not spec.check(v)) then
      local default = spec.fields and "its defaults"
        or spec.default_help and ("the default, " .. spec.default_help)
        or ("the default, " .. shown(spec.default))
      warn(string.format("option `%s` takes %s, not %s: using %s", full, spec.takes, shown(v), default))
    elseif spec.fields then
      options[name] = checked(spec.fields, v, defaults[name], full .. ".")
    else
      options[name] = vim.deepcopy(v)
    end
  end
  return options
end

-- Sets the options from what setup() was given (nil: the defaults).
function M.set(opts)
  if opts ~= nil and type(opts) ~= "table" then
    warn(string.format("setup() takes a table of options, not %s: using the defaults", shown(opts)))
    opts = nil
  end
  M.options = checked(M.schema, opts or {}, M.defaults, "")
  return M.options
end

return M
