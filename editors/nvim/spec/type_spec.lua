-- A message waiting for an agent whose host runs in one of this Neovim's
-- terminals is typed there with :ParleyType, once the person has read the
-- exact line and confirmed; a message for an agent that runs elsewhere is
-- never typed. Driven by tests/tests/nvim.rs
-- (a_waiting_message_is_typed_into_the_agents_nvim_terminal), which starts
-- the other agent, asks both, and reads what the host in the terminal got.

local h = require("helpers")
local api = vim.api

describe(":ParleyType", function()
  local asking = require("parley.asking")
  local confirmed = {}
  local terminal_buf

  -- vim.fn.confirm answered as a person would (1: Type), the question kept.
  local function confirm_with(answer)
    vim.fn.confirm = function(message)
      confirmed[#confirmed + 1] = message
      return answer
    end
  end

  local function standing_of(buf, id)
    local mark = h.thread_mark(buf, id)
    return mark and mark.standing or ""
  end

  local function thread_asking(body)
    for id, thread in pairs(require("parley.threads").threads) do
      if thread.comments[1].body == body then
        return id
      end
    end
  end

  it("starts the agent's host in a terminal of this Neovim", function()
    h.setup()
    local paths = h.await("start-host")
    vim.cmd("botright new")
    terminal_buf = api.nvim_get_current_buf()
    local chan = vim.fn.termopen({ "sh" })
    assert.is_true(chan > 0)
    vim.cmd("wincmd p")
    -- Typed into the shell, as a person starts an agent: the host is the shell's child.
    vim.fn.chansend(chan, "sh " .. paths.script .. " " .. paths.shim .. " " .. paths.typed .. "\r")
    h.wait_for("the agent in the terminal", function()
      for _, agent in ipairs(asking.agents) do
        if agent.editor_id == require("parley").editor_id() and asking.terminal_of(agent) then
          return true
        end
      end
    end)
    h.reached("host-running", { name = asking.agents[1] and asking.agents[1].name })
  end)

  it("never types a message for an agent that runs elsewhere", function()
    h.await("asked-both")
    vim.cmd("edit src/auth.rs")
    local buf = api.nvim_get_current_buf()
    local elsewhere
    h.wait_for("the thread for the other agent", function()
      elsewhere = thread_asking("Who calls main?")
      return elsewhere and standing_of(buf, elsewhere):find("waiting for outside", 1, true)
    end)
    confirm_with(1)
    h.cursor_to("fn main")
    vim.cmd("ParleyType")
    assert.equals(0, #confirmed)
    assert.is_truthy(h.noted("outside does not run in a terminal of this Neovim"))
    h.reached("refused")
  end)

  it("shows the exact line, types it into the agent's terminal on confirm, and says so", function()
    vim.cmd("edit src/auth.rs")
    local buf = api.nvim_get_current_buf()
    local id
    h.wait_for("the thread for the agent in the terminal", function()
      id = thread_asking("Why login here?")
      return id and standing_of(buf, id):find("waiting for claude", 1, true)
    end)
    h.cursor_to("login();")
    confirm_with(2)
    vim.cmd("ParleyType")
    h.wait_for("the confirmation", function()
      return #confirmed == 1
    end)
    assert.is_truthy(standing_of(buf, id):find("waiting for", 1, true), "cancelled: nothing typed")
    confirm_with(1)
    vim.cmd("ParleyType")
    h.wait_for("the second confirmation", function()
      return #confirmed == 2
    end)
    assert.is_truthy(confirmed[2]:find("Why login here?", 1, true))
    assert.is_truthy(confirmed[2]:find("'s terminal and press Enter?", 1, true))
    h.wait_for("the thread to say typed (it says " .. standing_of(buf, id) .. ")", function()
      return standing_of(buf, id):find("(typed into its terminal)", 1, true) ~= nil
    end)
    h.wait_for("the host to get the line", function()
      return h.buffer_text(terminal_buf):find("host got a line", 1, true) ~= nil
    end)
    h.reached("typed", { shown = confirmed[2], thread = id })
  end)
end)
