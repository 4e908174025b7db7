-- Asking a chosen agent about lines of code, and the agents at work: the
-- list (agents/list after each hello, then agents/changed), :ParleyAgents,
-- :ParleyAsk (a thread on the lines addressed to the agent, with
-- vim.ui.select of the agents on the file's repository when none is named,
-- and vim.ui.input for the question), :ParleyResend, which sends a
-- message waiting for an agent that has gone to another, and :ParleyType,
-- which types a message waiting for an agent into the terminal of this
-- Neovim that runs it, once the person has read the line and confirmed.

local deliveries = require("parley.deliveries")
local paths = require("parley.paths")
local rpc = require("parley.rpc")
local threads = require("parley.threads")

local api = vim.api
local M = {}

-- The agents at work, as the daemon last listed them.
M.agents = {}

-- What a person is told when no agent works on the file: how to start one.
M.NO_AGENT = "no agent is at work on this repository: start one here (Claude Code, Codex or another MCP host) "
  .. "with parley-mcp as its MCP server (`parley mcp-config HOST --write` sets it up), then ask again"

local function fail(message)
  vim.notify("Parley: " .. message, vim.log.levels.ERROR)
end

local function info(message)
  vim.notify("Parley: " .. message, vim.log.levels.INFO)
end

local function set(agents)
  M.agents = type(agents) == "table" and agents or {}
  deliveries.set_agents(M.agents)
  threads.agents_changed()
end

local function holds(folder, file)
  if type(folder) ~= "string" then
    return false
  end
  local prefix = folder:sub(-1) == "/" and folder or (folder .. "/")
  return file == folder or file:sub(1, #prefix) == prefix
end

-- The agents whose workspace holds `file`, by name.
function M.on_file(file)
  local found = {}
  for _, agent in ipairs(M.agents) do
    if holds(agent.workspace, file) then
      found[#found + 1] = agent
    end
  end
  table.sort(found, function(a, b)
    return a.name < b.name
  end)
  return found
end

-- "claude-1 (claude-code 2.1.320): waiting in await_review", or its last call.
function M.describe(agent)
  local doing
  if type(agent.waiting_in) == "string" then
    doing = "waiting in " .. agent.waiting_in
  elseif type(agent.last_call) == "string" then
    doing = "last call " .. agent.last_call .. (type(agent.last_call_at) == "string" and (" at " .. agent.last_call_at) or "")
  else
    doing = "no Parley call yet, at work since " .. tostring(agent.since)
  end
  local waiting = tonumber(agent.messages_waiting) or 0
  local messages = waiting > 0 and string.format(" · %d message%s waiting for it", waiting, waiting == 1 and "" or "s") or ""
  local host = tostring(agent.host or "?") .. (agent.host_version and agent.host_version ~= "" and (" " .. agent.host_version) or "")
  return string.format("%s (%s): %s%s", agent.name, host, doing, messages)
end

-- Names of the agents at work, for command completion.
function M.names()
  local names = {}
  for _, agent in ipairs(M.agents) do
    names[#names + 1] = agent.name
  end
  table.sort(names)
  return names
end

-- :ParleyAgents — the agents at work, one line each.
function M.list()
  if #M.agents == 0 then
    return info(M.NO_AGENT)
  end
  local lines = {}
  for _, agent in ipairs(M.agents) do
    lines[#lines + 1] = M.describe(agent) .. " · " .. tostring(agent.workspace or "?")
  end
  table.sort(lines)
  info(#lines .. " agent" .. (#lines == 1 and "" or "s") .. " at work:\n" .. table.concat(lines, "\n"))
end

-- Picks one of `agents` with vim.ui.select (always: a person must know who gets the message).
local function pick(agents, prompt, next)
  vim.ui.select(agents, {
    prompt = prompt,
    format_item = M.describe,
    kind = "parley_agent",
  }, function(choice)
    if choice then
      next(choice)
    end
  end)
end

-- Finds `name` among `agents`, or says which there are.
local function named(agents, name)
  for _, agent in ipairs(agents) do
    if agent.name == name then
      return agent
    end
  end
  local names = {}
  for _, agent in ipairs(agents) do
    names[#names + 1] = agent.name
  end
  fail(string.format("no agent named %s works on this file; at work here: %s", name, #names > 0 and table.concat(names, ", ") or "none"))
  return nil
end

-- :ParleyAsk [agent] [message] — on a visual range or the cursor's line.
-- The first word is the agent when it names one at work on the file.
function M.ask(opts)
  local buf = api.nvim_get_current_buf()
  local file = paths.of_buffer(buf)
  if not file then
    return fail("ask about a file: this buffer has no file on disk")
  end
  local line1 = opts.range > 0 and opts.line1 or api.nvim_win_get_cursor(0)[1]
  local line2 = opts.range > 0 and opts.line2 or line1
  local candidates = M.on_file(file)
  if #candidates == 0 then
    return info(M.NO_AGENT)
  end
  local args = vim.trim(opts.args or "")
  local first, rest = args:match("^(%S+)%s*(.*)$")
  local given
  if first then
    for _, agent in ipairs(candidates) do
      if agent.name == first then
        given, args = agent, rest
      end
    end
  end
  local function send(agent)
    threads.with_text("Ask " .. agent.name .. ": ", args, function(message)
      local params = {
        agent = agent.name,
        path = file,
        start_line = line1 - 1,
        end_line = line2 - 1,
        message = vim.trim(message),
        author = threads.author(),
      }
      rpc.request("agent/ask", params, function(err, result)
        if err then
          return fail("asking " .. agent.name .. " failed: " .. tostring(err))
        end
        threads.apply("created", result.thread, false)
        local delivery = type(result.delivery) == "table" and deliveries.label(result.delivery) or "sent"
        info(string.format("asked %s about %s:%d-%d: %s", agent.name, result.thread.path or file, line1, line2, delivery))
      end)
    end)
  end
  if given then
    return send(given)
  end
  pick(candidates, string.format("Ask which agent about lines %d-%d?", line1, line2), send)
end

-- :ParleyResend [agent] — the message of the thread under the cursor that
-- waits for an agent (one that has gone) goes to another agent at work.
function M.resend(name)
  local thread = threads.at_cursor()
  if not thread then
    return fail("no thread under the cursor (:ParleyThreads lists them)")
  end
  local newest = deliveries.newest(thread)
  if not newest or newest.state ~= "waiting" then
    return info("no message of this thread waits for an agent")
  end
  local candidates = vim.tbl_filter(function(agent)
    return agent.name ~= newest.agent
  end, M.on_file(paths.canonical(thread.file)))
  if #candidates == 0 then
    return info(M.NO_AGENT)
  end
  local function send(agent)
    rpc.request("agent/resend", { thread_id = thread.id, agent = agent.name }, function(err, result)
      if err then
        return fail("sending to " .. agent.name .. " failed: " .. tostring(err))
      end
      threads.apply("replied", result.thread, false)
      info("sent to " .. agent.name .. " instead of " .. tostring(newest.agent))
    end)
  end
  name = vim.trim(name or "")
  if name ~= "" then
    local agent = named(candidates, name)
    if agent then
      send(agent)
    end
    return
  end
  pick(candidates, "Send to which agent instead of " .. tostring(newest.agent) .. "?", send)
end

-- The terminal of this Neovim that runs `agent`, as {buf, chan, pid}, or
-- nil: only when the agent's PARLEY_EDITOR_ID is this Neovim's, the
-- terminal whose job is the agent's host, else the nearest of the host's
-- ancestors (the shell the host was started from).
function M.terminal_of(agent)
  if type(agent) ~= "table" or agent.editor_id == nil or agent.editor_id ~= require("parley").editor_id() then
    return nil
  end
  local terminals = {}
  for _, buf in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_is_loaded(buf) and vim.bo[buf].buftype == "terminal" then
      local ok, pid = pcall(api.nvim_buf_get_var, buf, "terminal_job_pid")
      local chan = vim.bo[buf].channel
      if ok and type(pid) == "number" and chan and chan > 0 then
        terminals[pid] = { buf = buf, chan = chan, pid = pid }
      end
    end
  end
  local chain = { agent.host_pid }
  for _, pid in ipairs(type(agent.host_ancestors) == "table" and agent.host_ancestors or {}) do
    chain[#chain + 1] = pid
  end
  for _, pid in ipairs(chain) do
    if terminals[pid] then
      return terminals[pid]
    end
  end
  return nil
end

-- :ParleyType — the message of the thread under the cursor that waits for
-- an agent running in one of this Neovim's terminals: the exact line is
-- shown (vim.fn.confirm), and typed there with Enter once confirmed.
function M.type_into_terminal()
  local thread = threads.at_cursor()
  if not thread then
    return fail("no thread under the cursor (:ParleyThreads lists them)")
  end
  local newest = deliveries.newest(thread)
  if not newest or newest.state ~= "waiting" then
    return info("no message of this thread waits for an agent")
  end
  local agent
  for _, candidate in ipairs(M.agents) do
    if candidate.name == newest.agent then
      agent = candidate
    end
  end
  if not agent then
    return info(tostring(newest.agent) .. " is no longer at work: send the message to another agent (:ParleyResend)")
  end
  local terminal = M.terminal_of(agent)
  if not terminal then
    return info(
      agent.name
        .. " does not run in a terminal of this Neovim; it gets the message with its next Parley tool answer or through its host's hooks"
    )
  end
  rpc.request("agent/typed", { thread_id = thread.id, preview = true }, function(err, preview)
    if err then
      return fail("typing into " .. agent.name .. "'s terminal failed: " .. tostring(err))
    end
    local choice = vim.fn.confirm(
      "Type this into " .. agent.name .. "'s terminal and press Enter?\n\n" .. preview.text,
      "&Type\n&Cancel",
      2
    )
    if choice ~= 1 then
      return
    end
    rpc.request("agent/typed", { thread_id = thread.id }, function(err2, typed)
      if err2 then
        return fail("typing into " .. agent.name .. "'s terminal failed: " .. tostring(err2))
      end
      if not api.nvim_buf_is_valid(terminal.buf) then
        return fail(agent.name .. "'s terminal was closed meanwhile: send the message again with :ParleyResend")
      end
      vim.fn.chansend(terminal.chan, typed.text .. "\r")
      threads.apply("delivery", typed.thread, false)
      info("typed into " .. agent.name .. "'s terminal")
    end)
  end)
end

local attached = false

-- Registers the handlers; called from setup() (once is enough).
function M.attach()
  if attached then
    return
  end
  attached = true
  rpc.notification_handlers["agents/changed"] = function(params)
    if type(params) == "table" then
      set(params.agents)
    end
  end
  rpc.on("connect", function()
    rpc.request("agents/list", vim.empty_dict(), function(err, result)
      -- A daemon older than agents refuses the method: the window works without them.
      if not err and type(result) == "table" then
        set(result.agents)
      end
    end)
  end)
end

return M
