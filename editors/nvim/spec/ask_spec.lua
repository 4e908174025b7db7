-- A person asks a chosen one of two agents about lines with :ParleyAsk, and
-- sees where the question stands as the agent takes it: waiting, delivered
-- (in its next tool answer), read, answered; then a question to an agent
-- that leaves says so, and :ParleyResend gives it to the other. Driven by
-- tests/tests/nvim.rs (a_person_asks_a_chosen_agent_in_nvim), which plays
-- both agents.

local h = require("helpers")
local api = vim.api

describe(":ParleyAsk", function()
  local asking = require("parley.asking")
  local buf, thread_id, second_id
  local offered = {}

  -- vim.ui.select answered as a person would: the item named `name`, the choices kept.
  local function choose(name)
    vim.ui.select = function(items, opts, on_choice)
      offered = {}
      for i, item in ipairs(items) do
        offered[i] = opts.format_item and opts.format_item(item) or tostring(item)
      end
      for _, item in ipairs(items) do
        if item.name == name then
          return on_choice(item)
        end
      end
      on_choice(nil)
    end
  end

  local function answer(text)
    vim.ui.input = function(_, on_confirm)
      on_confirm(text)
    end
  end

  local function standing_of(id)
    local mark = h.thread_mark(buf, id)
    return mark and mark.standing or ""
  end

  local function wait_standing(id, pattern)
    h.wait_for("the thread to say " .. pattern .. " (it says " .. standing_of(id) .. ")", function()
      return standing_of(id):find(pattern, 1, true) ~= nil
    end)
  end

  it("knows the two agents at work", function()
    h.setup()
    h.wait_for("two agents", function()
      return #asking.agents == 2
    end)
    vim.cmd("ParleyAgents")
    assert.is_truthy(h.noted("2 agents at work"))
    assert.is_truthy(h.noted("alpha %("))
    h.reached("connected")
  end)

  it("asks the agent picked among those on the file, about the selected lines", function()
    vim.cmd("edit src/auth.rs")
    buf = api.nvim_get_current_buf()
    choose("beta")
    answer("Why check the token here?")
    vim.cmd("6,7ParleyAsk")
    assert.equals(2, #offered)
    assert.is_truthy(offered[1]:find("^alpha"))
    assert.is_truthy(offered[2]:find("^beta"))
    h.wait_for("the thread", function()
      for id, thread in pairs(require("parley.threads").threads) do
        if thread.comments[1].body == "Why check the token here?" then
          thread_id = id
          return true
        end
      end
    end)
    wait_standing(thread_id, "waiting for beta")
    local mark = h.thread_mark(buf, thread_id)
    assert.equals(5, mark.row)
    h.reached("asked", { thread = thread_id })
  end)

  it("shows the question delivered, read and answered as beta takes it", function()
    h.await("delivered")
    wait_standing(thread_id, "delivered to beta (in its next tool answer)")
    h.reached("saw-delivered")
    h.await("read")
    wait_standing(thread_id, "read by beta")
    h.reached("saw-read")
    h.await("answered")
    wait_standing(thread_id, "answered by beta")
    h.reached("saw-answered")
  end)

  it("names the agent on the command line; one that leaves is said gone, and :ParleyResend sends to the other", function()
    h.cursor_to("fn logout")
    vim.cmd("ParleyAsk alpha Does anyone call this?")
    h.wait_for("the second thread", function()
      for id, thread in pairs(require("parley.threads").threads) do
        if thread.comments[1].body == "Does anyone call this?" then
          second_id = id
          return true
        end
      end
    end)
    wait_standing(second_id, "waiting for alpha")
    h.reached("asked-alpha", { thread = second_id })
    h.await("alpha-gone")
    h.wait_for("one agent", function()
      return #asking.agents == 1
    end)
    wait_standing(second_id, "waiting for alpha, which is no longer at work")
    h.cursor_to("fn logout")
    choose("beta")
    vim.cmd("ParleyResend")
    assert.equals(1, #offered)
    wait_standing(second_id, "waiting for beta")
    h.reached("resent")
  end)
end)
