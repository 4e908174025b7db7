-- Walkthroughs in Neovim: an agent presents one, the person is told and
-- reads it with :ParleyWalkthrough (its markdown, the diagram's source, each
-- comment with its lines or why it was not placed), moves through its steps
-- with ]w and [w (each comment's place opened with its thread), opens the
-- gitdiff blocks' diffs (a commit range, and the working tree without its
-- staged changes) and a file from one, presses a button and sees its
-- message waiting, delivered and read, replies to a comment, and sees the
-- next revision arrive. Driven by tests/tests/nvim.rs
-- (a_walkthrough_is_read_stepped_through_and_answered_in_nvim), which plays the agent.

local h = require("helpers")
local api = vim.api

describe("walkthroughs", function()
  local walkthroughs = require("parley.walkthroughs")
  local id, agent, buf, walk_win

  local function line_with(pattern)
    for i, line in ipairs(api.nvim_buf_get_lines(buf, 0, -1, false)) do
      if line:find(pattern, 1, true) then
        return i, line
      end
    end
    return nil, nil
  end

  local function wait_line(pattern)
    h.wait_for("the walkthrough to show " .. pattern .. " in:\n" .. h.buffer_text(buf), function()
      return line_with(pattern) ~= nil
    end)
    return line_with(pattern)
  end

  -- Puts the cursor of the walkthrough's window on its line holding `pattern`.
  local function back_on(pattern)
    api.nvim_set_current_win(walk_win)
    local lnum = wait_line(pattern)
    api.nvim_win_set_cursor(walk_win, { lnum, 0 })
  end

  local function in_code_window(path, line)
    assert.are_not.equal(walk_win, api.nvim_get_current_win(), "the code opens beside the walkthrough")
    assert.equals(h.env("PARLEY_TEST_REPO") .. "/" .. path, api.nvim_buf_get_name(0))
    assert.equals(line, api.nvim_win_get_cursor(0)[1])
  end

  it("says when there is no walkthrough yet", function()
    h.setup()
    vim.cmd("ParleyWalkthrough")
    h.wait_for("the answer", function()
      return h.noted("no walkthrough for this window's folders yet")
    end)
    h.reached("connected")
  end)

  it("tells the person when an agent presents one, and :ParleyWalkthrough shows it", function()
    id = h.await("presented").id
    local note
    h.wait_for("a notification about the walkthrough", function()
      note = h.noted("presents a walkthrough: Token checks")
      return note
    end)
    assert.matches(":ParleyWalkthrough " .. id:sub(1, 8), note.message)
    -- Not opened yet, the newest walkthrough is the one its steps go through.
    vim.cmd("ParleyWalkthroughNext")
    assert.equals(h.env("PARLEY_TEST_REPO") .. "/src/auth.rs", api.nvim_buf_get_name(0))
    assert.equals(6, api.nvim_win_get_cursor(0)[1])
    assert.is_truthy(h.noted("step 1 of 2, src/auth.rs:6%-8: `validate` now trims the token%."))
    vim.cmd("ParleyWalkthrough")
    h.wait_for("the walkthrough's buffer", function()
      return api.nvim_buf_get_name(0) == "parley://walkthrough/" .. id
    end)
    buf, walk_win = api.nvim_get_current_buf(), api.nvim_get_current_win()
    agent = walkthroughs.known[id].presented_by
    assert.equals("markdown", vim.bo[buf].filetype)
    assert.is_false(vim.bo[buf].modifiable)
    assert.equals(2, #api.nvim_tabpage_list_wins(0), "beside the window it was opened from")
    local text = h.buffer_text(buf)
    assert.matches("^<!%-%- walkthrough " .. vim.pesc(id) .. " · revision 1 · presented by " .. agent, text)
    assert.matches("\n# Token checks\n\nThe check is in %[`src/auth.rs:6`%]%[%]%.\n", text)
    assert.matches("\n%[0%] Diagram %(mermaid source%):\n```mermaid\nflowchart TD\n  main %-%-> validate\n```\n", text)
  end)

  it("lists each comment with its lines, or why it was not placed and where it could be", function()
    local text = h.buffer_text(buf)
    assert.matches("\n%[1%] Comment on src/auth.rs:6%-8 · step 1 of 2\n> `validate` now trims the token%.\n", text)
    assert.matches("\n%[3%] Comment on src/token.rs:2 · step 2 of 2\n> Where tokens come from%.\n", text)
    local _, ambiguous = wait_line("[2] Comment at search(")
    assert.matches("NOT PLACED: .*matches 4 places", ambiguous)
    for _, place in ipairs({ "src/auth.rs:1", "src/auth.rs:6", "src/auth.rs:10", "src/token.rs:1" }) do
      assert.is_truthy(line_with("    could be " .. place), place .. " is not a candidate:\n" .. text)
    end
    local _, missing = wait_line("[4] Comment at src/missing.rs:1 NOT PLACED: ")
    assert.matches("does not exist", missing)
    wait_line("[5] The change HEAD~1..HEAD · <CR> opens the diff")
    wait_line("[6] Button [Run the tests] · not clicked yet · :ParleyWalkthroughAct 6")
  end)

  it("]w and [w go through the comments, opening each place beside it with its thread", function()
    back_on("[0] Diagram")
    vim.cmd("normal [w")
    assert.is_truthy(h.noted("that was the first step"))
    vim.cmd("normal ]w")
    in_code_window("src/token.rs", 2)
    assert.equals(line_with("[3] Comment on src/token.rs:2"), api.nvim_win_get_cursor(walk_win)[1])
    api.nvim_set_current_win(walk_win)
    vim.cmd("normal [w")
    in_code_window("src/auth.rs", 6)
    local code = api.nvim_get_current_buf()
    h.wait_for("the comment's thread on its lines", function()
      local marks = h.thread_marks(code)
      return #marks == 1
        and marks[1].row == 5
        and marks[1].text:find("validate` now trims", 1, true)
        and marks[1].text:find('(walkthrough "', 1, true)
    end)
    assert.equals(line_with("[1] Comment on src/auth.rs:6-8"), api.nvim_win_get_cursor(walk_win)[1])
    api.nvim_set_current_win(walk_win)
    vim.cmd("normal ]w")
    in_code_window("src/token.rs", 2)
    assert.equals(line_with("[3] Comment on src/token.rs:2"), api.nvim_win_get_cursor(walk_win)[1])
    -- From the code window too, by command.
    vim.cmd("ParleyWalkthroughNext")
    assert.is_truthy(h.noted("that was the last step"))
    vim.cmd("ParleyWalkthroughPrev")
    in_code_window("src/auth.rs", 6)
  end)

  it("<CR> opens a candidate's lines and a file reference", function()
    back_on("    could be src/auth.rs:10")
    vim.cmd("normal \r")
    in_code_window("src/auth.rs", 10)
    api.nvim_set_current_win(walk_win)
    h.cursor_to("[`src/auth.rs:6`][]", 3)
    vim.cmd("normal \r")
    in_code_window("src/auth.rs", 6)
  end)

  it("<CR> on the gitdiff block opens its diff, and <CR> on a line of the diff the file there", function()
    back_on("[5] The change HEAD~1..HEAD")
    vim.cmd("normal \r")
    local diff = api.nvim_get_current_buf()
    assert.equals("parley://walkthrough/" .. id .. "/diff/5", api.nvim_buf_get_name(diff))
    assert.equals("diff", vim.bo[diff].filetype)
    local text = h.buffer_text(diff)
    assert.matches("^# the change HEAD~1%.%.HEAD %(HEAD read as ", text)
    assert.matches("\n%-    !token%.is_empty%(%)\n%+    !token%.trim%(%)%.is_empty%(%)\n", text)
    assert.matches("\n%+%+%+ b/src/token%.rs\n", text)
    h.cursor_to("+    !token.trim()")
    vim.cmd("normal \r")
    in_code_window("src/auth.rs", 7)
  end)

  it("applies a gitdiff block's exclude_staged to the working tree's changes", function()
    back_on("[7] The change working")
    vim.cmd("normal \r")
    local text = h.buffer_text(api.nvim_get_current_buf())
    assert.matches("^# the unstaged changes %(the working tree against the index%)", text)
    assert.matches("\n%+%+%+ b/todo%.md\n", text)
    assert.matches("\n%+unstaged$", text)
    assert.is_nil(text:find("notes.md", 1, true), "the staged change is left out:\n" .. text)
  end)

  it(":ParleyWalkthroughAct presses a button; it shows its message waiting, delivered, then read", function()
    api.nvim_set_current_win(walk_win)
    vim.cmd("ParleyWalkthroughAct 0")
    assert.is_truthy(h.noted("block 0 is not a button: the buttons are 6"), h.notes_text())
    vim.cmd("ParleyWalkthroughAct six")
    assert.is_truthy(h.noted("takes a button's number, as the walkthrough shows it in %[ %], not six"), h.notes_text())
    api.nvim_win_set_cursor(walk_win, { 1, 0 })
    vim.cmd("ParleyWalkthroughAct")
    assert.is_truthy(h.noted("put the cursor on a button of the walkthrough, or give its number"), h.notes_text())
    vim.cmd("ParleyWalkthroughAct 6")
    wait_line("[6] Button [Run the tests] · clicked by ana: waiting for " .. agent)
    h.wait_for("the confirmation", function()
      return h.noted("sent %[Run the tests%] to " .. agent)
    end)
    h.reached("clicked", { agent = agent })
    h.await("delivered")
    wait_line("clicked by ana: delivered to " .. agent .. " (in its next tool answer)")
    h.reached("saw-delivered")
    h.await("read")
    wait_line("clicked by ana: read by " .. agent)
  end)

  it("a reply to a comment shows in the walkthrough", function()
    vim.cmd("ParleyWalkthroughPrev")
    assert.is_truthy(h.noted("that was the first step"))
    back_on("[1] Comment on src/auth.rs:6-8")
    vim.cmd("normal \r")
    in_code_window("src/auth.rs", 6)
    vim.cmd("ParleyReply Why trim here and not in the caller?")
    wait_line("[1] Comment on src/auth.rs:6-8 · step 1 of 2 · 1 reply")
    h.reached("replied")
  end)

  it("shows the agent's next revision as it arrives", function()
    h.await("presented-again")
    wait_line("revision 2 · presented by " .. agent)
    assert.is_truthy(h.noted("updated its walkthrough %(revision 2%): Token checks"), h.notes_text())
    wait_line("[1] Comment on src/auth.rs:6-8 · step 1 of 2 · 1 reply")
    wait_line("[3] Comment on src/token.rs:3 · step 2 of 2")
  end)
end)
