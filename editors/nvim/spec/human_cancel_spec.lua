-- A review round the agent cancels while the person has it open: told live
-- (round/requested), opened without an id, then closed with a message when
-- the agent cancels it. Driven by tests/tests/nvim.rs
-- (a_human_review_the_agent_cancels_closes_in_nvim).

local h = require("helpers")
local api = vim.api

describe("a cancelled review round", function()
  local rounds = require("parley.rounds")
  local id

  local function round_buffers()
    local found = {}
    for _, buf in ipairs(api.nvim_list_bufs()) do
      if api.nvim_buf_is_valid(buf) and api.nvim_buf_get_name(buf):find("parley-round://", 1, true) then
        found[#found + 1] = api.nvim_buf_get_name(buf)
      end
    end
    return found
  end

  it("connects", function()
    h.setup()
    h.reached("connected")
  end)

  it("is told at once when an agent asks, and opens the newest round without an id", function()
    id = h.await("requested").id
    h.wait_for("the notification", function()
      return h.noted("asks you to review: Log out quietly")
    end)
    assert.is_truthy(rounds.waiting[id])
    vim.cmd("ParleyReviewRound")
    h.wait_for("the round's tab", function()
      return #api.nvim_list_tabpages() == 2
    end)
    assert.equals("parley-round://" .. id .. "/new/src/auth.rs", api.nvim_buf_get_name(0))
    h.cursor_to("session::end();")
    vim.cmd("ParleyRoundComment Why end the session here?")
    h.wait_for("the draft", function()
      return #rounds.rounds[id].drafts == 1
    end)
  end)

  it("closes the round when the agent cancels it, saying so", function()
    h.reached("drafted")
    h.await("cancelled")
    h.wait_for("the round to close", function()
      return #api.nvim_list_tabpages() == 1 and #round_buffers() == 0
    end)
    h.wait_for("the message", function()
      return h.noted(vim.pesc("review " .. id .. " was cancelled by the agent"))
    end)
    assert.is_nil(rounds.waiting[id])
    vim.cmd("ParleyRoundSubmit approve")
    assert.is_truthy(h.noted("no review round waits for you here"))
  end)
end)
