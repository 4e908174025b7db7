-- A person reviews an agent's change in Neovim, round after round: the round
-- waiting before Neovim opened, the inbox, the round's file list and diff,
-- drafts on a removed and an added line (with a suggestion), on a range,
-- edited and removed, a daemon restart, a draft made at the terminal,
-- changes requested; then the second round's changes since the first, the
-- first round's comments on it, and an approval. Driven by
-- tests/tests/nvim.rs (a_human_reviews_an_agents_change_in_nvim_round_after_round),
-- which plays the agent and checks what it is given.

local h = require("helpers")
local api = vim.api

describe("human review rounds", function()
  local rounds = require("parley.rounds")
  local id, summary, thread_id

  local function named(name)
    for _, buf in ipairs(api.nvim_list_bufs()) do
      if api.nvim_buf_is_valid(buf) and api.nvim_buf_get_name(buf) == name then
        return buf
      end
    end
    return nil
  end

  local function round_buffer(kind, path)
    return named("parley-round://" .. id .. "/" .. kind .. "/" .. path)
  end

  -- The round marks of `buf` (drafts and earlier comments): { row, end_row, text }, by row.
  local function marks(buf)
    local found = {}
    for _, m in ipairs(api.nvim_buf_get_extmarks(buf, rounds.namespace, 0, -1, { details = true })) do
      local virt = m[4].virt_text
      found[#found + 1] = { row = m[2], end_row = m[4].end_row or m[2], text = virt and virt[1][1] or nil }
    end
    table.sort(found, function(a, b)
      return a.row < b.row
    end)
    return found
  end

  local function contains(haystack, needle)
    assert(haystack:find(needle, 1, true), "expected " .. vim.inspect(needle) .. " in:\n" .. haystack)
  end

  local function notes_matching(text)
    local n = 0
    for _, note in ipairs(h.notes) do
      if note.message:find(text, 1, true) then
        n = n + 1
      end
    end
    return n
  end

  -- The window of the current tab showing `buf`.
  local function window_of(buf)
    for _, win in ipairs(api.nvim_tabpage_list_wins(0)) do
      if api.nvim_win_get_buf(win) == buf then
        return win
      end
    end
    error("no window shows " .. api.nvim_buf_get_name(buf))
  end

  -- The sign column's text on line `lnum` of the current window (diff mode puts a fold column before it).
  local function sign_at(lnum)
    vim.cmd("redraw!")
    local pos = vim.fn.screenpos(0, lnum, 1)
    assert(pos.row > 0, "line " .. lnum .. " is not on the screen")
    local text_starts = pos.col
    return vim.trim(vim.fn.screenstring(pos.row, text_starts - 2) .. vim.fn.screenstring(pos.row, text_starts - 1))
  end

  local function press(keys)
    api.nvim_feedkeys(api.nvim_replace_termcodes(keys, true, false, true), "x", false)
  end

  local function list_line(list, path)
    for i, line in ipairs(api.nvim_buf_get_lines(list, 0, -1, false)) do
      if line:find(path, 1, true) then
        return i, line
      end
    end
    error("no " .. path .. " in the file list:\n" .. h.buffer_text(list))
  end

  it("learns, once, of a round that was waiting before it connected", function()
    local asked = h.await("requested")
    id, summary, thread_id = asked.id, asked.summary, asked.thread
    h.setup()
    local wanted = "asks you to review: " .. summary .. " — :ParleyReviewRound " .. id
    h.wait_for("the notification of the waiting round", function()
      return notes_matching(wanted) > 0
    end)
    assert.matches("^Parley: %S+ asks you to review: ", h.noted("asks you to review").message)
    -- The hello's round/requested and the inbox both told of it: one notification.
    vim.wait(200)
    assert.equals(1, notes_matching(wanted), h.notes_text())
  end)

  it(":ParleyInbox lists the round, and the agent's question waiting on an answer", function()
    vim.cmd("ParleyInbox")
    h.wait_for("the inbox in the quickfix list", function()
      return vim.fn.getqflist({ title = 0 }).title == "Parley inbox"
    end)
    local qf = vim.fn.getqflist()
    assert.equals(2, #qf, vim.inspect(qf))
    contains(qf[1].text, "review " .. id .. " round 1")
    contains(qf[1].text, summary .. " (3 files)")
    contains(qf[2].text, ": Is the accent intended?")
    assert.equals(2, qf[2].lnum)
    assert.matches("src/auth.rs$", api.nvim_buf_get_name(qf[2].bufnr))
    assert.is_truthy(thread_id)
    assert.equals("quickfix", vim.bo.buftype)
    -- <CR> on the round opens it.
    api.nvim_win_set_cursor(0, { 1, 0 })
    press("<CR>")
    h.wait_for("the round's diff", function()
      return round_buffer("new", "docs/notes.md") ~= nil
    end)
  end)

  it("shows the round as a file list and a read-only diff per file", function()
    local list = named("parley-round://" .. id)
    assert.is_truthy(list)
    local text = h.buffer_text(list)
    contains(text, "Review " .. id .. ", round 1 · asked by ")
    contains(text, summary)
    local _, notes = list_line(list, "docs/notes.md")
    assert.matches("^M  docs/notes.md", notes)
    local _, retry = list_line(list, "src/retry.rs")
    assert.matches("^A  src/retry.rs", retry)
    -- The first file is open: the list, then base and agent's text side by side in diff mode.
    assert.equals(3, #api.nvim_tabpage_list_wins(0))
    local old, new = round_buffer("old", "docs/notes.md"), round_buffer("new", "docs/notes.md")
    assert.equals(new, api.nvim_get_current_buf())
    assert.is_true(vim.wo[window_of(old)].diff)
    assert.is_true(vim.wo[window_of(new)].diff)
    assert.equals("# Notes", h.buffer_text(old))
    assert.equals("# Notes\n\nTokens are trimmed.", h.buffer_text(new))
    assert.is_false(vim.bo[new].modifiable)

    -- <CR> on a file of the list opens its diff.
    api.nvim_set_current_win(window_of(list))
    api.nvim_win_set_cursor(0, { (list_line(list, "src/auth.rs")), 0 })
    press("<CR>")
    old, new = round_buffer("old", "src/auth.rs"), round_buffer("new", "src/auth.rs")
    assert.equals(new, api.nvim_get_current_buf())
    assert.equals(old, api.nvim_win_get_buf(window_of(old)))
    assert.equals("rust", vim.bo[new].filetype)
    assert.equals("    !token.is_empty()", api.nvim_buf_get_lines(old, 6, 7, false)[1])
    assert.equals("    !token.trim().is_empty()", api.nvim_buf_get_lines(new, 6, 7, false)[1])
    assert.is_true(vim.wo[window_of(old)].diff)
  end)

  it("drafts a comment on a removed line and a suggestion on an added one", function()
    local old, new = round_buffer("old", "src/auth.rs"), round_buffer("new", "src/auth.rs")
    api.nvim_set_current_win(window_of(old))
    h.cursor_to('println!("bye");')
    vim.cmd("ParleyRoundComment Keep saying goodbye")
    h.wait_for("the draft on the removed line", function()
      return #marks(old) == 1
    end)
    assert.same({ row = 10, end_row = 10, text = "draft: Keep saying goodbye" }, marks(old)[1])
    assert.equals("D", sign_at(11))

    api.nvim_set_current_win(window_of(new))
    h.cursor_to("!token.trim().is_empty()")
    vim.cmd("ParleyRoundSuggest Bound the length too")
    local editor = api.nvim_get_current_buf()
    assert.equals("parley-round://" .. id .. "/draft/new/src/auth.rs:7-7", api.nvim_buf_get_name(editor))
    local lines = api.nvim_buf_get_lines(editor, 0, -1, false)
    assert.same({ "Bound the length too", "```suggestion", "    !token.trim().is_empty()", "```" }, vim.list_slice(lines, 2))
    api.nvim_buf_set_lines(editor, 3, 4, false, { "    !token.trim().is_empty() && token.len() < 4096" })
    vim.cmd("write")
    h.wait_for("the suggestion's draft", function()
      return #marks(new) == 1 and not api.nvim_buf_is_valid(editor)
    end)
    assert.same({ row = 6, end_row = 6, text = "draft: Bound the length too [suggests a change]" }, marks(new)[1])
    local draft = rounds.rounds[id].drafts[2]
    assert.equals("    !token.trim().is_empty() && token.len() < 4096", draft.suggestion)
    assert.same({ "new", 6, 6 }, { draft.side, draft.start_line, draft.end_line })
  end)

  it("drafts on a range and removes a draft under the cursor", function()
    local new = round_buffer("new", "src/auth.rs")
    api.nvim_set_current_win(window_of(new))
    vim.cmd("normal! 10GV12G\27")
    vim.cmd("'<,'>ParleyRoundComment [minor] Not this one")
    h.wait_for("the range's draft", function()
      return #marks(new) == 2
    end)
    assert.same({ row = 9, end_row = 11, text = "draft (minor): Not this one" }, marks(new)[2])
    api.nvim_win_set_cursor(0, { 11, 0 })
    vim.cmd("ParleyRoundUncomment")
    h.wait_for("the draft to go", function()
      return #marks(new) == 1
    end)
    assert.equals(2, #rounds.rounds[id].drafts)
  end)

  it(":ParleyRoundEdit rewrites a draft, here to give it a severity", function()
    local old = round_buffer("old", "src/auth.rs")
    api.nvim_set_current_win(window_of(old))
    h.cursor_to('println!("bye");')
    local before = rounds.rounds[id].drafts[1]
    vim.cmd("ParleyRoundEdit")
    local editor = api.nvim_get_current_buf()
    assert.same({ "Keep saying goodbye" }, vim.list_slice(api.nvim_buf_get_lines(editor, 0, -1, false), 2))
    api.nvim_buf_set_lines(editor, 1, 2, false, { "[major] Keep saying goodbye" })
    vim.cmd("write")
    h.wait_for("the edited draft", function()
      return marks(old)[1].text == "draft (major): Keep saying goodbye"
    end)
    local after = rounds.rounds[id].drafts[1]
    assert.same({ before.id, "major", "Keep saying goodbye" }, { after.id, after.severity, after.body })
    assert.equals(2, #rounds.rounds[id].drafts)
  end)

  it("refuses a comment where there is no line, saying why", function()
    local list = named("parley-round://" .. id)
    api.nvim_set_current_win(window_of(list))
    api.nvim_win_set_cursor(0, { (list_line(list, "src/retry.rs")), 0 })
    press("<CR>")
    api.nvim_set_current_win(window_of(round_buffer("old", "src/retry.rs")))
    vim.cmd("ParleyRoundComment nothing to see")
    assert.is_truthy(h.noted("this side has no lines to comment on"))
  end)

  it("keeps the round across a daemon restart, and shows a draft made at the terminal", function()
    h.reached("drafted")
    local elsewhere = h.await("drafted-elsewhere").draft
    local list = named("parley-round://" .. id)
    h.wait_for("the other client's draft", function()
      return #rounds.rounds[id].drafts == 3
    end)
    h.wait_for("the connection to the new daemon", function()
      return require("parley").connected()
    end)
    -- The round is still open here, its drafts on their lines.
    assert.equals(1, #marks(round_buffer("old", "src/auth.rs")))
    assert.equals(1, #marks(round_buffer("new", "src/auth.rs")))
    assert.is_truthy(rounds.waiting[id])
    local ids = vim.tbl_map(function(d)
      return d.id
    end, rounds.rounds[id].drafts)
    assert.is_true(vim.tbl_contains(ids, elsewhere), vim.inspect(ids))
  end)

  it(":ParleyRoundDrafts lists the drafts, and removes one from the list", function()
    local elsewhere = nil
    for _, draft in ipairs(rounds.rounds[id].drafts) do
      if draft.body == "Say why" then
        elsewhere = draft.id
      end
    end
    local list = named("parley-round://" .. id)
    local _, notes = list_line(list, "docs/notes.md")
    contains(notes, "(1 draft)")
    contains(h.buffer_text(list), "3 drafts")
    vim.cmd("ParleyRoundDrafts")
    local qf = vim.fn.getqflist()
    assert.equals(3, #qf)
    assert.equals("[new] Say why", qf[1].text)
    assert.equals(round_buffer("new", "docs/notes.md"), qf[1].bufnr)
    assert.same({ "[old] major: Keep saying goodbye", 11 }, { qf[2].text, qf[2].lnum })
    assert.same({ "[new] Bound the length too [suggests a change]", 7 }, { qf[3].text, qf[3].lnum })
    -- The person drops that one from the list.
    api.nvim_win_set_cursor(0, { 1, 0 })
    vim.cmd("ParleyRoundUncomment")
    h.wait_for("the draft to go", function()
      return #rounds.rounds[id].drafts == 2
    end)
    for _, draft in ipairs(rounds.rounds[id].drafts) do
      assert.are_not.equal(elsewhere, draft.id)
    end
    vim.cmd("cclose")
  end)

  it(":ParleyRoundSubmit requests changes and closes the round", function()
    vim.cmd("ParleyRoundSubmit request_changes Two things to fix")
    h.wait_for("the answer", function()
      return h.noted("needs_changes sent")
    end)
    contains(h.noted("needs_changes sent").message, "2 comments")
    h.wait_for("the round's buffers to close", function()
      return named("parley-round://" .. id) == nil and round_buffer("new", "src/auth.rs") == nil
    end)
    assert.equals(1, #api.nvim_list_tabpages())
    assert.is_nil(rounds.waiting[id])
    h.reached("submitted")
  end)

  it("is told of the next round, and shows the changes since the first", function()
    h.await("requested-again")
    h.wait_for("the notification of round 2", function()
      return h.noted("asks you to review again %(round 2%)")
    end)
    vim.cmd("ParleyReviewRound since")
    h.wait_for("round 2's diff", function()
      return round_buffer("previous", "src/auth.rs") ~= nil
    end)
    local list = named("parley-round://" .. id)
    contains(h.buffer_text(list), "Changes since round 1")
    local _, notes = list_line(list, "docs/notes.md")
    contains(notes, "unchanged since round 1")
    -- The first file that changed opens, beside round 1's text.
    local previous, new = round_buffer("previous", "src/auth.rs"), round_buffer("new", "src/auth.rs")
    assert.equals(new, api.nvim_get_current_buf())
    assert.equals(previous, api.nvim_win_get_buf(window_of(previous)))
    assert.is_nil(round_buffer("new", "docs/notes.md"), "an unchanged file stays closed")
    assert.equals("    !token.trim().is_empty()", api.nvim_buf_get_lines(previous, 6, 7, false)[1])
    assert.equals("    !token.trim().is_empty() && token.len() < 4096", api.nvim_buf_get_lines(new, 6, 7, false)[1])
    -- Round 1's comments, with where they stand: the suggestion on the added
    -- line (applied since, so addressed), and the one on the removed line,
    -- on the line now where it was.
    local shown = marks(new)
    assert(#shown == 2, vim.inspect(shown) .. "\n" .. vim.inspect(rounds.rounds[id].earlier))
    assert.equals("round 1 · addressed: Bound the length too", shown[1].text)
    assert.equals(6, shown[1].row)
    assert.matches("^round 1 · open: On the removed line 11 of the old version %(`println!%(\"bye\"%);`%): Keep saying goodbye$", shown[2].text)
    assert(shown[2].row > 6, vim.inspect(shown[2]))
    -- s in the file list: the whole change again, base on the left.
    api.nvim_set_current_win(window_of(list))
    press("s")
    local old = round_buffer("old", "src/auth.rs")
    assert.equals(old, api.nvim_win_get_buf(window_of(old)))
    contains(h.buffer_text(list), "The whole change (s: changes since round 1)")
    -- q in the file list closes the tab; :ParleyReviewRound brings it back as it was.
    api.nvim_set_current_win(window_of(list))
    press("q")
    assert.equals(1, #api.nvim_list_tabpages())
    vim.cmd("ParleyReviewRound")
    h.wait_for("the round's tab again", function()
      return #api.nvim_list_tabpages() == 2
    end)
    assert.equals(round_buffer("new", "src/auth.rs"), api.nvim_get_current_buf())
    assert.equals(old, api.nvim_win_get_buf(window_of(old)))
  end)

  it(":ParleyRoundSubmit approve approves it", function()
    vim.cmd("ParleyRoundSubmit approve Thanks")
    h.wait_for("the answer", function()
      return h.noted("lgtm sent")
    end)
    h.wait_for("the round's buffers to close", function()
      return named("parley-round://" .. id) == nil
    end)
    h.reached("approved")
  end)
end)
