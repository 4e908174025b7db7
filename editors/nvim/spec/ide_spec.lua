-- Answering an agent's symbol queries and get_diagnostics through Neovim's
-- LSP client, with the real TypeScript language server started the way a
-- user's configuration does (attached to each TypeScript buffer on
-- FileType). Driven by tests/tests/nvim.rs
-- (an_agents_symbols_and_diagnostics_come_from_nvims_language_server).

local h = require("helpers")

describe("ide", function()
  it("answers through the TypeScript language server", function()
    h.setup()
    local repo = os.getenv("PARLEY_TEST_REPO")
    local client = vim.lsp.start_client({
      name = "typescript",
      cmd = { os.getenv("PARLEY_TEST_TSLS"), "--stdio" },
      root_dir = repo,
    })
    assert.truthy(client, "the TypeScript language server starts")
    vim.api.nvim_create_autocmd("FileType", {
      pattern = "typescript",
      callback = function(event)
        vim.lsp.buf_attach_client(event.buf, client)
      end,
    })
    vim.cmd("edit src/app.ts")
    local buf = vim.api.nvim_get_current_buf()
    h.reached("connected")
    h.wait_for("TypeScript's error in src/app.ts", function()
      return #vim.diagnostic.get(buf) > 0
    end, 60000)
    h.reached("ready")
    h.await("done")
  end)
end)
