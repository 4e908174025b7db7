-- Threads changed by others appear without a reload: created from the CLI,
-- answered, moved and orphaned by edits on disk, resolved by an agent and
-- reopened. Driven by tests/tests/nvim.rs (changes_to_threads_show_up_in_nvim_live).

local h = require("helpers")
local api = vim.api

describe("threads", function()
  local buf
  local threads = require("parley.threads")
  local ids

  local function mark_of(id)
    return h.thread_mark(buf, id)
  end

  it("shows the threads that existed before it connected", function()
    vim.o.autoread = true
    h.setup()
    vim.cmd("edit src/auth.rs")
    buf = api.nvim_get_current_buf()
    ids = h.await("ids")
    h.wait_for("the existing thread's mark", function()
      return #h.thread_marks(buf) == 1
    end)
    local mark = h.thread_marks(buf)[1]
    assert.same({ 5, "dana: Handle empty tokens" }, { mark.row, mark.text })
    assert.is_nil(mark.standing, "an open thread shows no standing")
    assert.equals("C", h.sign_at(6))
    h.reached("shown")
  end)

  it("shows a thread added from the CLI", function()
    ids = h.await("added")
    h.wait_for("the new thread's mark", function()
      return #h.thread_marks(buf) == 2
    end)
    assert.equals(9, mark_of(ids.logout).row)
  end)

  it("shows an agent's reply, and says so", function()
    h.await("agent-replied")
    h.wait_for("the reply on the mark", function()
      return mark_of(ids.validate).text:find("Done, empty tokens are refused now [2]", 1, true)
    end)
    assert.matches("replied on src/auth.rs:6: Done, empty tokens", h.notes_text())
    assert.matches("^ · addressed by .", mark_of(ids.validate).standing)
    assert.is_nil(mark_of(ids.logout).standing, "no agent has done anything with the other thread")
  end)

  it("keeps marks on the buffer's text when the file changes on disk, and moves them on reload", function()
    h.reached("ready-for-edit")
    h.await("edited-on-disk")
    h.wait_for("the daemon to move both threads", function()
      return threads.threads[ids.validate].range.start.line == 7 and threads.threads[ids.logout].range.start.line == 11
    end)
    assert.equals(5, mark_of(ids.validate).row, "the buffer still has the old text")
    vim.cmd("checktime")
    h.wait_for("the buffer to be reloaded", function()
      return api.nvim_buf_get_lines(buf, 0, 1, false)[1] == "// a"
    end)
    h.wait_for("the marks to move with the text", function()
      return mark_of(ids.validate).row == 7 and mark_of(ids.logout).row == 11
    end)
  end)

  it("lists an orphaned thread distinctly", function()
    h.reached("ready-to-orphan")
    h.await("orphaned-on-disk")
    h.wait_for("the daemon to orphan one thread and move the other", function()
      return threads.threads[ids.validate].state == "orphaned" and threads.threads[ids.logout].range.start.line == 7
    end)
    vim.cmd("checktime")
    h.wait_for("the orphaned mark, and the other where its text is", function()
      local mark = mark_of(ids.validate)
      return mark and mark.row == 0 and mark.text:find("^%[orphaned%] ") and mark_of(ids.logout).row == 7
    end)
    assert.equals("?", h.sign_at(1))
    vim.cmd("ParleyThreads")
    local qf = vim.fn.getqflist()
    assert.equals(2, #qf)
    assert.equals(0, qf[1].lnum, "orphaned threads are file-level entries")
    assert.matches("^%[orphaned%] .-: Done, empty tokens are refused now %[2%] %(was: fn validate", qf[1].text)
    assert.equals(8, qf[2].lnum)
    vim.cmd("cclose")
  end)

  it("removes the mark when an agent resolves the thread", function()
    h.reached("ready-to-resolve")
    h.await("resolved")
    h.wait_for("the mark to go", function()
      return mark_of(ids.logout) == nil and threads.threads[ids.logout] == nil
    end)
    assert.equals(1, #h.thread_marks(buf))
    assert.equals("", h.sign_at(8), "no sign where the thread was")
  end)

  it("brings it back when the thread is reopened", function()
    h.reached("ready-to-reopen")
    h.await("reopened")
    h.wait_for("the mark to come back", function()
      return mark_of(ids.logout) ~= nil
    end)
    assert.equals(7, mark_of(ids.logout).row)
    assert.equals("C", h.sign_at(8))
  end)

  it(":ParleyResolve resolves the thread under the cursor", function()
    api.nvim_win_set_cursor(0, { 9, 0 })
    vim.cmd("ParleyResolve")
    h.wait_for("the mark to go", function()
      return mark_of(ids.logout) == nil and threads.threads[ids.logout] == nil
    end)
    h.reached("resolved-here")
  end)
end)
