-- What this window knows of the review rounds waiting on a person, as the
-- daemon described them, and the small readings of that data the views, the
-- drafts and the inbox share (with the way they word a failure or a
-- message). Nothing here touches a buffer or a window.
--
-- The tables below keep their identity for the life of the plugin (the
-- inbox refills `waiting` in place), so a module that holds one stays current.
--
-- Lines on the wire are 0-based, ranges include their last line.

local M = {}

-- review_id → WaitingRound, for the rounds waiting on a person in this window's folders.
M.waiting = {}
-- The threads waiting on a person's answer, as the last `inbox` gave them.
M.inbox_threads = {}
-- review_id → the round as round/get described it, drafts kept current, for rounds opened here.
M.rounds = {}
-- Rounds submitted from this window: their round/changed needs no second message.
M.submitted_here = {}

M.VERDICTS = { "approve", "request_changes", "comment" }

-- Replaces the contents of `target` with those of `source`, keeping `target` itself.
local function refill(target, source)
  for key in pairs(target) do
    target[key] = nil
  end
  for key, item in pairs(source) do
    target[key] = item
  end
end

-- What the last `inbox` said waits: the rounds by id, and the threads.
function M.set_inbox(rounds, threads)
  refill(M.waiting, rounds)
  refill(M.inbox_threads, threads)
end

-- JSON null arrives as vim.NIL.
function M.value(x)
  if x == vim.NIL then
    return nil
  end
  return x
end

function M.first_line(text)
  return ((M.value(text) or ""):match("^[^\n]*"))
end

function M.fail(message)
  vim.notify("Parley: " .. message, vim.log.levels.ERROR)
end

function M.info(message)
  vim.notify("Parley: " .. message, vim.log.levels.INFO)
end

function M.plural(n, word)
  return n .. " " .. word .. (n == 1 and "" or "s")
end

-- The lines of a file's text, or nil when there is none (added, deleted, binary, too large).
function M.text_lines(text)
  text = M.value(text)
  if text == nil then
    return nil
  end
  local lines = vim.split(text, "\n", { plain = true })
  if #lines > 0 and lines[#lines] == "" then
    table.remove(lines)
  end
  return lines
end

function M.file_of(round, path)
  for _, file in ipairs(round.files or {}) do
    if file.path == path then
      return file
    end
  end
  return nil
end

function M.previous_round(round)
  return tonumber(M.value(round.previous_round))
end

-- Whether a file is the same as at the previous round (so it starts collapsed).
function M.unchanged_since(round, file)
  return M.previous_round(round) ~= nil and file.changed_since_previous == false
end

-- The waiting rounds, newest first.
function M.waiting_list()
  local list = vim.tbl_values(M.waiting)
  table.sort(list, function(a, b)
    if (a.requested_at or "") ~= (b.requested_at or "") then
      return (a.requested_at or "") > (b.requested_at or "")
    end
    return a.review_id > b.review_id
  end)
  return list
end

-- Whether a round reviews an agent's plan rather than a change (`plan` in
-- the inbox and round/requested, `scope` "plan" in round/get).
function M.is_plan(round)
  return type(round) == "table" and (round.plan == true or round.scope == "plan")
end

-- A plan's title: its summary without the "Plan: " the daemon puts first.
function M.plan_title(summary)
  return (M.first_line(summary):gsub("^%s*Plan:%s*", ""))
end

-- The host a plan came from, as people name it: "Claude Code" for claude-code.
function M.host_name(asked_by)
  local hosts = { ["claude-code"] = "Claude Code", codex = "Codex" }
  return hosts[M.value(asked_by) or ""] or "the agent's host"
end

-- The number of drafts on `path` in `round`.
function M.drafts_on(round, path)
  local n = 0
  for _, draft in ipairs(round.drafts or {}) do
    if draft.path == path then
      n = n + 1
    end
  end
  return n
end

return M
