-- A person reviews Claude Code's plans in Neovim while the real plan hook
-- waits: the plan is told as a plan, opened as one file, given a suggestion
-- and sent back; the revised plan shows the changes since the first and is
-- approved with a comment; a third plan, answered in Claude Code (its hook
-- killed), leaves Neovim saying so. Driven by tests/tests/nvim.rs
-- (a_person_reviews_an_agents_plans_in_nvim), which runs the hooks and
-- checks what each prints.

local h = require("helpers")
local api = vim.api

describe("plans", function()
  local rounds = require("parley.rounds")
  local model = require("parley.rounds.model")
  local id

  local function list_text()
    local view = require("parley.rounds.views").of(id)
    if not view or not api.nvim_buf_is_valid(view.list_buf) then
      return ""
    end
    return h.buffer_text(view.list_buf)
  end

  local function contains(haystack, needle)
    assert(haystack:find(needle, 1, true), "expected " .. vim.inspect(needle) .. " in:\n" .. haystack)
  end

  it("connects", function()
    h.setup()
    h.reached("connected")
  end)

  it("tells of the plan as a plan and opens it as one file", function()
    id = h.await("plan-1").id
    h.wait_for("the notification", function()
      return h.noted("claude%-code asks you to review its plan: Tax in cart totals")
    end)
    assert.is_true(model.is_plan(rounds.waiting[id]))
    vim.cmd("ParleyReviewRound " .. id)
    h.wait_for("the plan's tab", function()
      return #api.nvim_list_tabpages() == 2
    end)
    contains(list_text(), "Plan 1 of claude-code")
    contains(list_text(), "Tax in cart totals")
    contains(list_text(), "The whole plan")
    assert.equals("parley-round://" .. id .. "/new/tax-in-cart-totals.md", api.nvim_buf_get_name(0))
  end)

  it("sends a suggestion on a line of the plan back with request_changes", function()
    h.cursor_to("2. Drop the rounding")
    vim.cmd("ParleyRoundSuggest Keep the rounding: invoices depend on it")
    local editor = api.nvim_get_current_buf()
    local lines = api.nvim_buf_get_lines(editor, 0, -1, false)
    local at
    for i, line in ipairs(lines) do
      if line == "2. Drop the rounding in `total`" then
        at = i
      end
    end
    assert.is_truthy(at, "the suggestion holds the line: " .. vim.inspect(lines))
    api.nvim_buf_set_lines(editor, at - 1, at, false, { "2. Round once, in `total`" })
    vim.cmd("write")
    h.wait_for("the draft", function()
      return #(model.rounds[id].drafts or {}) == 1
    end)
    vim.cmd("ParleyRoundSubmit request_changes Close, but keep the rounding")
    h.wait_for("the verdict sent", function()
      return h.noted("changes requested: the agent revises the plan")
    end)
    h.reached("changes-requested")
  end)

  it("shows the revised plan's changes since the first, and approves it with a comment", function()
    h.await("plan-2")
    h.wait_for("the notification", function()
      return h.noted("asks you to review its plan %(revised, plan 2%): Tax in cart totals")
    end)
    vim.cmd("ParleyReviewRound " .. id .. " since")
    h.wait_for("the plan's tab", function()
      return #api.nvim_list_tabpages() == 2 and list_text():find("Plan 2 of", 1, true) ~= nil
    end)
    contains(list_text(), "Changes since plan 1")
    h.cursor_to("4. Test with the fixtures")
    vim.cmd("ParleyRoundComment Run them in CI too")
    h.wait_for("the draft", function()
      return #(model.rounds[id].drafts or {}) == 1
    end)
    vim.cmd("ParleyRoundSubmit approve")
    h.wait_for("the verdict sent", function()
      return h.noted("approved with comments")
    end)
    h.reached("approved")
  end)

  it("says so when a plan is answered in Claude Code", function()
    h.await("plan-3")
    h.wait_for("the notification", function()
      return h.noted("plan 3%)")
    end)
    h.reached("told-3")
    h.await("killed")
    h.wait_for("the message", function()
      return h.noted("was answered in Claude Code; it no longer waits for you")
    end)
    assert.is_nil(rounds.waiting[id])
  end)
end)
