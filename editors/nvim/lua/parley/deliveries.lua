-- Where a person's messages to agents stand (a thread's `deliveries`), in
-- the words threads show them with: "waiting for claude-1", "delivered to
-- claude-1 (in its next tool answer)", "read by claude-1", "answered by
-- claude-1", and whether the agent a message waits for is still at work.
-- Holds the names of the agents at work (set from agents/list and
-- agents/changed); touches no buffer.

local M = {}

-- name → true for each agent at work; nil until the daemon has said.
M.at_work = nil

local VIA = {
  ["tool-answer"] = "in its next tool answer",
  wait = "in the call it was waiting in",
  channel = "pushed to its session",
  hook = "through its host's hook",
  terminal = "typed into its terminal",
  feedback = "found in its feedback",
}

-- Replaces the agents at work with `agents` (as agents/list gives them).
function M.set_agents(agents)
  local names = {}
  for _, agent in ipairs(agents or {}) do
    if type(agent) == "table" and agent.name then
      names[agent.name] = true
    end
  end
  M.at_work = names
end

-- Whether `delivery` still waits for an agent no longer at work.
function M.gone(delivery)
  return delivery.state == "waiting" and M.at_work ~= nil and not M.at_work[delivery.agent]
end

-- Where one message stands, in words. `opts.resendable = false` for a
-- message :ParleyResend cannot send elsewhere (a walkthrough's click).
function M.label(delivery, opts)
  local agent = tostring(delivery.agent or "an agent")
  local state = delivery.state
  if state == "waiting" then
    if M.gone(delivery) then
      local resend = (opts and opts.resendable == false) and "" or " (:ParleyResend)"
      return "waiting for " .. agent .. ", which is no longer at work" .. resend
    end
    return "waiting for " .. agent
  elseif state == "delivered" then
    local via = type(delivery.via) == "string" and (VIA[delivery.via] or ("by " .. delivery.via)) or nil
    return "delivered to " .. agent .. (via and (" (" .. via .. ")") or "")
  elseif state == "read" then
    return "read by " .. agent
  elseif state == "answered" then
    return "answered by " .. agent
  end
  return tostring(state) .. " (" .. agent .. ")"
end

-- The thread's newest message to an agent (by the order of its comments), or nil.
function M.newest(thread)
  local deliveries = type(thread.deliveries) == "table" and thread.deliveries or {}
  if #deliveries == 0 then
    return nil
  end
  local order = {}
  for i, comment in ipairs(thread.comments or {}) do
    order[comment.id] = i
  end
  local best, best_at = nil, -1
  for _, delivery in ipairs(deliveries) do
    local at = order[delivery.comment_id] or 0
    if at >= best_at then
      best, best_at = delivery, at
    end
  end
  return best
end

-- What the thread shows of its messages to agents: the newest's label, or nil.
function M.of_thread(thread)
  local newest = M.newest(thread)
  return newest and M.label(newest) or nil
end

return M
