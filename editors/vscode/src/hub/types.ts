// The hub protocol's shapes as this extension uses them (docs/protocol.md §3–§5). Imports nothing from vscode.
// test/unit/wireTypes.test.ts checks them against the snapshots of the Rust types (protocol/tests/snapshots).

/** 0-based line; `character` in UTF-16 code units, as this client declares in its hello. */
export interface Position {
  line: number;
  character: number;
}

export interface Range {
  start: Position;
  end: Position;
}

export interface HelloParams {
  protocol: 1;
  role: 'editor';
  client: { name: string; version: string };
  pid: number;
  cwd?: string;
  workspaces: string[];
  editor_id: string;
  position_encoding: 'utf-16';
}

/** The params of the methods and notifications this extension sends (docs/protocol.md §5). */
export interface FocusParams {
  focused: boolean;
}

export interface SelectionChangedParams {
  selection: Selection | null;
}

export interface ReviewGetParams {
  workspace?: string;
  revision?: number;
}

export interface ReviewHistoryParams {
  workspace?: string;
}

export interface FeedbackListParams {
  workspace?: string;
  path?: string;
  include_resolved?: boolean;
  offset?: number;
  limit?: number;
}

export interface FeedbackCreateParams {
  path: string;
  range: Range;
  text?: string;
  body: string;
  author?: string;
}

export interface FeedbackReplyParams {
  thread_id: string;
  body: string;
  author?: string;
}

/** feedback/resolve's and feedback/reopen's. */
export interface ThreadIdParams {
  thread_id: string;
}

export interface BufferChangedParams {
  path: string;
  text: string;
}

export interface EventsReplayParams {
  after?: number;
  instance?: string;
}

export interface InboxParams {
  workspace?: string;
  offset?: number;
}

export interface RoundGetParams {
  review_id: string;
  round?: number;
}

export interface RoundCommentParams {
  review_id: string;
  path: string;
  side?: DraftSide;
  start_line: number;
  end_line?: number;
  body: string;
  suggestion?: string;
  severity?: string;
  draft_id?: string;
  author?: string;
}

export interface RoundUncommentParams {
  review_id: string;
  draft_id: string;
}

export interface RoundSubmitParams {
  review_id: string;
  verdict: Verdict;
  summary?: string;
  author?: string;
}

export interface HelloResult {
  protocol: number;
  version: string;
  pid: number;
  connection_id: number;
  seq: number;
  instance: string;
  /** The daemon's executable and its identity when it started (docs/protocol.md §3). */
  executable?: string;
  build?: string;
}

export interface Reference {
  text: string;
  path: string;
  line?: number;
  end_line?: number;
  resolved_path?: string;
  problem?: string;
}

export interface Review {
  base_uri: string;
  content: string;
  revision: number;
  updated_at: string;
  references: Reference[];
  /** Who made this revision (docs/protocol.md, review/get); absent from daemons before it was recorded. */
  source?: ReviewSource;
}

/** Who made a revision of a review. */
export interface ReviewSource {
  kind: 'agent' | 'round' | 'person' | 'unrecorded';
  /** For people: "presented by claude-code", "round 2 of review 2026-11-21-001". */
  label: string;
  client?: string;
  review_id?: string;
  round?: number;
  /** For `person`: who, when known. */
  name?: string;
}

/** One kept revision, as review/history lists it. */
export interface ReviewRevision {
  base_uri: string;
  revision: number;
  updated_at: string;
  source: ReviewSource;
  title: string;
  bytes: number;
}

export interface Comment {
  id: string;
  body: string;
  author: string;
  created_at: string;
}

export type ThreadState = 'anchored' | 'moved' | 'modified' | 'orphaned' | 'unreadable' | 'stale';

export interface Thread {
  id: string;
  workspace: string;
  path: string;
  file: string;
  range: Range;
  quote: string;
  original_quote: string;
  state: ThreadState;
  confidence: number;
  resolved: boolean;
  comments: Comment[];
  created_at: string;
  updated_at: string;
  /** Where the thread stands with the agents; absent from daemons before it was kept. */
  standing?: ThreadStanding;
  seen_by?: string;
  seen_at?: string;
  addressed_by?: string;
  addressed_at?: string;
  /** While resolved: `human` or `agent` (named in `addressed_by`). */
  resolved_by?: 'human' | 'agent';
  resolved_at?: string;
  /** For a thread a review round opened: the reviewer's finding. */
  finding?: ThreadFinding;
  /** A person's messages in the thread to agents, with where each stands. */
  deliveries?: Delivery[];
  /** For a comment an agent placed with a walkthrough: which walkthrough, and its block. */
  walkthrough?: ThreadWalkthrough;
  /** For a thread synced with a pull request's review thread on GitHub: where it is there. */
  github?: ThreadGithub;
}

/** Where a thread is on GitHub (docs/protocol.md, Pull requests). */
export interface ThreadGithub {
  /** `OWNER/REPO#NUMBER`. */
  pull_request: string;
  /** The thread's first comment on GitHub. */
  url: string;
  /** `LEFT` (the base's lines, removed ones) or `RIGHT`. */
  side: string;
  /** GitHub's lines, 1-based (the original ones once outdated). */
  start_line: number;
  end_line: number;
  outdated: boolean;
}

/** The walkthrough a thread is a comment of. */
export interface ThreadWalkthrough {
  id: string;
  title: string;
  block_index: number;
}

/** A person's message to an agent (the thread's comment `comment_id`) and where it stands. */
export interface Delivery {
  comment_id: string;
  agent: string;
  state: 'waiting' | 'delivered' | 'read' | 'answered';
  /** How it reached the agent: `tool-answer`, `wait`, `channel`, `hook`, `terminal` or `feedback`. */
  via?: string;
  asked_at: string;
  updated_at: string;
}

export interface ThreadFinding {
  review_id: string;
  round: number;
  severity: string;
  category: string;
  suggested_fix?: string;
}

export type ThreadStanding = 'open' | 'seen' | 'addressed' | 'resolved';

/** feedback/list's and buffer/changed's answer. */
export interface FeedbackListResult {
  threads: Thread[];
  /** How many threads the whole listing holds. */
  total: number;
  /** When more threads follow: the `offset` to ask for next. */
  next_offset?: number;
}

/** The answer of feedback/create, reply, resolve and reopen. */
export interface ThreadResult {
  thread: Thread;
}

export interface Selection {
  path: string;
  text: string;
  start: Position;
  end: Position;
  language_id?: string;
}

export interface ReviewUpdated {
  review: Review;
  seq: number;
}

export type ThreadChange = 'created' | 'replied' | 'resolved' | 'reopened' | 'moved' | 'seen' | 'delivery';

export interface FeedbackChanged {
  change: ThreadChange;
  seq: number;
  thread: Thread;
}

export interface ReplayResult {
  complete: boolean;
  events: { seq: number; method: string; params: unknown }[];
  seq: number;
  instance: string;
}

/** A round waiting for a person's review (docs/protocol.md, inbox and round/requested). Lines everywhere below are 0-based. */
export interface WaitingRound {
  review_id: string;
  round: number;
  workspace: string;
  summary: string;
  focus_areas: string[];
  asked_by: string;
  requested_at: string;
  files: string[];
  drafts: number;
  /** Set when the round reviews an agent's plan (one file, the plan) rather than a change. */
  plan?: boolean;
}

/** inbox's answer: the rounds and threads waiting on a person. */
export interface InboxResult {
  rounds: WaitingRound[];
  threads: Thread[];
  next_offset?: number;
}

export type RoundFileStatus = 'modified' | 'added' | 'deleted' | 'renamed';

/** One file of a round, with its texts: `before` (the base), `after` (as the agent left it), `previous` (at the previous round). */
export interface RoundFile {
  path: string;
  old_path: string | null;
  status: RoundFileStatus;
  before: string | null;
  after: string | null;
  previous: string | null;
  changed_since_previous: boolean;
  binary: boolean;
  too_large: boolean;
}

export type DraftSide = 'old' | 'new';

/** A comment of the person's review not submitted yet, kept by the daemon. */
export interface Draft {
  id: string;
  path: string;
  side: DraftSide;
  start_line: number;
  end_line: number;
  body: string;
  suggestion: string | null;
  severity: string | null;
  /** Who wrote it; absent from daemons before it was recorded. */
  author?: string;
  at: string;
}

export type EarlierState = 'open' | 'seen' | 'addressed' | 'resolved';

/** A comment of an earlier round of the same review, which became a thread. */
export interface EarlierComment {
  round: number;
  path: string;
  /** Where the thread is now. */
  line: number;
  end_line?: number;
  body: string;
  state: EarlierState;
  thread_id: string;
  /** The whole conversation, oldest first (the agent's answers too). */
  comments?: Comment[];
}

/** round/get's answer: a round with its files, drafts and the earlier rounds' comments. */
export interface RoundDetail {
  review_id: string;
  round: number;
  workspace: string;
  summary: string;
  focus_areas: string[];
  asked_by: string;
  requested_at: string;
  scope: string;
  previous_round: number | null;
  files: RoundFile[];
  drafts: Draft[];
  earlier: EarlierComment[];
  /** How the round was answered, when it is not waiting any more. */
  answered?: AnsweredRound;
}

/** How a person answered a round (round/get with an answered `round`). */
export interface AnsweredRound {
  at: string;
  /** `NAME (in person)`. */
  reviewer: string;
  verdict: string;
  /** The review the agent received (seed 004's format). */
  review: Record<string, unknown>;
}

export interface RoundCommentResult {
  draft: Draft;
}

export interface RoundUncommentResult {
  removed: string;
}

export type RoundState = 'drafts' | 'submitted' | 'cancelled' | 'answered_elsewhere';

export interface RoundChanged {
  review_id: string;
  round: number;
  workspace: string;
  state: RoundState;
  drafts: Draft[];
  verdict?: string;
}

export type Verdict = 'approve' | 'request_changes' | 'comment';

export interface SubmitResult {
  review_id: string;
  round: number;
  verdict: string;
  status: string;
  /** The review as the agent receives it (seed 004's format). */
  review: { comments?: unknown[]; overall_assessment?: string; [field: string]: unknown };
  markdown: string;
  threads: string[];
  /** Left out when there are none. */
  warnings?: string[];
}

/** One agent at work: an MCP host's parley-mcp (docs/protocol.md, agents/list). */
export interface AgentInfo {
  /** The short name a person types: `claude-1`. */
  name: string;
  host: string;
  host_version: string;
  host_pid?: number;
  shim_pid?: number;
  /** The host's ancestors, nearest first: a terminal whose shell is the host or one of these runs the agent. */
  host_ancestors?: number[];
  /** The window whose terminal runs the agent (PARLEY_EDITOR_ID in its environment). */
  editor_id?: string;
  workspace?: string;
  since: string;
  last_call?: string;
  last_call_at?: string;
  /** The Parley call it is waiting in now (`await_review`), if any. */
  waiting_in?: string;
  channel: boolean;
  messages_waiting: number;
}

export interface AgentsListParams {
  workspace?: string;
}

export interface AgentsListResult {
  agents: AgentInfo[];
  /** Agents no longer at work that a person's messages still wait for. */
  absent?: AbsentAgent[];
}

/** An agent no longer at work, with the threads whose messages wait for it. */
export interface AbsentAgent {
  name: string;
  /** Oldest first. */
  threads: string[];
}

/** agents/changed: every agent at work now. */
export interface AgentsChanged {
  agents: AgentInfo[];
}

export interface AgentAskParams {
  agent?: string;
  /** The absolute file. */
  path: string;
  start_line: number;
  end_line?: number;
  message: string;
  author?: string;
}

export interface AgentResendParams {
  thread_id: string;
  agent: string;
}

export interface AgentTypedParams {
  thread_id: string;
  /** Only answer the line, marking nothing: what the person confirms. */
  preview?: boolean;
}

/** agent/typed's answer: the one line to type into the agent's terminal. */
export interface AgentTypedResult {
  agent: string;
  text: string;
  thread: Thread;
}

/** agent/ask's and agent/resend's answer. */
export interface AgentAskResult {
  agent: string;
  delivery: Delivery;
  thread: Thread;
}

/** Lines a walkthrough comment is on, or could be on (workspace-relative `/` path; 0-based inclusive lines). */
export interface WalkthroughPlace {
  path: string;
  start_line: number;
  end_line: number;
  /** The thread the comment became there (placed comments only). */
  thread_id?: string;
}

/** One click of an action, and where its message to the agent stands. */
export interface ActionClick {
  id: string;
  author: string;
  clicked_at: string;
  /** `waiting`, `delivered` or `read`. */
  state: string;
  /** Once delivered: how (`tool-answer`, `wait`, `channel`, `hook`). */
  via?: string;
  updated_at: string;
  /** The agent the message is for: the presenting agent, or the one it was sent on to (walkthrough/resend). */
  agent?: string;
}

/** A fenced block of a walkthrough, by its kind (docs/protocol.md, Walkthroughs). */
export type WalkthroughBlock =
  | { kind: 'mermaid'; index: number; source: string }
  | { kind: 'comment'; index: number; location: string; icon?: string; body: string; places: WalkthroughPlace[]; problem?: string; candidates?: WalkthroughPlace[] }
  | { kind: 'gitdiff'; index: number; range: string; exclude_staged: boolean; exclude_unstaged: boolean; /** What the range holds once its flags are applied: `all`, `staged`, `unstaged`, a commit or a range (absent when not applicable). */ scope?: string; problem?: string }
  | { kind: 'action'; index: number; button: string; message: string; clicks: ActionClick[]; problem?: string };

/** The document in order: markdown as it is, and where each block stands. */
export type WalkthroughPart = { kind: 'markdown'; text: string } | { kind: 'block'; index: number };

/** A walkthrough an agent presented (present_walkthrough). */
export interface Walkthrough {
  id: string;
  workspace: string;
  title: string;
  base_uri: string;
  content: string;
  revision: number;
  updated_at: string;
  /** The presenting agent's short name. */
  presented_by: string;
  /** The commit checked out when it was presented, in a git repository. */
  head?: string;
  parts: WalkthroughPart[];
  blocks: WalkthroughBlock[];
  references: Reference[];
}

export interface WalkthroughGetParams {
  id?: string;
  workspace?: string;
  revision?: number;
}

export interface WalkthroughGetResult {
  walkthrough: Walkthrough | null;
}

export interface WalkthroughActParams {
  id: string;
  block_index: number;
  author?: string;
}

export interface WalkthroughActResult {
  walkthrough: Walkthrough;
  click: ActionClick;
}

export interface WalkthroughUpdated {
  seq: number;
  walkthrough: Walkthrough;
}

/** symbols/find (daemon → editor): where a symbol is defined or used. */
export interface SymbolsFindParams {
  workspace: string;
  name: string;
  kind: 'definition' | 'references';
}

export interface SymbolPlace {
  path: string;
  range: Range;
  name: string;
  container?: string;
}

export interface SymbolsFindResult {
  places: SymbolPlace[];
}

/** diagnostics/get (daemon → editor): the problems the window reports. */
export interface DiagnosticsGetParams {
  workspace: string;
  path?: string;
}

export interface WireDiagnostic {
  severity: 'error' | 'warning' | 'information' | 'hint';
  source?: string;
  code?: string;
  message: string;
  range: Range;
}

export interface FileDiagnostics {
  path: string;
  version: number;
  dirty: boolean;
  sha256?: string;
  stale?: boolean;
  diagnostics: WireDiagnostic[];
}

export interface DiagnosticsGetResult {
  files: FileDiagnostics[];
}

// Pull requests (docs/protocol.md, Pull requests): pr/status, pr/pull and pr/push.

export interface PrStatusParams {
  workspace: string;
}

export interface PrPullParams {
  workspace: string;
  /** The window's GITHUB_TOKEN, for when neither gh nor the daemon's environment gives one; held in memory only. */
  token?: string;
}

export type PrEvent = 'comment' | 'approve' | 'request-changes';

export interface PrPushParams {
  workspace: string;
  dry_run?: boolean;
  event?: PrEvent;
  token?: string;
}

export interface PrPullSummary {
  at: string;
  new_threads: number;
  replies: number;
  resolved: number;
  reopened: number;
  outdated: number;
  gone: number;
  tied?: number;
}

export interface PrComment {
  author: string;
  body: string;
  created_at: string;
  url: string;
}

export interface PrUnplaced {
  path: string;
  line?: number;
  url: string;
  reason: string;
}

export interface PrLeftOpen {
  path: string;
  url: string;
  agent: string;
}

export interface PrLastPush {
  at: string;
  threads: number;
  replies: number;
  resolutions: number;
  not_sent: number;
  review?: string;
  event?: string;
  round?: string;
}

export interface PrWaiting {
  threads: number;
  replies: number;
  resolutions: number;
}

/** A workspace's pull request, as last synced. */
export interface LinkedPr {
  /** `OWNER/REPO#NUMBER`. */
  pull_request: string;
  url: string;
  api: string;
  found_by: string;
  linked_at: string;
  state?: string;
  head_oid?: string;
  last_pull?: PrPullSummary;
  last_error?: string;
  conversation?: PrComment[];
  unplaced?: PrUnplaced[];
  placed_by_line?: PrUnplaced[];
  conflicts?: string[];
  left_open?: PrLeftOpen[];
  last_push?: PrLastPush;
  /** pr/status only: what waits to be pushed. */
  waiting?: PrWaiting;
}

export interface PrPushedThread {
  path: string;
  side: string;
  start_line: number;
  line: number;
  body: string;
}

export interface PrPushedReply {
  path: string;
  body: string;
}

export interface PrPushedResolution {
  path: string;
  resolved: boolean;
}

/** What a push sent (or, dry, would send). */
export interface PrPushSummary {
  at: string;
  dry_run: boolean;
  threads?: PrPushedThread[];
  replies?: PrPushedReply[];
  resolutions?: PrPushedResolution[];
  not_sent?: PrUnplaced[];
  left_open?: PrLeftOpen[];
  review?: string;
  event?: string;
  review_url?: string;
  adopted?: number;
  notes?: string[];
  round?: string;
  body?: string;
  already_on_github?: number;
}

export interface PrStatusResult {
  workspace: string;
  linked?: LinkedPr;
  pulled?: PrPullSummary;
  pushed?: PrPushSummary;
}
