-- Drafts: the comments a person writes on a round's diff before sending it.
-- The daemon keeps them (round/comment, round/uncomment), so the command
-- line and other editors share them, and they survive restarts; this module
-- writes, edits, removes and lists them, and sends them with the verdict
-- (round/submit).

local model = require("parley.rounds.model")
local buffers = require("parley.rounds.buffers")
local views = require("parley.rounds.views")
local rpc = require("parley.rpc")

local api = vim.api
local value, first_line, fail, info, plural = model.value, model.first_line, model.fail, model.info, model.plural
local M = {}

-- Puts `draft` into round `id` (a new one, or the new text of one we have).
local function keep_draft(id, draft)
  local round = model.rounds[id]
  if not round or type(draft) ~= "table" then
    return
  end
  round.drafts = round.drafts or {}
  for i, known in ipairs(round.drafts) do
    if known.id == draft.id then
      round.drafts[i] = draft
      return views.redraw(id)
    end
  end
  table.insert(round.drafts, draft)
  views.redraw(id)
end

local SEVERITIES = { critical = true, major = true, minor = true, suggestion = true }

-- A comment may start with its severity in brackets: "[major] Check the length".
-- Without one, the daemon takes it from the verdict.
function M.split_severity(text)
  local tag, rest = text:match("^%s*%[(%a+)%]%s*(.*)$")
  if tag and SEVERITIES[tag:lower()] and rest ~= "" then
    return tag:lower(), rest
  end
  return nil, text
end

local function send_draft(params, on_saved)
  local severity, body = M.split_severity(params.body)
  params = vim.tbl_extend("force", params, { body = body, severity = severity or params.severity })
  rpc.request("round/comment", params, function(err, result)
    if err then
      return fail("the draft was not saved: " .. tostring(err))
    end
    local draft = type(result) == "table" and result.draft or nil
    keep_draft(params.review_id, draft)
    if model.waiting[params.review_id] and model.rounds[params.review_id] then
      model.waiting[params.review_id].drafts = #model.rounds[params.review_id].drafts
    end
    if on_saved then
      on_saved(draft)
    end
  end)
end

-- Splits a draft editor's text into the comment and the suggestion (a
-- ```suggestion fenced block, as on a pull request).
function M.parse_draft(lines)
  lines = vim.list_extend({}, lines)
  if lines[1] and lines[1]:match("^<!%-%-.*%-%->%s*$") then
    table.remove(lines, 1)
  end
  local body, suggestion = {}, nil
  local i = 1
  while i <= #lines do
    if suggestion == nil and lines[i]:match("^```suggestion%s*$") then
      local close_at = nil
      for j = #lines, i + 1, -1 do
        if lines[j]:match("^```%s*$") then
          close_at = j
          break
        end
      end
      if close_at then
        suggestion = table.concat(vim.list_slice(lines, i + 1, close_at - 1), "\n")
        i = close_at + 1
      else
        body[#body + 1] = lines[i]
        i = i + 1
      end
    else
      body[#body + 1] = lines[i]
      i = i + 1
    end
  end
  return vim.trim(table.concat(body, "\n")), suggestion
end

-- Opens a small buffer to write a draft in; `:w` saves it (round/comment) and closes it.
-- `target`: { review_id, path, side, start_line, end_line, draft_id? }.
local function compose(target, body, suggestion)
  local id = target.review_id
  local where = string.format("%s:%d-%d", target.path, target.start_line + 1, target.end_line + 1)
  local key = "draft/" .. target.side .. "/" .. where .. (target.draft_id and ("#" .. target.draft_id) or "")
  local buf = buffers.scratch(id, key, buffers.SCHEME .. id .. "/draft/" .. target.side .. "/" .. where)
  vim.bo[buf].buftype = "acwrite"
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].filetype = "markdown"
  local lines = {
    string.format("<!-- comment on %s (%s side); :w saves the draft, :q! drops it -->", where, target.side),
  }
  vim.list_extend(lines, vim.split(body or "", "\n", { plain = true }))
  if suggestion then
    lines[#lines + 1] = "```suggestion"
    vim.list_extend(lines, vim.split(suggestion, "\n", { plain = true }))
    lines[#lines + 1] = "```"
  end
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modified = false
  api.nvim_create_autocmd("BufWriteCmd", {
    buffer = buf,
    callback = function()
      local text, suggested = M.parse_draft(api.nvim_buf_get_lines(buf, 0, -1, false))
      if text == "" then
        return fail("write the comment above the suggestion first (an empty comment is not saved)")
      end
      local params = vim.tbl_extend("force", target, { body = text, suggestion = suggested })
      send_draft(params, function()
        if api.nvim_buf_is_valid(buf) then
          vim.bo[buf].modified = false
          for _, win in ipairs(vim.fn.win_findbuf(buf)) do
            if #api.nvim_tabpage_list_wins(api.nvim_win_get_tabpage(win)) > 1 then
              api.nvim_win_close(win, true)
            end
          end
          buffers.wipe(buf)
        end
      end)
    end,
  })
  vim.keymap.set("n", "q", "<Cmd>close!<CR>", { buffer = buf, desc = "Parley: drop this draft" })
  vim.cmd("belowright " .. math.max(4, math.min(#lines + 2, 12)) .. "split")
  api.nvim_win_set_buf(0, buf)
  api.nvim_win_set_cursor(0, { math.min(2, #lines), 0 })
  return buf
end

-- Where a comment command applies: the round, file, side and lines of the current diff buffer.
local function target_here(opts)
  local buf = api.nvim_get_current_buf()
  local at = buffers.info(buf)
  if not at or at.kind == "list" then
    return nil, "run this in a diff buffer of a round (:ParleyReviewRound opens one)"
  end
  if at.kind == "previous" then
    return nil,
      "the left side here is the previous round's text; comment on the right side, or on removed lines in the whole change (s in the file list)"
  end
  if not at.side then
    return nil, "this side has no lines to comment on (the file is added, deleted, binary or too large)"
  end
  local line1 = opts.range > 0 and opts.line1 or api.nvim_win_get_cursor(0)[1]
  local line2 = opts.range > 0 and opts.line2 or line1
  return {
    review_id = at.review_id,
    path = at.path,
    side = at.side,
    start_line = line1 - 1,
    end_line = line2 - 1,
  }
end

-- :[range]ParleyRoundComment [text] — a draft on the lines; without text, an editor for it.
function M.comment(opts)
  local target, why = target_here(opts)
  if not target then
    return fail(why)
  end
  local text = vim.trim(opts.args or "")
  if text ~= "" then
    send_draft(vim.tbl_extend("force", target, { body = text }))
  else
    compose(target, "", nil)
  end
end

-- :[range]ParleyRoundSuggest [text] — an editor with the lines as the suggestion to edit.
function M.suggest(opts)
  local target, why = target_here(opts)
  if not target then
    return fail(why)
  end
  local lines = api.nvim_buf_get_lines(0, target.start_line, target.end_line + 1, false)
  compose(target, vim.trim(opts.args or ""), table.concat(lines, "\n"))
end

-- The draft under the cursor in a diff buffer (the narrowest), or on a :ParleyRoundDrafts entry.
local function draft_here()
  local buf = api.nvim_get_current_buf()
  if vim.bo[buf].buftype == "quickfix" then
    local qf = vim.fn.getqflist({ context = 0 })
    local context = type(qf.context) == "table" and qf.context.parley_drafts
    if context then
      local round = model.rounds[context.review_id]
      local wanted = context.ids[vim.fn.line(".")]
      for _, draft in ipairs(round and round.drafts or {}) do
        if draft.id == wanted then
          return context.review_id, draft
        end
      end
    end
    return nil
  end
  local at = buffers.info(buf)
  local round = at and model.rounds[at.review_id]
  if not round then
    return nil
  end
  local row = api.nvim_win_get_cursor(0)[1] - 1
  local best = nil
  for _, draft in ipairs(round.drafts or {}) do
    if draft.path == at.path and draft.side == at.side and row >= draft.start_line and row <= draft.end_line then
      if not best or (draft.end_line - draft.start_line) <= (best.end_line - best.start_line) then
        best = draft
      end
    end
  end
  return at.review_id, best
end

-- :ParleyRoundUncomment — removes the draft under the cursor.
function M.uncomment()
  local id, draft = draft_here()
  if not draft then
    return fail("no draft under the cursor (:ParleyRoundDrafts lists them)")
  end
  rpc.request("round/uncomment", { review_id = id, draft_id = draft.id }, function(err)
    if err then
      return fail("the draft was not removed: " .. tostring(err))
    end
    local round = model.rounds[id]
    if round then
      round.drafts = vim.tbl_filter(function(d)
        return d.id ~= draft.id
      end, round.drafts or {})
      views.redraw(id)
    end
  end)
end

-- :ParleyRoundEdit — edits the draft under the cursor in a draft editor.
function M.edit()
  local id, draft = draft_here()
  if not draft then
    return fail("no draft under the cursor (:ParleyRoundDrafts lists them)")
  end
  local target = {
    review_id = id,
    path = draft.path,
    side = draft.side,
    start_line = draft.start_line,
    end_line = draft.end_line,
    draft_id = draft.id,
  }
  local severity = value(draft.severity)
  compose(target, (severity and ("[" .. severity .. "] ") or "") .. draft.body, value(draft.suggestion))
end

-- :ParleyRoundDrafts — the drafts of the current (or newest) round in the quickfix list.
function M.drafts_to_quickfix(id)
  id = id or views.current_id() or views.default_id()
  if not id then
    return info("no review round waits for you here (:ParleyInbox lists what does)")
  end
  local function fill(round)
    model.rounds[round.review_id] = round
    local items, ids = {}, {}
    -- A copy of the list (vim.deepcopy cannot copy the vim.NIL in it on Neovim 0.7).
    local drafts = vim.list_extend({}, round.drafts or {})
    table.sort(drafts, function(a, b)
      if a.path ~= b.path then
        return a.path < b.path
      end
      if a.side ~= b.side then
        return a.side > b.side
      end
      return a.start_line < b.start_line
    end)
    for _, draft in ipairs(drafts) do
      local file = model.file_of(round, draft.path)
      local buf = file and views.buffer_for(round, file, draft.side)
      local severity = value(draft.severity)
      local text = "[" .. draft.side .. "] " .. (severity and (severity .. ": ") or "") .. first_line(draft.body)
      if value(draft.suggestion) then
        text = text .. " [suggests a change]"
      end
      items[#items + 1] = {
        bufnr = buf,
        lnum = draft.start_line + 1,
        end_lnum = draft.end_line + 1,
        col = 1,
        text = text,
        valid = 1,
      }
      ids[#items] = draft.id
    end
    vim.fn.setqflist({}, " ", {
      title = "Parley drafts of " .. round.review_id,
      items = items,
      context = { parley_drafts = { review_id = round.review_id, ids = ids } },
    })
    if #items == 0 then
      info("no drafts yet in review " .. round.review_id)
    end
    vim.cmd("botright copen")
  end
  if model.rounds[id] then
    fill(model.rounds[id])
  else
    views.fetch(id, fill)
  end
end

--------------------------------------------------------------------------
-- The verdict

local function verdict_of(word)
  word = (word or ""):gsub("%-", "_")
  if word == "changes" then
    word = "request_changes"
  end
  for _, v in ipairs(model.VERDICTS) do
    if v == word then
      return v
    end
  end
  return nil
end

-- :ParleyRoundSubmit approve|request_changes|comment [summary]
function M.submit(args)
  local word, summary = vim.trim(args or ""):match("^(%S+)%s*(.*)$")
  local verdict = verdict_of(word)
  if not verdict then
    return fail(":ParleyRoundSubmit takes approve, request_changes or comment, then an optional summary")
  end
  local id = views.default_id()
  if not id then
    return info("no review round waits for you here (:ParleyInbox lists what does)")
  end
  local params = { review_id = id, verdict = verdict }
  if summary and summary ~= "" then
    params.summary = summary
  end
  local plan = model.is_plan(model.rounds[id]) or model.is_plan(model.waiting[id])
  -- round/changed may come before the answer: it is ours, and needs no message.
  model.submitted_here[id] = true
  rpc.request("round/submit", params, function(err, result)
    if err then
      model.submitted_here[id] = nil
      return fail("the review was not submitted: " .. tostring(err))
    end
    result = type(result) == "table" and result or {}
    local full = result.review_id or id
    local review = type(result.review) == "table" and result.review or {}
    -- The line comments (the summary travels as a general comment of its own).
    local comments = #vim.tbl_filter(function(c)
      return c.type ~= "general"
    end, review.comments or {})
    local opened = #(result.threads or {})
    local message = string.format(
      "review %s, round %s: %s sent (%s; %s opened on the code)",
      full,
      tostring(result.round or "?"),
      tostring(value(result.verdict) or verdict),
      plural(comments, "comment"),
      plural(opened, "thread")
    )
    if plan then
      local said = value(result.verdict) == "needs_changes" and "changes requested: the agent revises the plan"
        or (comments > 0 and "approved with comments: the agent goes ahead, your comments reach it as notes")
        or "approved: the agent goes ahead"
      message = string.format("plan %s (version %s): %s (%s)", full, tostring(result.round or "?"), said, plural(comments, "comment"))
    end
    for _, warning in ipairs(result.warnings or {}) do
      message = message .. "\n" .. tostring(warning)
    end
    info(message)
    model.waiting[full] = nil
    views.close(full)
  end)
end

return M
