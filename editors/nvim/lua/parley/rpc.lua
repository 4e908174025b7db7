-- The connection to the Parley daemon: finds the socket, frames JSON-RPC as
-- one message per line, says hello, matches answers to requests, serves the
-- daemon's requests, and reconnects with a back-off when the daemon goes away.
--
-- It knows nothing of reviews or threads: what a message means is for the
-- handlers registered in `M.notification_handlers`, `M.request_handlers`, and
-- with `M.on("connect"|"disconnect", fn)`. luv callbacks never touch the editor:
-- everything they learn is handed to the main loop through vim.schedule.

-- vim.uv since Neovim 0.10; vim.loop before.
local uv = vim.uv or vim.loop

local M = {}

-- The hub protocol major this client speaks.
M.PROTOCOL = 1

-- Back-off between connection attempts, as docs/protocol.md §8 advises.
local FIRST_DELAY_MS = 100
local MAX_DELAY_MS = 5000

-- Set by `start`: { socket?, parley_cmd, hello = function() -> params }.
local options = nil

-- Handlers, by method, for what the daemon sends. Each runs on the main loop.
-- A request handler returns the result (vim.NIL for null), or nil and an error
-- message; or `M.LATER`, and calls the `reply(result, err)` it is given once.
M.notification_handlers = {}
M.LATER = {}
M.request_handlers = {}

-- Listeners, called on the main loop in the order registered: "connect" with
-- the hello reply after each successful hello, "disconnect" with the reason
-- when an established connection ends.
local listeners = { connect = {}, disconnect = {} }

function M.on(event, listener)
  table.insert(listeners[event], listener)
end

local function emit(event, value)
  for _, listener in ipairs(listeners[event]) do
    local ok, err = pcall(listener, value)
    if not ok then
      vim.notify("Parley: " .. event .. " listener failed: " .. tostring(err), vim.log.levels.ERROR)
    end
  end
end

-- The live connection, or nil: { pipe, pending, next_id, buffered, alive, hello }.
local conn = nil
-- The socket path, once known.
local socket = nil
-- "stopped" (no connection wanted), "waiting" (retry timer armed), "connecting", "connected".
local state = "stopped"
local delay = FIRST_DELAY_MS
local retry_timer = nil
local last_error = nil
local attempts = 0
-- Whether this session has already started a daemon (it does so at most once).
local spawned = false
-- Set when the daemon said it was stopping on purpose (`parley stop`, a
-- service manager): no daemon is started from here until :ParleyConnect,
-- we only wait for one to come back.
local stopped_on_purpose = false
-- Whether the user has been told about the current outage (told once, not at every retry).
local told = false

local function warn_once(message)
  last_error = message
  if not told then
    told = true
    vim.notify("Parley: " .. message .. "; retrying in the background", vim.log.levels.WARN)
  end
end

-- Runs `parley socket-path`, which follows the same rules (and $PARLEY_SOCKET)
-- as every other Parley client.
function M.socket_path()
  if options and options.socket and options.socket ~= "" then
    return options.socket
  end
  if socket then
    return socket
  end
  local cmd = (options and options.parley_cmd) or "parley"
  if vim.fn.executable(cmd) ~= 1 then
    return nil,
      "cannot find the socket: `"
        .. cmd
        .. "` is not an executable on PATH; install Parley or set `socket` or `parley_cmd` in setup()"
  end
  local out = vim.fn.system({ cmd, "socket-path" })
  if vim.v.shell_error ~= 0 then
    return nil, "`" .. cmd .. " socket-path` failed: " .. vim.trim(out)
  end
  socket = vim.trim(out)
  return socket
end

local function encode(message)
  message.jsonrpc = "2.0"
  return vim.json.encode(message) .. "\n"
end

local function write(c, message)
  if not c.alive then
    return false
  end
  -- A failed write shows up as the end of the connection on the read side.
  local ok, queued = pcall(c.pipe.write, c.pipe, encode(message))
  return ok and queued ~= nil
end

local schedule_retry

-- Ends connection `c` (if it is still the live one) and arranges a retry.
-- `quiet`: do not tell the user (a daemon is being started).
local function lost(c, why, quiet)
  if not c.alive then
    return
  end
  c.alive = false
  if not c.pipe:is_closing() then
    c.pipe:close()
  end
  local was_connected = c.hello ~= nil
  if conn == c then
    conn = nil
  end
  local pending = c.pending
  c.pending = {}
  for _, callback in pairs(pending) do
    pcall(callback, "the Parley daemon went away (" .. why .. ")", nil)
  end
  if state == "stopped" then
    return
  end
  last_error = why
  if was_connected then
    emit("disconnect", why)
  elseif not quiet then
    warn_once(why)
  end
  schedule_retry()
end

local function answer(c, id, result, err)
  if err then
    write(c, { id = id, error = { code = -32603, message = err } })
  else
    write(c, { id = id, result = result == nil and vim.NIL or result })
  end
end

local function dispatch(c, message)
  if type(message) ~= "table" then
    return
  end
  local method = message.method
  if type(method) == "string" and message.id ~= nil then
    local handler = M.request_handlers[method]
    if not handler then
      write(c, { id = message.id, error = { code = -32601, message = "nvim does not handle " .. method } })
      return
    end
    local replied = false
    local function reply(result, err)
      if not replied then
        replied = true
        answer(c, message.id, result, err)
      end
    end
    local ok, result, err = pcall(handler, message.params, reply)
    if not ok then
      answer(c, message.id, nil, tostring(result))
    elseif result == M.LATER then
      return
    else
      answer(c, message.id, result, err)
    end
  elseif method == "daemon/stopping" then
    stopped_on_purpose = true
    local reason = type(message.params) == "table" and message.params.reason or "requested"
    vim.notify(
      "Parley: the daemon is stopping (" .. tostring(reason) .. "); waiting for it to come back (:ParleyConnect starts one)",
      vim.log.levels.INFO
    )
    told = true
  elseif type(method) == "string" then
    local handler = M.notification_handlers[method]
    if handler then
      local ok, err = pcall(handler, message.params)
      if not ok then
        vim.notify("Parley: handling " .. method .. " failed: " .. tostring(err), vim.log.levels.ERROR)
      end
    end
  elseif message.id ~= nil then
    local callback = c.pending[message.id]
    c.pending[message.id] = nil
    if callback then
      local ok, err
      if message.error and message.error ~= vim.NIL then
        ok, err = pcall(callback, message.error.message or vim.json.encode(message.error), nil)
      else
        ok, err = pcall(callback, nil, message.result)
      end
      if not ok then
        vim.notify("Parley: handling an answer failed: " .. tostring(err), vim.log.levels.ERROR)
      end
    end
  end
end

-- Splits what the socket gave into lines; the main loop decodes and dispatches them in order.
local function on_read(c, err, chunk)
  if err or not chunk then
    vim.schedule(function()
      lost(c, err or "the daemon closed the connection")
    end)
    return
  end
  c.buffered = c.buffered .. chunk
  local lines = {}
  while true do
    local newline = c.buffered:find("\n", 1, true)
    if not newline then
      break
    end
    lines[#lines + 1] = c.buffered:sub(1, newline - 1)
    c.buffered = c.buffered:sub(newline + 1)
  end
  if #lines == 0 then
    return
  end
  vim.schedule(function()
    for _, line in ipairs(lines) do
      if not c.alive then
        return
      end
      if line:find("%S") then
        local ok, message = pcall(vim.json.decode, line)
        if ok then
          dispatch(c, message)
        end
      end
    end
  end)
end

-- Sends a request on connection `c`; `callback(err, result)` runs on the main loop.
local function request_on(c, method, params, callback)
  c.next_id = c.next_id + 1
  local id = c.next_id
  c.pending[id] = callback or function() end
  if not write(c, { id = id, method = method, params = params }) then
    c.pending[id] = nil
    vim.schedule(function()
      lost(c, "writing to the socket failed")
    end)
    if callback then
      vim.schedule(function()
        callback("not connected to the Parley daemon", nil)
      end)
    end
  end
end

local function say_hello(c)
  request_on(c, "hello", options.hello(), function(err, reply)
    if err then
      if c.alive then
        warn_once("the daemon refused hello: " .. err)
        lost(c, err)
      end
      return
    end
    c.hello = reply
    state = "connected"
    delay = FIRST_DELAY_MS
    last_error = nil
    if told then
      told = false
      vim.notify("Parley: connected to the daemon", vim.log.levels.INFO)
    end
    emit("connect", reply)
  end)
end

local function connect()
  if state == "stopped" or conn then
    return
  end
  attempts = attempts + 1
  local path, err = M.socket_path()
  if not path then
    warn_once(err)
    schedule_retry()
    return
  end
  state = "connecting"
  local pipe = uv.new_pipe(false)
  local c = { pipe = pipe, pending = {}, next_id = 0, buffered = "", alive = true, hello = nil }
  conn = c
  pipe:connect(path, function(cerr)
    if cerr then
      vim.schedule(function()
        local starting = (cerr:find("ENOENT") or cerr:find("ECONNREFUSED")) and M.start_daemon(path)
        if starting then
          delay = FIRST_DELAY_MS
        end
        lost(c, "no daemon answers at " .. path .. " (" .. cerr .. ")", starting)
      end)
      return
    end
    pipe:read_start(function(rerr, chunk)
      on_read(c, rerr, chunk)
    end)
    vim.schedule(function()
      if c.alive then
        say_hello(c)
      end
    end)
  end)
end

-- Starts `parley daemon` in its own session, with no terminal and its log
-- beside the socket, as docs/protocol.md §1 allows an editor to do. At most
-- once per session, never when $PARLEY_NO_SPAWN is set; a second daemon on the
-- same socket refuses to start, so racing an agent's shim is harmless.
function M.start_daemon(path)
  local no_spawn = vim.env.PARLEY_NO_SPAWN
  if spawned or stopped_on_purpose or not options.start_daemon or (no_spawn and no_spawn ~= "" and no_spawn ~= "0") then
    return false
  end
  local cmd = options.parley_cmd or "parley"
  if vim.fn.executable(cmd) ~= 1 then
    return false
  end
  spawned = true
  -- The log goes beside the socket only in a folder no one else can open (the
  -- daemon refuses any other, and a shared one could hold a planted link).
  local dir = uv.fs_lstat(vim.fn.fnamemodify(path, ":h"))
  local private = dir ~= nil and dir.type == "directory" and dir.mode % 8 == 0 and math.floor(dir.mode / 8) % 8 == 0
  local log = private and uv.fs_open((path:gsub("%.sock$", "")) .. ".log", "a", 384) or nil
  -- `hide`: no console window on Windows (detached there means a process of
  -- its own, which would otherwise get one).
  local spawn_opts = { args = { "daemon" }, cwd = "/", detached = true, hide = true, stdio = { nil, nil, log } }
  local handle = uv.spawn(cmd, spawn_opts, function() end)
  if log then
    uv.fs_close(log)
  end
  if not handle then
    return false
  end
  handle:unref()
  return true
end

schedule_retry = function()
  if state == "stopped" then
    return
  end
  state = "waiting"
  if not retry_timer then
    retry_timer = uv.new_timer()
  end
  retry_timer:stop()
  retry_timer:start(delay, 0, vim.schedule_wrap(connect))
  delay = math.min(delay * 2, MAX_DELAY_MS)
end

-- Starts connecting (and keeps reconnecting) with `opts`:
-- { socket?, parley_cmd, hello = function() -> hello params }.
function M.start(opts)
  options = opts
  socket = nil
  if state ~= "stopped" then
    return
  end
  state = "waiting"
  delay = FIRST_DELAY_MS
  connect()
end

-- Closes the connection and stops reconnecting.
function M.stop()
  state = "stopped"
  if retry_timer then
    retry_timer:stop()
  end
  if conn then
    local c = conn
    conn = nil
    lost(c, "disconnected on request")
  end
end

-- Connects now (after `stop`, or to skip the back-off wait).
function M.restart()
  if not options then
    return
  end
  M.stop()
  attempts = 0
  told = false
  -- Asked for by the user: starting a daemon is allowed again.
  stopped_on_purpose = false
  spawned = false
  state = "waiting"
  delay = FIRST_DELAY_MS
  connect()
end

function M.connected()
  return state == "connected" and conn ~= nil and conn.hello ~= nil
end

-- Calls a hub method; `callback(err, result)` runs on the main loop.
function M.request(method, params, callback)
  if not M.connected() then
    local why = last_error and (": " .. last_error) or ""
    vim.schedule(function()
      if callback then
        callback("not connected to the Parley daemon" .. why, nil)
      end
    end)
    return
  end
  request_on(conn, method, params, callback)
end

function M.notify(method, params)
  if M.connected() then
    write(conn, { method = method, params = params })
  end
end

-- What the connection is doing, for :checkhealth and :ParleyStatus.
function M.status()
  return {
    state = state,
    socket = (options and options.socket) or socket,
    hello = conn and conn.hello or nil,
    error = last_error,
    attempts = attempts,
  }
end

-- Says hello on a separate, short-lived connection as a `cli` client and
-- waits for the answer; for :checkhealth. Returns the reply, or nil and why.
function M.probe(path, timeout_ms)
  local pipe = uv.new_pipe(false)
  local done, reply, failure = false, nil, nil
  local buffered = ""
  pipe:connect(path, function(err)
    if err then
      failure, done = err, true
      return
    end
    pipe:read_start(function(rerr, chunk)
      if rerr or not chunk then
        failure, done = rerr or "the daemon closed the connection", true
        return
      end
      buffered = buffered .. chunk
      local newline = buffered:find("\n", 1, true)
      if newline then
        local ok, message = pcall(vim.json.decode, buffered:sub(1, newline - 1))
        if ok and type(message) == "table" and type(message.result) == "table" then
          reply = message.result
        else
          local refused = ok and type(message) == "table" and message.error and message.error.message
          failure = refused or "an answer that is not a hello reply"
        end
        done = true
      end
    end)
    local v = vim.version()
    pipe:write(encode({
      id = 1,
      method = "hello",
      params = {
        protocol = M.PROTOCOL,
        role = "cli",
        client = { name = "nvim-health", version = string.format("%d.%d.%d", v.major, v.minor, v.patch) },
      },
    }))
  end)
  local finished = vim.wait(timeout_ms, function()
    return done
  end, 10)
  if not pipe:is_closing() then
    pipe:close()
  end
  if not finished then
    return nil, "no answer within " .. timeout_ms .. " ms"
  end
  return reply, failure
end

return M
