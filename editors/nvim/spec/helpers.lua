-- What the specs share: waiting on conditions with a deadline, the link to
-- the Rust test that drives the daemon, the agent and the CLI
-- (tests/tests/nvim.rs), captured notifications, and reading the plugin's
-- marks back out of a buffer.
--
-- The link is a Unix socket ($PARLEY_TEST_DRIVER) carrying one JSON object
-- per line, {"mark": name, "data": …}, both ways: `reached` says this side
-- got somewhere, `await` waits for the Rust side to say it did something.

local api = vim.api
local uv = vim.uv or vim.loop
local h = {}

-- How long any awaited condition may take before the spec fails.
h.TIMEOUT = 10000

function h.env(name)
  local value = os.getenv(name)
  assert(value and value ~= "", name .. " is not set: run the specs through `cargo test -p parley-tests --test nvim`")
  return value
end

-- Waits until `condition()` is true (errors inside it count as false), or fails naming `what`.
function h.wait_for(what, condition, timeout)
  local last_error = nil
  local ok = vim.wait(timeout or h.TIMEOUT, function()
    local fine, result = pcall(condition)
    if not fine then
      last_error = result
    end
    return fine and result
  end, 10)
  if not ok then
    local detail = last_error and (" (last error: " .. tostring(last_error) .. ")") or ""
    error("timed out waiting for " .. what .. detail, 2)
  end
end

-- Notifications the plugin sends, instead of printing them.
h.notes = {}
vim.notify = function(message, level)
  h.notes[#h.notes + 1] = { message = message, level = level }
end

function h.noted(pattern)
  for _, note in ipairs(h.notes) do
    if note.message:find(pattern) then
      return note
    end
  end
  return nil
end

function h.notes_text()
  local all = {}
  for _, note in ipairs(h.notes) do
    all[#all + 1] = note.message
  end
  return table.concat(all, "\n")
end

local driver = nil

local function link()
  if driver then
    return driver
  end
  driver = { pipe = uv.new_pipe(false), buffered = "", inbox = {}, closed = false, ready = false }
  driver.pipe:connect(h.env("PARLEY_TEST_DRIVER"), function(err)
    if err then
      driver.closed = "cannot connect to the test driver: " .. err
      return
    end
    driver.ready = true
    driver.pipe:read_start(function(rerr, chunk)
      if rerr or not chunk then
        driver.closed = "the Rust test went away (it failed or timed out)"
        return
      end
      driver.buffered = driver.buffered .. chunk
      while true do
        local newline = driver.buffered:find("\n", 1, true)
        if not newline then
          break
        end
        local line = driver.buffered:sub(1, newline - 1)
        driver.buffered = driver.buffered:sub(newline + 1)
        driver.inbox[#driver.inbox + 1] = line
      end
    end)
  end)
  h.wait_for("the link to the Rust test", function()
    return driver.ready or driver.closed
  end)
  assert(not driver.closed, driver.closed)
  return driver
end

-- Tells the Rust test that this side reached `mark`, with optional data.
function h.reached(mark, data)
  local d = link()
  d.pipe:write(vim.json.encode({ mark = mark, data = data == nil and vim.NIL or data }) .. "\n")
end

-- Waits for the Rust test to say `mark`; returns its data.
function h.await(mark, timeout)
  local d = link()
  local message = nil
  h.wait_for("the Rust test to say " .. mark, function()
    if d.closed then
      error(d.closed)
    end
    local line = table.remove(d.inbox, 1)
    if line then
      message = vim.json.decode(line)
      return true
    end
    return false
  end, timeout or 20000)
  assert(message.mark == mark, "the Rust test said " .. tostring(message.mark) .. " where " .. mark .. " was expected")
  return message.data
end

-- Asks the daemon for `status` until `accept(status)` holds (the daemon
-- updates its view of connections asynchronously).
function h.wait_for_status(what, accept)
  local rpc = require("parley.rpc")
  local accepted, last = false, nil
  local function ask()
    rpc.request("status", vim.NIL, function(err, status)
      last = err or status
      if not err and accept(status) then
        accepted = true
      else
        vim.defer_fn(ask, 20)
      end
    end)
  end
  ask()
  h.wait_for(what .. " (last status: " .. vim.inspect(last) .. ")", function()
    return accepted
  end)
end

-- Sets up the plugin against the sandbox's daemon and waits for the hello.
function h.setup(options)
  local defaults = { parley_cmd = h.env("PARLEY_BIN"), start_daemon = false, editor_id = "nvim-test", author = "ana" }
  require("parley").setup(vim.tbl_extend("force", defaults, options or {}))
  h.wait_for("the plugin to connect to the daemon", function()
    return require("parley").connected()
  end)
end

-- What the sign column shows on buffer line `lnum` (1-based) of the current
-- window, read from the screen (Neovim 0.7 does not report an extmark's sign).
function h.sign_at(lnum)
  vim.cmd("redraw!")
  local pos = vim.fn.screenpos(0, lnum, 1)
  assert(pos.row > 0, "line " .. lnum .. " is not on the screen")
  local corner = vim.fn.win_screenpos(0)
  return vim.trim(vim.fn.screenstring(pos.row, corner[2]) .. vim.fn.screenstring(pos.row, corner[2] + 1))
end

local function mark_fields(row, col, d)
  return {
    row = row,
    col = col,
    end_row = d.end_row,
    end_col = d.end_col,
    text = d.virt_text and d.virt_text[1] and d.virt_text[1][1] or nil,
    -- Where the thread stands, when an agent has done something with it.
    standing = d.virt_text and d.virt_text[2] and d.virt_text[2][1] or nil,
  }
end

-- The mark of thread `id` in `buf`, or nil.
function h.thread_mark(buf, id)
  local threads = require("parley.threads")
  local at = api.nvim_buf_get_extmark_by_id(buf, threads.namespace, threads.mark_id(id), { details = true })
  if not at or #at == 0 then
    return nil
  end
  return mark_fields(at[1], at[2], at[3])
end

-- The plugin's thread marks in `buf`: { row, col, end_row, end_col, text }, by row.
function h.thread_marks(buf)
  local ns = require("parley.threads").namespace
  local marks = {}
  for _, m in ipairs(api.nvim_buf_get_extmarks(buf, ns, 0, -1, { details = true })) do
    marks[#marks + 1] = mark_fields(m[2], m[3], m[4])
  end
  return marks
end

function h.buffer_text(buf)
  return table.concat(api.nvim_buf_get_lines(buf, 0, -1, false), "\n")
end

-- Finds `needle` in the current buffer and puts the cursor on its first byte (or at `offset` bytes in).
function h.cursor_to(needle, offset)
  local lines = api.nvim_buf_get_lines(0, 0, -1, false)
  for i, line in ipairs(lines) do
    local s = line:find(needle, 1, true)
    if s then
      api.nvim_win_set_cursor(0, { i, s - 1 + (offset or 0) })
      return i, s - 1
    end
  end
  error("no " .. needle .. " in the buffer", 2)
end

return h
