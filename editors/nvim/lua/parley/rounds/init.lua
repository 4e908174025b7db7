-- Review rounds that wait on a person: an agent asked for a human review and
-- waits (await_review) for the verdict given here. This is what the rest of
-- the plugin calls; the work is done by concern, as in diffview.nvim:
--
--   rounds/model.lua    what the daemon said: the waiting rounds, the rounds opened here
--   rounds/buffers.lua  the rounds' scratch buffers and the marks on them
--   rounds/views.lua    a round's tab: the file list and each file's diff (:ParleyReviewRound)
--   rounds/drafts.lua   draft comments and suggestions, and the verdict that sends them
--   rounds/inbox.lua    being asked, keeping up with the daemon, :ParleyInbox
--
-- Comments on lines of either side are drafts kept by the daemon
-- (round/comment), so the command line and other editors share them, until
-- the person submits a verdict (round/submit).

local model = require("parley.rounds.model")
local buffers = require("parley.rounds.buffers")
local views = require("parley.rounds.views")
local drafts = require("parley.rounds.drafts")
local inbox = require("parley.rounds.inbox")

local M = {}

-- review_id → WaitingRound, for the rounds waiting on a person in this window's folders.
M.waiting = model.waiting
-- The threads waiting on a person's answer, as the last `inbox` gave them.
M.inbox_threads = model.inbox_threads
-- review_id → the round as round/get described it, drafts kept current, for rounds opened here.
M.rounds = model.rounds
-- The namespace of the marks on a round's diff buffers.
M.namespace = buffers.namespace
-- What :ParleyRoundSubmit takes.
M.verdicts = model.VERDICTS

-- The waiting rounds, newest first.
M.waiting_list = model.waiting_list
-- Registers the handlers of round/requested and round/changed; called from setup().
M.attach = inbox.attach
-- The number of rounds waiting on this window's person, for :ParleyStatus.
M.count = inbox.count

-- :ParleyInbox
M.inbox = inbox.inbox
-- :ParleyReviewRound [ID] [since]
M.review = views.review
-- :[range]ParleyRoundComment [text]
M.comment = drafts.comment
-- :[range]ParleyRoundSuggest [text]
M.suggest = drafts.suggest
-- :ParleyRoundEdit
M.edit = drafts.edit
-- :ParleyRoundUncomment
M.uncomment = drafts.uncomment
-- :ParleyRoundDrafts
M.drafts_to_quickfix = drafts.drafts_to_quickfix
-- :ParleyRoundSubmit approve|request_changes|comment [summary]
M.submit = drafts.submit

return M
