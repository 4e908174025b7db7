-- The daemon's questions to this window's language servers (docs/protocol.md:
-- symbols/find, diagnostics/get), answered through vim.lsp and vim.diagnostic.
--
-- symbols/find asks every LSP client whose root is on the workspace for
-- `workspace/symbol` (the hits as they come, fuzzy ones too: the daemon keeps
-- exact names first), and for references the exact-name definitions first,
-- then `textDocument/references` at each. diagnostics/get answers what
-- vim.diagnostic holds for the file (loaded first if it is not, so its
-- servers analyse it) or for every buffer of the workspace, once no problem
-- or text of them has changed for a moment (SETTLE_MS); one that has not
-- settled by CAP_MS is answered `stale`, never as clean. Lines are 0-based
-- and columns bytes, as hello says (utf-8).

local paths = require("parley.paths")

local api = vim.api
local uv = vim.uv or vim.loop
local M = {}

-- The daemon passes over a window after 1.5 s: answer with what came by then.
local SYMBOLS_WAIT_MS = 1200
local SETTLE_MS = 750
local CAP_MS = 5000
local POLL_MS = 50
local MAX_DEFINITIONS_FOLLOWED = 5

local SEVERITIES = { "error", "warning", "information", "hint" }

-- When each buffer's text and problems last changed (uv.now() ms).
local text_changed = {}
local problems_changed = {}

local function now()
  return uv.now()
end

-- A qualified name's last part: `Cart.total` and `Cart::total` are `total`.
local function last_part(name)
  local last = name
  for part in name:gmatch("[^.:#]+") do
    last = part
  end
  return vim.trim(last)
end

local function plain_name(given)
  return last_part((given:gsub("%(.*$", "")))
end

local function inside(folder, file)
  folder = paths.canonical(folder)
  file = paths.canonical(file)
  return file == folder or (file ~= nil and file:sub(1, #folder + 1) == folder .. "/")
end

local function clients()
  local get = vim.lsp.get_clients or vim.lsp.get_active_clients
  return get()
end

-- The clients whose root is on `workspace` (it holds the root, or the root holds it).
local function clients_on(workspace)
  local found = {}
  for _, client in ipairs(clients()) do
    local root = client.config.root_dir or (client.workspace_folders and client.workspace_folders[1] and vim.uri_to_fname(client.workspace_folders[1].uri))
    if root and (inside(workspace, root) or inside(root, workspace)) then
      found[#found + 1] = client
    end
  end
  return found
end

local function place(uri, range, name, container)
  local path = vim.uri_to_fname(uri)
  return {
    path = paths.canonical(path) or path,
    range = range,
    name = name,
    container = (container ~= nil and container ~= vim.NIL and container ~= "") and container or nil,
  }
end

-- Asks each client `method` with `params_of(client)`; calls `done(answers)`
-- with { client, result } for those that answered within `wait_ms`.
local function ask_clients(list, method, params_of, wait_ms, done)
  local answers, left, finished = {}, #list, false
  local function finish()
    if not finished then
      finished = true
      done(answers)
    end
  end
  if left == 0 then
    return finish()
  end
  for _, client in ipairs(list) do
    local ok = pcall(client.request, method, params_of(client), function(err, result)
      if not err and result and result ~= vim.NIL then
        answers[#answers + 1] = { client = client, result = result }
      end
      left = left - 1
      if left == 0 then
        finish()
      end
    end)
    if not ok then
      left = left - 1
    end
  end
  if left == 0 then
    return finish()
  end
  vim.defer_fn(finish, wait_ms)
end

-- The buffer of `file`, loaded (without showing it) if it is not: its
-- FileType autocommands attach its language servers, as when a person opens
-- it, so they know the file before they are asked about it.
local function load(file)
  local buf = vim.fn.bufadd(file)
  if not api.nvim_buf_is_loaded(buf) then
    vim.fn.bufload(buf)
    vim.bo[buf].buflisted = true
    api.nvim_buf_call(buf, function()
      vim.cmd("filetype detect")
    end)
    text_changed[buf] = now()
  end
  return buf
end

function M.find_symbols(params, reply)
  local word = last_part(params.name)
  local list = clients_on(params.workspace)
  local started = now()
  ask_clients(list, "workspace/symbol", function()
    return { query = word }
  end, SYMBOLS_WAIT_MS, function(answers)
    local places, exact = {}, {}
    for _, answer in ipairs(answers) do
      for _, symbol in ipairs(answer.result) do
        local location = symbol.location
        if location and location.uri and inside(params.workspace, vim.uri_to_fname(location.uri)) and location.range then
          places[#places + 1] = place(location.uri, location.range, symbol.name, symbol.containerName)
          if plain_name(symbol.name) == word and #exact < MAX_DEFINITIONS_FOLLOWED then
            exact[#exact + 1] = { client = answer.client, symbol = symbol }
          end
        end
      end
    end
    if params.kind ~= "references" then
      return reply({ places = places })
    end
    -- References: each exact-name definition, then the uses found at it.
    local found = {}
    local pending = #exact
    if pending == 0 then
      return reply({ places = found })
    end
    local left_ms = math.max(SYMBOLS_WAIT_MS - (now() - started), 100)
    local replied = false
    local function finish()
      if not replied then
        replied = true
        reply({ places = found })
      end
    end
    for _, definition in ipairs(exact) do
      local location = definition.symbol.location
      load(vim.uri_to_fname(location.uri))
      local at = M.name_position(location, word)
      found[#found + 1] = place(location.uri, { start = at, ["end"] = { line = at.line, character = at.character + #word } }, word, definition.symbol.containerName)
      local ok = pcall(definition.client.request, "textDocument/references", {
        textDocument = { uri = location.uri },
        position = at,
        context = { includeDeclaration = true },
      }, function(err, result)
        if not err and type(result) == "table" then
          for _, reference in ipairs(result) do
            if inside(params.workspace, vim.uri_to_fname(reference.uri)) then
              found[#found + 1] = place(reference.uri, reference.range, word)
            end
          end
        end
        pending = pending - 1
        if pending == 0 then
          finish()
        end
      end)
      if not ok then
        pending = pending - 1
      end
    end
    if pending == 0 then
      return finish()
    end
    vim.defer_fn(finish, left_ms)
  end)
  return require("parley.rpc").LATER
end

-- Where `word` is written inside a definition's range (servers give the whole
-- declaration), as an LSP position (ASCII names: bytes are UTF-16 units).
function M.name_position(location, word)
  local start = location.range.start
  local ok, lines = pcall(vim.fn.readfile, vim.uri_to_fname(location.uri))
  if ok then
    local last = math.min(location.range["end"].line, start.line + 50)
    for line = start.line, last do
      local text = lines[line + 1] or ""
      local from = line == start.line and start.character + 1 or 1
      while true do
        local i, j = text:find(word, from, true)
        if not i then
          break
        end
        local before, after = text:sub(i - 1, i - 1), text:sub(j + 1, j + 1)
        if not before:match("[%w_$]") and not after:match("[%w_$]") then
          return { line = line, character = i - 1 }
        end
        from = j + 1
      end
    end
  end
  return start
end

local function sha256_of(buf)
  local lines = api.nvim_buf_get_lines(buf, 0, -1, false)
  local text = table.concat(lines, "\n")
  if vim.bo[buf].eol or vim.bo[buf].fixeol then
    text = text .. "\n"
  end
  return vim.fn.sha256(text)
end

local function matches_disk(buf, file)
  local ok, lines = pcall(vim.fn.readfile, file, "b")
  if not ok then
    return true
  end
  local disk = table.concat(lines, "\n"):gsub("\r\n", "\n"):gsub("^\239\187\191", "")
  local text = table.concat(api.nvim_buf_get_lines(buf, 0, -1, false), "\n") .. "\n"
  return disk == text or disk .. "\n" == text or disk == text .. "\n"
end

local function clients_of(buf)
  if vim.lsp.get_clients then
    return vim.lsp.get_clients({ bufnr = buf })
  end
  return vim.tbl_values(vim.lsp.buf_get_clients(buf))
end

-- Whether `buf`'s problems may still be on their way: its text changed
-- lately (before `asked`, the question) and no problems came since while a
-- server is attached, or it does not hold what is on disk.
local function unsettled(buf, at, asked)
  local text = text_changed[buf] or 0
  local problems = problems_changed[buf] or 0
  if at - math.max(text, problems) < SETTLE_MS then
    return true
  end
  if text > problems and text > asked - CAP_MS and #clients_of(buf) > 0 then
    return true
  end
  local file = paths.of_buffer(buf)
  return file ~= nil and not vim.bo[buf].modified and not matches_disk(buf, file)
end

local function workspace_buffers(workspace)
  local found = {}
  for _, buf in ipairs(api.nvim_list_bufs()) do
    local file = api.nvim_buf_is_loaded(buf) and paths.of_buffer(buf)
    if file and inside(workspace, file) then
      found[#found + 1] = buf
    end
  end
  return found
end

local function to_wire(d)
  return {
    severity = SEVERITIES[d.severity] or "error",
    source = d.source,
    code = d.code ~= nil and tostring(d.code) or nil,
    message = d.message,
    range = {
      start = { line = d.lnum, character = d.col },
      ["end"] = { line = d.end_lnum or d.lnum, character = d.end_col or d.col },
    },
  }
end

function M.diagnostics(params, reply)
  local buffers
  local asked = params.path ~= nil and params.path ~= vim.NIL
  if asked then
    local buf = load(params.path)
    buffers = function()
      return { buf }
    end
  else
    buffers = function()
      return workspace_buffers(params.workspace)
    end
  end
  -- A buffer without unsaved edits whose file an agent changed is reloaded
  -- ('autoread', on by default), so its servers analyse what is on disk.
  for _, buf in ipairs(buffers()) do
    local file = paths.of_buffer(buf)
    if file and not vim.bo[buf].modified and not matches_disk(buf, file) then
      pcall(vim.cmd, "checktime " .. buf)
    end
  end
  local started = now()
  local function answer()
    local at = now()
    local pending = {}
    for _, buf in ipairs(buffers()) do
      if unsettled(buf, at, started) then
        pending[buf] = true
      end
    end
    if next(pending) ~= nil and at - started < CAP_MS then
      return vim.defer_fn(answer, POLL_MS)
    end
    local files = {}
    for _, buf in ipairs(buffers()) do
      local problems = vim.diagnostic.get(buf)
      if asked or #problems > 0 then
        local file = paths.of_buffer(buf)
        local wire = {}
        for _, d in ipairs(problems) do
          wire[#wire + 1] = to_wire(d)
        end
        files[#files + 1] = {
          path = file,
          version = api.nvim_buf_get_changedtick(buf),
          dirty = vim.bo[buf].modified,
          sha256 = sha256_of(buf),
          stale = pending[buf] or nil,
          diagnostics = wire,
        }
      end
    end
    reply({ files = files })
  end
  answer()
  return require("parley.rpc").LATER
end

function M.attach()
  local rpc = require("parley.rpc")
  rpc.request_handlers["symbols/find"] = M.find_symbols
  rpc.request_handlers["diagnostics/get"] = M.diagnostics
  local group = api.nvim_create_augroup("ParleyIde", { clear = true })
  api.nvim_create_autocmd({ "TextChanged", "TextChangedI", "BufReadPost" }, {
    group = group,
    callback = function(event)
      text_changed[event.buf] = now()
    end,
  })
  api.nvim_create_autocmd("DiagnosticChanged", {
    group = group,
    callback = function(event)
      problems_changed[event.buf] = now()
    end,
  })
  api.nvim_create_autocmd("BufWipeout", {
    group = group,
    callback = function(event)
      text_changed[event.buf] = nil
      problems_changed[event.buf] = nil
    end,
  })
end

return M
