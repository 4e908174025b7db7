-- Reviews arriving live: the notification, :ParleyReview, the open buffer
-- following updates, and an earlier revision opened by number. Driven by tests/tests/nvim.rs
-- (nvim_shows_a_review_and_keeps_it_current).

local h = require("helpers")
local api = vim.api

describe("reviews", function()
  local buf

  it("connects on the current directory, found through `parley socket-path`", function()
    h.setup()
    h.reached("connected")
  end)

  it("tells the user when an agent presents a review", function()
    h.await("presented")
    h.wait_for("a notification about the new review", function()
      return h.noted("New review")
    end)
    assert.matches(":ParleyReview", h.noted("New review").message)
  end)

  it(":ParleyReview shows it in a read-only markdown buffer", function()
    vim.cmd("ParleyReview")
    buf = api.nvim_get_current_buf()
    assert.equals("parley://review", api.nvim_buf_get_name(buf))
    assert.equals("markdown", vim.bo[buf].filetype)
    assert.equals("nofile", vim.bo[buf].buftype)
    assert.is_false(vim.bo[buf].modifiable)
    assert.equals(2, #api.nvim_tabpage_list_wins(0), "beside the window it was opened from")
    assert.matches("^# Login refactor\n", h.buffer_text(buf))
    h.reached("shown")
  end)

  it("follows the agent's updates in the open buffer", function()
    h.await("updated")
    h.wait_for("the buffer to show the new section", function()
      return h.buffer_text(buf):find("## Tests", 1, true)
    end)
    assert.matches("^# Login refactor\n", h.buffer_text(buf))
    assert.matches("Review updated %(revision 2%)", h.notes_text())
    assert.equals(2, vim.b[buf].parley_revision)
  end)

  it(":ParleyReview 1 opens the earlier revision, saying who made it", function()
    local function revision_buffer()
      for _, b in ipairs(api.nvim_list_bufs()) do
        if api.nvim_buf_get_name(b) == "parley://review/1" then
          return b
        end
      end
    end
    vim.cmd("ParleyReview 1")
    h.wait_for("revision 1 in a buffer of its own", revision_buffer)
    local text = h.buffer_text(revision_buffer())
    assert.matches("^<!%-%- revision 1 · presented by ", text)
    assert.matches("# Login refactor", text)
    assert.is_nil(text:find("## Tests", 1, true), "revision 1 is from before the update")
    assert.matches("## Tests", h.buffer_text(buf), "the current review's buffer is unchanged")
  end)
end)
