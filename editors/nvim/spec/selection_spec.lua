-- Answering an agent's get_selection: nothing selected yet, the last visual
-- selection (byte columns on the wire), and focus deciding which window
-- answers. Driven by tests/tests/nvim.rs (an_agent_reads_the_nvim_selection).

local h = require("helpers")

-- Waits until the daemon has handled everything this window sent before now:
-- it answers one line at a time, so a reply to `status` comes after them.
local function flushed()
  local done = false
  require("parley.rpc").request("status", vim.NIL, function()
    done = true
  end)
  h.wait_for("the daemon to answer status", function()
    return done
  end)
end

describe("selection", function()
  it("answers null while nothing is selected", function()
    h.setup()
    vim.cmd("edit src/auth.rs")
    h.reached("connected")
    h.await("asked-empty")
  end)

  it("answers with the selection while in visual mode", function()
    h.cursor_to('"naïve"')
    vim.cmd('normal! vf"')
    assert.equals("v", vim.api.nvim_get_mode().mode)
    h.reached("selecting")
    h.await("asked-live")
  end)

  it("answers with the last visual selection once visual mode ended", function()
    vim.cmd("normal! \27gg")
    assert.equals("n", vim.api.nvim_get_mode().mode)
    h.reached("selected")
    h.await("asked")
  end)

  it("answers with a linewise selection in another buffer", function()
    vim.cmd("edit src/other.rs")
    vim.cmd("normal! 1GV2G\27")
    h.reached("selected-lines")
    h.await("asked-lines")
  end)

  it("answers again once it regains focus from another window", function()
    h.await("other-window")
    vim.cmd("doautocmd FocusGained")
    flushed()
    h.reached("focused")
    h.await("asked-after-focus")
  end)
end)
