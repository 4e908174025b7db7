-- Jumping from the references in a review to the code. Driven by
-- tests/tests/nvim.rs (nvim_jumps_from_review_references_to_the_code): the
-- review was presented before Neovim started, and Neovim runs outside the
-- repository with the repository as its configured root.

local h = require("helpers")
local api = vim.api

describe("references", function()
  local repo = h.env("PARLEY_TEST_REPO")
  local review_win

  local function back_to_review()
    api.nvim_set_current_win(review_win)
  end

  it("fetch the review presented before the window connected", function()
    h.setup({ roots = { repo } })
    vim.cmd("ParleyReview")
    review_win = api.nvim_get_current_win()
    h.wait_for("the review in the buffer", function()
      return h.buffer_text(0):find("Entry point", 1, true)
    end)
  end)

  it("<CR> on [`path:line`][] opens the file at that line in the other window", function()
    h.cursor_to("[`src/auth.rs:3`][]", 4)
    vim.cmd("normal \r")
    assert.equals(repo .. "/src/auth.rs", api.nvim_buf_get_name(0))
    assert.equals(3, api.nvim_win_get_cursor(0)[1])
    assert.are_not.equal(review_win, api.nvim_get_current_win())
    assert.equals(2, #api.nvim_tabpage_list_wins(0), "no new window")
  end)

  it("gf on [`path:first-last`][] opens the file at the first line", function()
    back_to_review()
    h.cursor_to("[`src/auth.rs:5-6`][]", 2)
    vim.cmd("normal gf")
    assert.equals(repo .. "/src/auth.rs", api.nvim_buf_get_name(0))
    assert.equals(5, api.nvim_win_get_cursor(0)[1])
  end)

  it("<CR> on [text](path#L9-L11) opens the file at line 9", function()
    back_to_review()
    h.cursor_to("[the logout](src/auth.rs#L9-L11)", 1)
    vim.cmd("normal \r")
    assert.equals(repo .. "/src/auth.rs", api.nvim_buf_get_name(0))
    assert.equals(9, api.nvim_win_get_cursor(0)[1])
  end)

  it("<CR> on [text](path) opens the file, resolved against the review's folder", function()
    back_to_review()
    h.cursor_to("[the notes](docs/notes.md)", 3)
    vim.cmd("normal \r")
    assert.equals(repo .. "/docs/notes.md", api.nvim_buf_get_name(0))
    assert.equals(1, api.nvim_win_get_cursor(0)[1])
  end)

  it("a reference that does not resolve says why and stays in the review", function()
    back_to_review()
    h.cursor_to("[`src/gone.rs:2`][]", 1)
    vim.cmd("normal \r")
    assert.equals(review_win, api.nvim_get_current_win())
    assert.matches("does not resolve: file src/gone.rs does not exist", h.notes_text())
  end)

  it("the parser knows every reference form", function()
    local refs = require("parley.review").parse(
      "[`a.rs`][] [`b.rs:3`][] [`c.rs:4-9`][] [x](d.rs) [y](e.rs#L7) [z](f.rs#L1-L2) [u](https://x.org/a) [v](#top)"
    )
    local got = {}
    for _, r in ipairs(refs) do
      got[#got + 1] = string.format("%s:%s-%s", r.path, tostring(r.line), tostring(r.end_line))
    end
    assert.same({ "a.rs:nil-nil", "b.rs:3-nil", "c.rs:4-9", "d.rs:nil-nil", "e.rs:7-nil", "f.rs:1-2" }, got)
  end)
end)
