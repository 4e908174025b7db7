-- Parley for Neovim: connects this window to the Parley daemon as an editor,
-- shows the reviews agents present and the feedback threads on its files,
-- lets the person review an agent's change or plan when the agent asks a
-- human (review rounds), read the walkthroughs agents present and press
-- their buttons, ask a chosen agent about lines of code, and answers
-- agents' requests for the selection.
--
--   require("parley").setup({})   -- options: :help parley-options, lua/parley/config.lua

local asking = require("parley.asking")
local config = require("parley.config")
local rpc = require("parley.rpc")
local review = require("parley.review")
local rounds = require("parley.rounds")
local selection = require("parley.selection")
local sync = require("parley.sync")
local threads = require("parley.threads")
local walkthroughs = require("parley.walkthroughs")

local api = vim.api
local uv = vim.uv or vim.loop
local M = {}

M.version = "0.1.0"
M.did_setup = false

local function nvim_version()
  local v = vim.version()
  return string.format("%d.%d.%d", v.major, v.minor, v.patch)
end

-- The folders this window works on.
function M.workspaces()
  if config.options.roots and #config.options.roots > 0 then
    local roots = {}
    for i, root in ipairs(config.options.roots) do
      roots[i] = vim.fn.fnamemodify(root, ":p"):gsub("(.)/$", "%1")
    end
    return roots
  end
  return { uv.cwd() }
end

function M.editor_id()
  return config.options.editor_id or ("nvim-" .. vim.fn.getpid())
end

local function hello()
  return {
    protocol = rpc.PROTOCOL,
    role = "editor",
    client = { name = "nvim", version = nvim_version() },
    pid = vim.fn.getpid(),
    cwd = uv.cwd(),
    workspaces = M.workspaces(),
    editor_id = M.editor_id(),
    position_encoding = "utf-8",
  }
end

local function highlights()
  vim.cmd([[
    highlight default link ParleySign DiagnosticSignInfo
    highlight default link ParleyOrphanedSign DiagnosticSignWarn
    highlight default link ParleyText Comment
    highlight default link ParleyOrphanedText DiagnosticWarn
    highlight default link ParleyStanding NonText
    highlight default link ParleyDraftSign DiagnosticSignHint
    highlight default link ParleyDraftText DiagnosticHint
  ]])
  api.nvim_set_hl(0, "ParleyRange", { default = true })
end

local function command(name, fn, opts)
  api.nvim_create_user_command(name, fn, opts)
end

local function commands()
  command("ParleyReview", function(o)
    local arg = vim.trim(o.args or "")
    if arg == "" then
      review.open()
    elseif arg == "history" then
      review.pick_revision()
    elseif tonumber(arg) then
      review.open_revision(tonumber(arg))
    else
      vim.notify("Parley: :ParleyReview takes nothing, a revision number, or `history`", vim.log.levels.WARN)
    end
  end, {
    nargs = "?",
    complete = function()
      return { "history" }
    end,
    desc = "Parley: show the current review, revision N of it, or its history",
  })
  command("ParleyComment", function(o)
    threads.comment(o)
  end, { range = true, nargs = "*", desc = "Parley: comment on the selection" })
  command("ParleyReply", function(o)
    threads.reply(o.args)
  end, { nargs = "*", desc = "Parley: reply to the thread under the cursor" })
  command("ParleyResolve", function(o)
    threads.resolve(o.args)
  end, { nargs = "?", desc = "Parley: resolve the thread under the cursor" })
  command("ParleyOpenOnGitHub", function(o)
    threads.open_on_github(o.args)
  end, { nargs = "?", desc = "Parley: open the thread under the cursor on GitHub" })
  command("ParleyThreads", function()
    threads.to_quickfix()
  end, { desc = "Parley: list open threads in the quickfix list" })
  command("ParleyAsk", function(o)
    asking.ask(o)
  end, {
    range = true,
    nargs = "*",
    complete = function(lead, line)
      if line:match("Ask%s+%S+%s") then
        return {}
      end
      return vim.tbl_filter(function(name)
        return name:sub(1, #lead) == lead
      end, asking.names())
    end,
    desc = "Parley: ask an agent at work about these lines ([agent] [message])",
  })
  command("ParleyResend", function(o)
    asking.resend(o.args)
  end, {
    nargs = "?",
    complete = function()
      return asking.names()
    end,
    desc = "Parley: send the thread's waiting message to another agent",
  })
  command("ParleyType", function()
    asking.type_into_terminal()
  end, { desc = "Parley: type the thread's waiting message into the terminal its agent runs in" })
  command("ParleyAgents", function()
    asking.list()
  end, { desc = "Parley: the agents at work" })
  command("ParleyInbox", function()
    rounds.inbox()
  end, { desc = "Parley: review rounds and threads waiting on you, in the quickfix list" })
  command("ParleyReviewRound", function(o)
    rounds.review(o.args)
  end, {
    nargs = "*",
    complete = function()
      local words = { "since", "all" }
      for _, w in ipairs(rounds.waiting_list()) do
        words[#words + 1] = w.review_id
      end
      return words
    end,
    desc = "Parley: open a review round (ID, `since` for the changes since the last round)",
  })
  command("ParleyRoundComment", function(o)
    rounds.comment(o)
  end, { range = true, nargs = "*", desc = "Parley: a draft comment on these lines of the round's diff" })
  command("ParleyRoundSuggest", function(o)
    rounds.suggest(o)
  end, { range = true, nargs = "*", desc = "Parley: a draft suggesting new text for these lines" })
  command("ParleyRoundEdit", function()
    rounds.edit()
  end, { desc = "Parley: edit the draft under the cursor" })
  command("ParleyRoundUncomment", function()
    rounds.uncomment()
  end, { desc = "Parley: remove the draft under the cursor" })
  command("ParleyRoundDrafts", function()
    rounds.drafts_to_quickfix()
  end, { desc = "Parley: the round's drafts in the quickfix list" })
  command("ParleyRoundSubmit", function(o)
    rounds.submit(o.args)
  end, {
    nargs = "+",
    complete = function(lead, line)
      if line:match("^%S+%s+%S+%s") then
        return {}
      end
      return vim.tbl_filter(function(v)
        return v:sub(1, #lead) == lead
      end, rounds.verdicts)
    end,
    desc = "Parley: submit the review: approve, request_changes or comment, and a summary",
  })
  command("ParleyWalkthrough", function(o)
    walkthroughs.open(o.args)
  end, {
    nargs = "?",
    complete = function()
      local words = { "list" }
      for id in pairs(walkthroughs.known) do
        words[#words + 1] = id
      end
      return words
    end,
    desc = "Parley: show the latest walkthrough (or walkthrough ID, or pick from the `list`)",
  })
  command("ParleyWalkthroughAct", function(o)
    walkthroughs.act(o.args)
  end, { nargs = "?", desc = "Parley: press button N of the walkthrough (the one under the cursor without N)" })
  command("ParleyWalkthroughNext", function()
    walkthroughs.step(1)
  end, { desc = "Parley: the walkthrough's next comment, opened at its lines" })
  command("ParleyWalkthroughPrev", function()
    walkthroughs.step(-1)
  end, { desc = "Parley: the walkthrough's previous comment, opened at its lines" })
  command("ParleyConnect", function()
    rpc.restart()
  end, { desc = "Parley: connect to the daemon now" })
  command("ParleyDisconnect", function()
    rpc.stop()
  end, { desc = "Parley: disconnect from the daemon until :ParleyConnect" })
  command("ParleyStatus", function()
    print(M.status_line())
  end, { desc = "Parley: connection status" })
end

-- Whether Neovim has focus, as far as FocusGained and FocusLost tell.
local focused = true

local function autocmds()
  local group = api.nvim_create_augroup("parley", { clear = true })
  local function on(events, callback, pattern)
    api.nvim_create_autocmd(events, { group = group, pattern = pattern, callback = callback })
  end
  on("FocusGained", function()
    focused = true
    rpc.notify("editor/focus", { focused = true })
  end)
  on("FocusLost", function()
    focused = false
    rpc.notify("editor/focus", { focused = false })
  end)
  on("ModeChanged", function()
    selection.on_mode_changed(function(current)
      rpc.notify("selection/changed", { selection = current or vim.NIL })
    end)
  end)
  on("BufReadPost", function(args)
    threads.buffer_read(args.buf)
  end)
  on({ "TextChanged", "InsertLeave" }, function(args)
    threads.buffer_edited(args.buf)
  end)
  on("BufWritePost", function(args)
    threads.buffer_written(args.buf)
  end)
  on("BufWipeout", function(args)
    threads.forget(args.buf)
  end)
  -- Without configured roots the window works on the current directory: a
  -- new one means a new hello, and everything fetched again for it.
  local workspaces = table.concat(M.workspaces(), "\n")
  on("DirChanged", function()
    local now = table.concat(M.workspaces(), "\n")
    if now ~= workspaces then
      workspaces = now
      sync.refetch_next()
      rpc.restart()
    end
  end, { "global", "auto" })
  on("VimLeavePre", function()
    rpc.stop()
  end)
end

-- One line on the connection, for :ParleyStatus.
function M.status_line()
  local s = rpc.status()
  if s.hello then
    return string.format(
      "Parley: connected to daemon %s (hub protocol %d, pid %d) at %s; %d open thread(s); %d review round(s) waiting on you",
      s.hello.version, s.hello.protocol, s.hello.pid, s.socket or "?", vim.tbl_count(threads.threads), rounds.count()
    )
  end
  return "Parley: " .. s.state .. (s.error and (" — " .. s.error) or "")
end

function M.setup(opts)
  config.set(opts)
  vim.env.PARLEY_EDITOR_ID = M.editor_id()
  highlights()
  commands()
  autocmds()
  sync.attach()
  rounds.attach()
  asking.attach()
  walkthroughs.attach()
  require("parley.ide").attach()
  rpc.request_handlers["selection/get"] = function()
    return selection.current() or vim.NIL
  end
  if M.did_setup then
    rpc.stop()
  else
    -- After each hello, as docs/protocol.md §8 recommends: focus, and the
    -- selection the daemon falls back on when this window is slow to answer.
    rpc.on("connect", function()
      rpc.notify("editor/focus", { focused = focused })
      local current = selection.current()
      if current then
        rpc.notify("selection/changed", { selection = current })
      end
    end)
  end
  M.did_setup = true
  rpc.start({
    socket = config.options.socket,
    parley_cmd = config.options.parley_cmd,
    start_daemon = config.options.start_daemon,
    hello = hello,
  })
end

-- Whether the connection to the daemon is up.
function M.connected()
  return rpc.connected()
end

return M
