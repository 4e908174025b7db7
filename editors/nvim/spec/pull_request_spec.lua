-- Threads pulled in from a GitHub pull request say where they came from:
-- the pull request, and the side for a comment on removed lines; and
-- :ParleyOpenOnGitHub opens the one under the cursor there. Driven by
-- tests/tests/nvim.rs (a_pull_requests_threads_show_their_origin_in_nvim).

local h = require("helpers")
local api = vim.api

describe("pull request threads", function()
  it("mark each thread with its pull request, and a comment on removed lines as such", function()
    h.setup()
    vim.cmd("edit src/lib.rs")
    local buf = api.nvim_get_current_buf()
    h.reached("editing")
    h.await("pulled")
    h.wait_for("both pulled threads' marks", function()
      return #h.thread_marks(buf) == 2
    end)
    local texts = {}
    for _, mark in ipairs(h.thread_marks(buf)) do
      texts[#texts + 1] = mark.text
    end
    table.sort(texts)
    assert.same({
      "hubot: why remove this? (GitHub octo/app#7, removed lines)",
      "mona: three needs a test (GitHub octo/app#7)",
    }, texts)
  end)

  it("open the thread under the cursor on GitHub, and say when there is none", function()
    local opened = {}
    vim.ui.open = function(url)
      opened[#opened + 1] = url
      return nil, nil
    end
    api.nvim_win_set_cursor(0, { 3, 0 })
    vim.cmd("ParleyOpenOnGitHub")
    -- The fake gives mona's comment, the first it made, database id 1001.
    assert.same({ "https://github.test/pull/comments/1001" }, opened)
    api.nvim_win_set_cursor(0, { 1, 0 })
    vim.cmd("ParleyOpenOnGitHub")
    assert.same(1, #opened, "nothing opened without a thread")
    assert.is_not_nil(h.noted("no thread under the cursor"), h.notes_text())
    -- A link that is not a web address is never handed to the opener.
    for _, thread in pairs(require("parley.threads").threads) do
      if thread.github then
        thread.github.url = "file:///etc/passwd"
      end
    end
    api.nvim_win_set_cursor(0, { 3, 0 })
    vim.cmd("ParleyOpenOnGitHub")
    assert.same(1, #opened, "a file: link is not opened")
    assert.is_not_nil(h.noted("not a web address"), h.notes_text())
  end)
end)
