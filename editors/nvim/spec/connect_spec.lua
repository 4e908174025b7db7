-- Connecting: the hello this window says, and :checkhealth parley with the
-- daemon up and down. Driven by tests/tests/nvim.rs
-- (nvim_connects_as_an_editor_and_reports_its_health).

local h = require("helpers")
local uv = vim.uv or vim.loop

-- :checkhealth opens its report in a new tab on 0.7 and in a window of the
-- current tab on newer versions.
local function close_report()
  if #vim.api.nvim_list_tabpages() > 1 then
    vim.cmd("tabclose")
  else
    vim.cmd("bwipeout!")
  end
end

describe("connecting", function()
  it("says hello as an editor on the current directory, on the configured socket", function()
    h.setup({ socket = h.env("PARLEY_SOCKET") })
    assert.equals("nvim-test", vim.env.PARLEY_EDITOR_ID)
    h.reached("connected", { cwd = uv.cwd() })
    h.await("seen")
  end)

  it("says hello again on the new folder after :cd", function()
    local repo = uv.cwd()
    vim.cmd("cd src")
    h.wait_for_status("the daemon to see this window on src/", function(status)
      local editors = status.editors
      return #editors == 1 and editors[1].workspaces[1] == repo .. "/src"
    end)
    vim.cmd("cd ..")
    h.wait_for_status("the daemon to see this window back on the repository", function(status)
      return #status.editors == 1 and status.editors[1].workspaces[1] == repo
    end)
  end)

  it(":checkhealth parley reports the daemon and the versions that talk", function()
    vim.cmd("checkhealth parley")
    local report = h.buffer_text(0)
    assert.matches("OK:? Neovim 0%.%d+%.%d+", report)
    assert.matches("parley%.nvim %S+, speaking hub protocol 1", report)
    local socket = vim.pesc(h.env("PARLEY_SOCKET"))
    assert.matches("OK:? daemon reachable at " .. socket .. ": Parley %S+, hub protocol 1, pid %d+", report)
    assert.matches("connected as editor nvim%-test", report)
    assert.is_nil(report:find("ERROR"), report)
    close_report()
  end)

  it(":checkhealth parley says so when no daemon answers", function()
    h.reached("check-without-daemon")
    h.await("daemon-stopped")
    h.wait_for("the plugin to notice the daemon is gone", function()
      return not require("parley").connected()
    end)
    vim.cmd("checkhealth parley")
    local report = h.buffer_text(0)
    assert.matches("ERROR:? no Parley daemon answers at " .. vim.pesc(h.env("PARLEY_SOCKET")), report)
    assert.matches("parley daemon", report)
    assert.matches("this window is not connected", report)
    close_report()
  end)
end)
