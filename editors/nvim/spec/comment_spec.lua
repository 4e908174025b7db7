-- Comments made in Neovim: a thread from a selection (checked by the Rust
-- test through the CLI and an agent), the quickfix list, replies, and marks
-- that follow unsaved edits. Driven by tests/tests/nvim.rs
-- (a_comment_made_in_nvim_reaches_the_cli_and_agents).

local h = require("helpers")
local api = vim.api

describe("comments", function()
  local buf
  local threads = require("parley.threads")

  local function answer_prompt(text)
    local asked = {}
    vim.ui.input = function(opts, on_confirm)
      asked[#asked + 1] = opts.prompt
      on_confirm(text)
    end
    return asked
  end

  local function only_open_thread_on_line(row)
    for id in pairs(threads.threads) do
      local mark = h.thread_mark(buf, id)
      if mark and mark.row == row then
        return id
      end
    end
    error("no thread on row " .. row)
  end

  local function only_thread()
    local ids = vim.tbl_keys(threads.threads)
    assert.equals(1, #ids)
    return threads.threads[ids[1]]
  end

  it("connects and opens a file", function()
    h.setup()
    vim.cmd("edit src/auth.rs")
    buf = api.nvim_get_current_buf()
    h.reached("connected")
  end)

  it("refuses to comment on text only the unsaved buffer has, saying to save first", function()
    api.nvim_buf_set_lines(buf, 0, 0, false, { "// draft" })
    vim.cmd("normal! 1GV\27")
    vim.cmd("'<,'>ParleyComment not this")
    h.wait_for("the daemon's refusal", function()
      return h.noted("it is unsaved there")
    end)
    assert.matches("save the file and try again", h.notes_text())
    vim.cmd("edit!")
    assert.is_false(vim.bo[buf].modified)
    assert.same({}, threads.threads)
  end)

  it("makes a thread on a charwise selection, asking for the text", function()
    local asked = answer_prompt("Use an ASCII name")
    h.cursor_to('"naïve"')
    vim.cmd('normal! vf"\27')
    vim.cmd("'<,'>ParleyComment")
    assert.same({ "Comment: " }, asked)
    h.wait_for("the thread's mark", function()
      return #h.thread_marks(buf) == 1
    end)
    local mark = h.thread_marks(buf)[1]
    -- Byte columns: `    let café = ` is 16 bytes (é is two); `"naïve"` is 8 (ï is two).
    assert.same({ 1, 16, 1, 24 }, { mark.row, mark.col, mark.end_row, mark.end_col })
    assert.equals("C", h.sign_at(2))
    assert.equals("ana: Use an ASCII name", mark.text)
    local thread = only_thread()
    assert.equals('"naïve"', thread.quote)
    h.reached("created", { id = thread.id })
    h.await("seen")
  end)

  it("makes a thread on whole lines, and :ParleyThreads lists both", function()
    vim.cmd("normal! 10GV12G\27")
    vim.cmd("'<,'>ParleyComment Log the user out everywhere")
    h.wait_for("the second mark", function()
      return #h.thread_marks(buf) == 2
    end)
    vim.cmd("ParleyThreads")
    assert.equals("quickfix", vim.bo.buftype)
    local qf = vim.fn.getqflist()
    assert.equals(2, #qf)
    assert.same({ 2, 17 }, { qf[1].lnum, qf[1].col })
    -- The agent read the first thread (get_feedback): the list says who.
    assert.matches("^ana: Use an ASCII name · seen by %S+$", qf[1].text)
    assert.same({ 10, 1, "ana: Log the user out everywhere" }, { qf[2].lnum, qf[2].col, qf[2].text })
    assert.equals(buf, qf[1].bufnr)
    vim.cmd("cclose")
  end)

  it(":ParleyReply answers the thread under the cursor", function()
    answer_prompt("Or keep it: it is valid UTF-8")
    api.nvim_win_set_cursor(0, { 2, 0 })
    vim.cmd("ParleyReply")
    h.wait_for("the reply on the mark", function()
      return h.thread_marks(buf)[1].text == "ana: Or keep it: it is valid UTF-8 [2]"
    end)
    h.reached("replied")
    h.await("seen")
  end)

  it("marks follow unsaved edits and stay there when an agent answers", function()
    api.nvim_buf_set_lines(buf, 0, 0, false, { "// one", "// two" })
    assert.equals(3, h.thread_marks(buf)[1].row)
    h.reached("edited")
    h.await("agent-replied")
    h.wait_for("the agent's reply on the mark", function()
      return (h.thread_marks(buf)[1].text or ""):find("Kept it [3]", 1, true)
    end)
    -- The daemon placed it in the unsaved text (buffer/changed), not where it is on disk.
    local mark = h.thread_marks(buf)[1]
    assert.same({ 3, 16, 3, 24 }, { mark.row, mark.col, mark.end_row, mark.end_col })
    assert.matches("replied on src/auth.rs:2: Kept it", h.notes_text())
  end)

  it("loses the sign when an agent resolves the thread", function()
    local id = only_open_thread_on_line(3)
    assert.equals("C", h.sign_at(4))
    h.reached("ready-to-resolve", { id = id })
    h.await("resolved")
    h.wait_for("the thread's mark to go", function()
      return h.thread_mark(buf, id) == nil and threads.threads[id] == nil
    end)
    assert.equals("", h.sign_at(4))
    assert.equals(1, #h.thread_marks(buf), "the other thread stays")
  end)

  it("comments in an unsaved buffer on text that is also on disk", function()
    assert.is_true(vim.bo[buf].modified, "the two lines inserted above are still unsaved")
    vim.cmd("normal! 5GV\27")
    vim.cmd("'<,'>ParleyComment Handle a failed login")
    h.wait_for("the new thread's mark", function()
      return #h.thread_marks(buf) == 2
    end)
    local id = only_open_thread_on_line(4)
    assert.equals(2, threads.threads[id].range.start.line, "on disk it is the third line")
    assert.equals("C", h.sign_at(5))
  end)
end)
