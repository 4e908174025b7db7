-- Keeps this window's copy of the reviews, threads and walkthroughs in step
-- with the daemon: the first fetch after hello, live events, and the
-- catch-up after a reconnect (events/replay when the same daemon run is still there, a full
-- refetch when it is not or when the replay is incomplete).
--
-- Every event carries the whole review or thread, so applying events in
-- sequence order always ends at the daemon's state; `seq` only decides which
-- events were already seen.

local rpc = require("parley.rpc")
local reviews = require("parley.review")
local threads = require("parley.threads")
local walkthroughs = require("parley.walkthroughs")

local M = {}

-- The highest event sequence number applied, and the daemon run it belongs to.
M.seq = 0
M.instance = nil
-- While a catch-up is in flight, live events wait here: { {method, params}, … }.
local queued = nil
-- Set when the next connection must refetch everything (new workspaces).
local force_refetch = false
-- Whether state has ever been fetched (the first fetch announces nothing).
local fetched_once = false

local function apply(method, params, live)
  if type(params) ~= "table" then
    return
  end
  local seq = tonumber(params.seq) or 0
  if seq ~= 0 and seq <= M.seq then
    return
  end
  if method == "review/updated" then
    reviews.update(params.review, live)
  elseif method == "feedback/changed" then
    threads.apply(params.change, params.thread, live)
    walkthroughs.thread_changed(params.thread)
  elseif method == "walkthrough/updated" then
    walkthroughs.update(params.walkthrough, live)
  end
  if seq > M.seq then
    M.seq = seq
  end
end

local function drain()
  local waiting = queued or {}
  queued = nil
  for _, event in ipairs(waiting) do
    apply(event[1], event[2], true)
  end
end

local function on_event(method)
  return function(params)
    if queued then
      queued[#queued + 1] = { method, params }
    else
      apply(method, params, true)
    end
  end
end

-- Says why a fetch failed, unless the connection is gone (the reconnect fetches again).
local function failed(what, err)
  if rpc.connected() then
    vim.notify("Parley: " .. what .. " failed: " .. tostring(err), vim.log.levels.WARN)
  end
end

-- Fetches reviews and threads afresh; events that arrive meanwhile are applied after.
local function refetch(hello)
  local got_reviews, got_threads
  local function finish()
    if got_reviews == nil or got_threads == nil then
      return
    end
    if not got_reviews or not got_threads then
      -- Most likely the connection went away meanwhile: the next one starts over.
      force_refetch = true
      queued = nil
      return
    end
    reviews.replace_all(got_reviews, fetched_once)
    threads.replace_all(got_threads)
    fetched_once = true
    M.seq = tonumber(hello.seq) or 0
    M.instance = hello.instance
    drain()
  end
  rpc.request("review/get", vim.empty_dict(), function(err, result)
    if err then
      failed("review/get", err)
    end
    got_reviews = (not err and type(result) == "table" and result.reviews) or false
    finish()
  end)
  rpc.request("feedback/list", vim.empty_dict(), function(err, result)
    if err then
      failed("feedback/list", err)
    end
    got_threads = (not err and type(result) == "table" and result.threads) or false
    finish()
  end)
end

local function on_connect(hello)
  queued = {}
  local same_run = not force_refetch and fetched_once and M.instance ~= nil and hello.instance == M.instance
  force_refetch = false
  if not same_run then
    refetch(hello)
    return
  end
  rpc.request("events/replay", { after = M.seq, instance = M.instance }, function(err, result)
    if err or type(result) ~= "table" or not result.complete then
      refetch(hello)
      return
    end
    for _, event in ipairs(result.events or {}) do
      apply(event.method, event.params, true)
    end
    drain()
  end)
end

local attached = false

-- Registers the handlers; called from setup() (once is enough).
function M.attach()
  if attached then
    return
  end
  attached = true
  rpc.notification_handlers["review/updated"] = on_event("review/updated")
  rpc.notification_handlers["feedback/changed"] = on_event("feedback/changed")
  rpc.notification_handlers["walkthrough/updated"] = on_event("walkthrough/updated")
  rpc.on("connect", on_connect)
  rpc.on("disconnect", function()
    queued = nil
  end)
end

-- The next connection fetches everything again (its hello names new workspaces).
function M.refetch_next()
  force_refetch = true
end

return M
