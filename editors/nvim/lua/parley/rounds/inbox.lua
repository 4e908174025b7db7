-- Being asked, and keeping up: the daemon tells this window of each round
-- of its folders an agent asks for (round/requested), and `inbox`, asked
-- after every hello, gives the rounds that were waiting before; the person is
-- told of each once. round/changed keeps the drafts of an open round in step,
-- and closes the round when it was submitted or cancelled. :ParleyInbox lists
-- the rounds and the threads waiting on the person.

local config = require("parley.config")
local model = require("parley.rounds.model")
local views = require("parley.rounds.views")
local rpc = require("parley.rpc")

local api = vim.api
local value, first_line, fail, info, plural = model.value, model.first_line, model.fail, model.info, model.plural
local M = {}

-- "id#round" → true once the person was told of that round.
local announced = {}

local function announce(waiting)
  local key = tostring(waiting.review_id) .. "#" .. tostring(waiting.round)
  if announced[key] then
    return
  end
  announced[key] = true
  if not config.options.notify then
    return
  end
  if model.is_plan(waiting) then
    local again = (tonumber(waiting.round) or 1) > 1 and (" (revised, plan " .. waiting.round .. ")") or ""
    vim.notify(
      string.format(
        "Parley: %s asks you to review its plan%s: %s — :ParleyReviewRound %s",
        value(waiting.asked_by) or "an agent",
        again,
        model.plan_title(waiting.summary),
        waiting.review_id
      ),
      vim.log.levels.INFO
    )
    return
  end
  local again = (tonumber(waiting.round) or 1) > 1 and (" again (round " .. waiting.round .. ")") or ""
  vim.notify(
    string.format(
      "Parley: %s asks you to review%s: %s — :ParleyReviewRound %s",
      value(waiting.asked_by) or "an agent",
      again,
      first_line(waiting.summary),
      waiting.review_id
    ),
    vim.log.levels.INFO
  )
end

local function on_requested(params)
  if type(params) ~= "table" or not params.review_id then
    return
  end
  model.waiting[params.review_id] = params
  announce(params)
end

local function on_changed(params)
  if type(params) ~= "table" or not params.review_id then
    return
  end
  local id = params.review_id
  local round = model.rounds[id]
  local same_round = not round or not params.round or tonumber(params.round) == tonumber(round.round)
  if params.state == "drafts" then
    if model.waiting[id] then
      model.waiting[id].drafts = #(params.drafts or {})
    end
    if round and same_round then
      round.drafts = params.drafts or {}
      views.redraw(id)
    end
    return
  end
  -- submitted or cancelled: the round no longer waits.
  local waiting = model.waiting[id]
  if waiting and (not params.round or tonumber(params.round) == tonumber(waiting.round)) then
    model.waiting[id] = nil
  end
  local plan = model.is_plan(waiting) or model.is_plan(round)
  if not same_round then
    return
  end
  local was_open = round ~= nil or views.of(id) ~= nil
  views.close(id)
  if model.submitted_here[id] then
    model.submitted_here[id] = nil
    return
  end
  if config.options.notify and (was_open or waiting) then
    if params.state == "cancelled" then
      info("review " .. id .. " was cancelled by the agent")
    elseif params.state == "answered_elsewhere" then
      local asked_by = (waiting and waiting.asked_by) or (round and round.asked_by)
      local what = plan and ("the plan " .. id .. " (" .. model.plan_title((waiting or round).summary) .. ")") or ("review " .. id)
      info(what .. " was answered in " .. model.host_name(asked_by) .. "; it no longer waits for you")
    else
      local verdict = value(params.verdict)
      info("review " .. id .. " was submitted" .. (verdict and (" (" .. verdict .. ")") or "") .. " elsewhere")
    end
  end
end

local function workspaces()
  local ok, parley = pcall(require, "parley")
  if ok and parley.workspaces then
    return parley.workspaces()
  end
  return { (vim.uv or vim.loop).cwd() }
end

-- Asks the daemon what waits on a person in this window's folders; `done(err)` after.
function M.refresh(done)
  local folders = workspaces()
  local rounds, threads, seen, left, failure = {}, {}, {}, #folders, nil
  for _, folder in ipairs(folders) do
    rpc.request("inbox", { workspace = folder }, function(err, result)
      if err then
        failure = err
      elseif type(result) == "table" then
        for _, w in ipairs(result.rounds or {}) do
          rounds[w.review_id] = w
        end
        for _, t in ipairs(result.threads or {}) do
          if not seen[t.id] then
            seen[t.id] = true
            threads[#threads + 1] = t
          end
        end
      end
      left = left - 1
      if left > 0 then
        return
      end
      if not failure then
        model.set_inbox(rounds, threads)
        for _, w in pairs(rounds) do
          announce(w)
        end
        -- Rounds open here that no longer wait were submitted or cancelled meanwhile.
        local open = vim.tbl_extend("force", {}, model.rounds)
        for _, id in ipairs(views.open_ids()) do
          open[id] = true
        end
        for id in pairs(open) do
          if not rounds[id] then
            views.close(id)
          end
        end
      end
      if done then
        done(failure)
      end
    end)
  end
end

-- After a reconnect: refetch the open rounds, whose drafts may have changed meanwhile.
local function catch_up()
  M.refresh(function(err)
    if err then
      return
    end
    for _, id in ipairs(views.open_ids()) do
      if model.waiting[id] then
        rpc.request("round/get", { review_id = id }, function(gerr, round)
          if not gerr and type(round) == "table" and model.rounds[id] and round.round == model.rounds[id].round then
            model.rounds[id].drafts = round.drafts or {}
            model.rounds[id].earlier = round.earlier or {}
            views.redraw(id)
          end
        end)
      end
    end
  end)
end

local function latest_time(thread)
  local comments = thread.comments or {}
  local latest = comments[#comments]
  return (latest and latest.created_at) or thread.updated_at or thread.created_at or ""
end

-- :ParleyInbox — the rounds waiting on you, then the threads waiting on your answer, each newest first.
function M.inbox()
  M.refresh(function(err)
    if err then
      fail("the inbox could not be read: " .. tostring(err) .. " (showing what this window knew)")
    end
    local items, context = {}, {}
    for _, w in ipairs(model.waiting_list()) do
      local files = #(w.files or {})
      local drafts = tonumber(w.drafts) or 0
      local plan = model.is_plan(w)
      local text = string.format(
        "%s %s %s %s · %s: %s (%s%s) — :ParleyReviewRound %s",
        plan and "plan" or "review",
        w.review_id,
        plan and "version" or "round",
        tostring(w.round),
        value(w.asked_by) or "an agent",
        plan and model.plan_title(w.summary) or first_line(w.summary),
        plan and "the plan" or plural(files, "file"),
        drafts > 0 and (", " .. plural(drafts, "draft")) or "",
        w.review_id
      )
      items[#items + 1] = { text = text, valid = 0 }
      context[#items] = { review_id = w.review_id }
    end
    local list = vim.list_extend({}, model.inbox_threads)
    table.sort(list, function(a, b)
      return latest_time(a) > latest_time(b)
    end)
    for _, t in ipairs(list) do
      local comments = t.comments or {}
      local latest = comments[#comments] or {}
      local range = t.range or { start = { line = 0, character = 0 } }
      items[#items + 1] = {
        filename = t.file,
        lnum = range.start.line + 1,
        col = range.start.character + 1,
        text = "thread · " .. tostring(latest.author or "?") .. ": " .. first_line(latest.body),
        valid = 1,
      }
      context[#items] = { thread_id = t.id }
    end
    vim.fn.setqflist({}, " ", { title = "Parley inbox", items = items, context = { parley_inbox = context } })
    if #items == 0 then
      info("nothing waits for you: no review round, no thread to answer")
    end
    vim.cmd("botright copen")
    -- <CR> on a round opens it; on a thread, the quickfix list's own jump.
    vim.keymap.set("n", "<CR>", function()
      local qf = vim.fn.getqflist({ context = 0 })
      local entries = type(qf.context) == "table" and qf.context.parley_inbox
      local line = vim.fn.line(".")
      local entry = entries and entries[line]
      if entry and entry.review_id then
        vim.cmd("wincmd p")
        views.review(entry.review_id)
      else
        vim.cmd(line .. "cc")
      end
    end, { buffer = api.nvim_get_current_buf(), desc = "Parley: open the round or thread" })
  end)
end

-- The number of rounds waiting on this window's person, for :ParleyStatus.
function M.count()
  return vim.tbl_count(model.waiting)
end

local attached = false

-- Registers the handlers; called from setup() (once is enough).
function M.attach()
  if attached then
    return
  end
  attached = true
  rpc.notification_handlers["round/requested"] = on_requested
  rpc.notification_handlers["round/changed"] = on_changed
  rpc.on("connect", catch_up)
end

return M
