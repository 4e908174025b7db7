-- Catching up after time away: a replay from the same daemon run, a refetch
-- after a restart, and reconnecting by itself with a back-off. Driven by
-- tests/tests/nvim.rs (nvim_catches_up_after_reconnects_and_daemon_restarts).

local h = require("helpers")
local api = vim.api

describe("reconnecting", function()
  local buf, review_buf
  local threads = require("parley.threads")
  local sync = require("parley.sync")
  local ids

  local function mark_text(id)
    local mark = h.thread_mark(buf, id)
    return mark and mark.text or nil
  end

  it("shows the review and threads of the first daemon", function()
    h.setup()
    vim.cmd("edit src/auth.rs")
    buf = api.nvim_get_current_buf()
    h.reached("connected")
    ids = h.await("first")
    vim.cmd("ParleyReview")
    review_buf = api.nvim_get_current_buf()
    h.wait_for("the first review and thread", function()
      return h.buffer_text(review_buf):find("Revision one", 1, true) and mark_text(ids.first) ~= nil
    end)
  end)

  it("replays what it missed from the same daemon", function()
    local instance = sync.instance
    vim.cmd("ParleyDisconnect")
    h.reached("offline")
    h.await("changed-while-offline")
    local replays = 0
    local rpc = require("parley.rpc")
    local request = rpc.request
    rpc.request = function(method, ...)
      if method == "events/replay" then
        replays = replays + 1
      end
      return request(method, ...)
    end
    vim.cmd("ParleyConnect")
    h.wait_for("the review, the reply and the new thread", function()
      return h.buffer_text(review_buf):find("Revision two", 1, true)
        and (mark_text(ids.first) or ""):find("[2]", 1, true)
        and vim.tbl_count(threads.threads) == 2
    end)
    rpc.request = request
    assert.equals(1, replays)
    assert.equals(instance, sync.instance)
    assert.equals(2, #h.thread_marks(buf))
    h.reached("replayed")
  end)

  it("refetches everything from a restarted daemon", function()
    vim.cmd("ParleyDisconnect")
    h.reached("offline-again")
    local old_instance = sync.instance
    h.await("restarted")
    vim.cmd("ParleyConnect")
    h.wait_for("the new daemon's review and threads", function()
      return h.buffer_text(review_buf):find("Revision three", 1, true)
        and threads.threads[ids.first] == nil
        and h.thread_mark(buf, ids.first) == nil
        and vim.tbl_count(threads.threads) == 1
    end)
    assert.are_not.equal(old_instance, sync.instance)
    assert.equals(1, #h.thread_marks(buf))
    h.reached("refetched")
  end)

  it("reconnects by itself when the daemon restarts under it", function()
    h.await("stopped")
    h.wait_for("the plugin to notice", function()
      return not require("parley").connected()
    end)
    h.reached("noticed")
    h.await("started")
    h.wait_for("the plugin to reconnect", function()
      return require("parley").connected()
    end, 15000)
    h.reached("reconnected")
    h.await("presented")
    h.wait_for("the live review", function()
      return h.buffer_text(review_buf):find("Revision four", 1, true)
    end)
  end)
end)
