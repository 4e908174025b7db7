//! One realistic value of every type the hub carries: the params and result
//! of each method, the params of each notification, and `hello`'s and
//! `selection/get`'s. Struct literals name every field, so a field added to
//! a wire type fails to build here until its example says what it holds.

use std::path::PathBuf;

use parley_protocol::hello::{ClientInfo, Hello, HelloReply, PositionEncoding, Role};
use parley_protocol::jsonrpc::Id;
use parley_protocol::methods::*;
use serde_json::json;

/// A wire type with an example: its snapshot is `types/<NAME>.json`.
pub trait Example: Sized {
    /// The snapshot's file name, without `.json`: the type's name.
    const NAME: &'static str;
    fn example() -> Self;
}

macro_rules! example {
    ($type:ty, $name:expr, $value:expr) => {
        impl Example for $type {
            const NAME: &'static str = $name;
            fn example() -> Self {
                $value
            }
        }
    };
    ($type:ident, $value:expr) => {
        example!($type, stringify!($type), $value);
    };
}

const SHOP: &str = "/home/ana/src/shop";
const INSTANCE: &str = "6f4e53be-707b-4343-be3c-5f595f7cbb87";

fn shop() -> PathBuf {
    PathBuf::from(SHOP)
}

fn in_shop(path: &str) -> PathBuf {
    shop().join(path)
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

fn position(line: u32, character: u32) -> Position {
    Position { line, character }
}

fn comment(id: &str, body: &str, author: &str, at: &str) -> Comment {
    Comment { id: id.into(), body: body.into(), author: author.into(), created_at: at.into() }
}

/// A thread a person opened and an agent answered and resolved, with every
/// optional field set.
fn thread() -> Thread {
    Thread {
        id: "573dda29-f9f8-42f0-bf44-eb5690b0f283".into(),
        workspace: shop(),
        path: "src/auth.rs".into(),
        file: in_shop("src/auth.rs"),
        range: Range { start: position(1, 15), end: position(1, 22) },
        quote: "\"naïve\"".into(),
        original_quote: "\"naive\"".into(),
        state: "modified".into(),
        confidence: 0.88,
        resolved: true,
        comments: vec![
            comment("738da53d-d408-44fd-b347-d41ef1620926", "Use a real token here", "ana", "2026-11-21T06:28:26.631Z"),
            comment(
                "86b36d4f-42c0-4856-ac4a-a697e0e442c0",
                "Done: it reads the token from the session",
                "claude-code",
                "2026-11-21T06:31:02.118Z",
            ),
        ],
        created_at: "2026-11-21T06:28:26.631Z".into(),
        updated_at: "2026-11-21T06:31:02.118Z".into(),
        finding: Some(ThreadFinding {
            review_id: "2026-11-21-001".into(),
            round: 1,
            severity: "major".into(),
            category: "security".into(),
            suggested_fix: Some("let token = session.token();".into()),
        }),
        standing: "resolved".into(),
        seen_by: Some("claude-code".into()),
        seen_at: Some("2026-11-21T06:30:11.402Z".into()),
        addressed_by: Some("claude-code".into()),
        addressed_at: Some("2026-11-21T06:31:02.118Z".into()),
        resolved_by: Some("agent".into()),
        resolved_at: Some("2026-11-21T06:31:02.118Z".into()),
        deliveries: vec![delivery()],
        walkthrough: Some(ThreadWalkthrough {
            id: "c0a3e1f2-5b7d-4e8a-9f10-2b3c4d5e6f70".into(),
            title: "Login refactor".into(),
            block_index: 1,
        }),
        github: Some(ThreadGithub {
            pull_request: "octo/shop#42".into(),
            url: "https://github.com/octo/shop/pull/42#discussion_r1812345678".into(),
            side: "RIGHT".into(),
            start_line: 2,
            end_line: 2,
            outdated: false,
        }),
    }
}

/// A question a person asked an agent, answered.
fn delivery() -> Delivery {
    Delivery {
        comment_id: "738da53d-d408-44fd-b347-d41ef1620926".into(),
        agent: "claude-1".into(),
        state: "answered".into(),
        via: Some("tool-answer".into()),
        asked_at: "2026-11-21T06:28:26.631Z".into(),
        updated_at: "2026-11-21T06:31:02.118Z".into(),
    }
}

/// An agent at work, waiting for a person's review.
fn agent_info() -> AgentInfo {
    AgentInfo {
        name: "claude-1".into(),
        host: "claude-code".into(),
        host_version: "2.1.320".into(),
        host_pid: Some(48213),
        shim_pid: Some(48240),
        host_ancestors: vec![3120, 3101],
        editor_id: Some("vscode-9f2c41".into()),
        workspace: Some(shop()),
        since: "2026-11-21T06:02:11.870Z".into(),
        last_call: Some("await_review".into()),
        last_call_at: Some("2026-11-21T06:27:40.015Z".into()),
        waiting_in: Some("await_review".into()),
        channel: false,
        messages_waiting: 1,
    }
}

fn review() -> Review {
    Review {
        base_uri: shop(),
        content: "# Login refactor\n\nEntry point: [`src/auth.rs:5`][]; see [`src/gone.rs:3`][].\n".into(),
        revision: 4,
        updated_at: "2026-11-21T05:57:22.457Z".into(),
        references: vec![
            Reference {
                text: "[`src/auth.rs:5`][]".into(),
                path: "src/auth.rs".into(),
                line: Some(5),
                end_line: Some(7),
                resolved_path: Some(in_shop("src/auth.rs")),
                problem: None,
            },
            Reference {
                text: "[`src/gone.rs:3`][]".into(),
                path: "src/gone.rs".into(),
                line: Some(3),
                end_line: None,
                resolved_path: None,
                problem: Some("file src/gone.rs does not exist under /home/ana/src/shop".into()),
            },
        ],
        source: ReviewSource {
            kind: "round".into(),
            label: "round 2 of review 2026-11-21-001".into(),
            client: None,
            review_id: Some("2026-11-21-001".into()),
            round: Some(2),
            name: None,
        },
    }
}

/// A review in seed 004's format, as a reviewer prints it.
fn structured_review() -> serde_json::Value {
    json!({
        "comments": [{"category": "bug", "comment": "Off by one", "file": "src/lib.rs", "line": 1, "severity": "major", "type": "specific"}],
        "design_compliance": {"follows_architecture": true, "major_violations": []},
        "missing_requirements": [],
        "overall_assessment": "lgtm",
        "summary": {"critical_issues": 0, "design_violations": 0, "major_issues": 1, "minor_issues": 0, "suggestions": 0}
    })
}

const MARKDOWN: &str =
    "# Review 2026-11-21-001, round 1\n\n## Verdict: ❌ needs changes\n\n- [`src/lib.rs:1`][] _bug_: Off by one\n";

/// A session marked complete after one round.
fn session() -> Session {
    Session {
        id: "2026-11-21-001".into(),
        workspace: shop(),
        created_at: "2026-11-21T07:03:59.455Z".into(),
        updated_at: "2026-11-21T07:04:00.295Z".into(),
        status: "approved".into(),
        request: SessionRequest {
            summary: "Compute the answer instead of hard-coding it".into(),
            relevant_docs: strings(&["docs/design.md"]),
            focus_areas: strings(&["naming"]),
            scope: "all".into(),
        },
        rounds: vec![Round {
            round: 1,
            at: "2026-11-21T07:03:59.569Z".into(),
            summary: "Compute the answer instead of hard-coding it".into(),
            focus_areas: strings(&["naming"]),
            scope: "all".into(),
            changed_files: strings(&["src/lib.rs"]),
            review: structured_review(),
            verdict: "needs_changes".into(),
            reviewer: "python3 tests/fixtures/fake_reviewer.py needs_changes".into(),
            elapsed_ms: 109,
        }],
        completion: Some(Completion {
            final_status: "approved".into(),
            notes: Some("Ready to merge".into()),
            at: "2026-11-21T07:04:00.295Z".into(),
        }),
        pending: None,
        awaiting: None,
    }
}

/// A session whose second round failed.
fn failed_session() -> Session {
    Session {
        id: "2026-11-21-002".into(),
        status: "needs_changes".into(),
        completion: None,
        pending: Some(Pending {
            state: "failed".into(),
            since: "2026-11-21T07:20:41.101Z".into(),
            error: Some("the reviewer exited with status 2".into()),
        }),
        ..session()
    }
}

/// A session whose second round waits on a person.
fn waiting_session() -> Session {
    Session {
        id: "2026-11-24-002".into(),
        status: "needs_changes".into(),
        completion: None,
        awaiting: Some(waiting_round()),
        ..session()
    }
}

fn waiting_round() -> WaitingRound {
    WaitingRound {
        review_id: "2026-11-24-002".into(),
        round: 2,
        workspace: shop(),
        summary: "Cart totals now include tax".into(),
        focus_areas: strings(&["rounding"]),
        asked_by: "claude-code".into(),
        requested_at: "2026-11-24T09:12:03.118Z".into(),
        files: strings(&["src/cart.rs"]),
        drafts: 1,
        plan: false,
    }
}

fn draft() -> Draft {
    Draft {
        id: "d1".into(),
        path: "src/cart.rs".into(),
        side: "old".into(),
        start_line: 11,
        end_line: 12,
        body: "Why drop the rounding?".into(),
        suggestion: Some("total.round()".into()),
        severity: Some("major".into()),
        author: "ana".into(),
        at: "2026-11-24T09:14:30.020Z".into(),
    }
}

fn selection() -> Selection {
    Selection {
        path: in_shop("src/auth.rs"),
        text: "let café = \"naïve\";".into(),
        start: position(5, 4),
        end: position(5, 25),
        language_id: Some("rust".into()),
    }
}

fn feedback_changed() -> FeedbackChanged {
    FeedbackChanged { seq: 7, change: "resolved".into(), thread: thread() }
}

example!(NoParams, NoParams {});

example!(
    Hello,
    Hello {
        protocol: 1,
        role: Role::Editor,
        client: ClientInfo { name: "code".into(), version: "1.138.0".into() },
        pid: Some(4242),
        cwd: Some(shop()),
        workspaces: vec![shop()],
        editor_id: Some("code-1".into()),
        position_encoding: PositionEncoding::Utf16,
        parent_pid: None,
        agent_name: None,
        env: [("PATH".to_string(), "/usr/local/bin:/usr/bin".to_string())].into(),
    }
);
example!(
    HelloReply,
    HelloReply {
        protocol: 1,
        version: "0.1.0".into(),
        pid: 14674,
        connection_id: 2,
        seq: 0,
        instance: INSTANCE.into(),
        executable: Some("/home/ana/.cargo/bin/parley".into()),
        build: Some("18874368-1795247101829043418".into()),
    }
);
example!(Option<Selection>, "SelectionGetResult", Some(selection()));

example!(FocusParams, FocusParams { focused: true });
example!(SelectionChangedParams, SelectionChangedParams { selection: Some(selection()) });

example!(ReviewGetParams, ReviewGetParams { workspace: Some(shop()), revision: Some(3) });
example!(ReviewGetResult, ReviewGetResult { reviews: vec![review()] });
example!(ReviewHistoryParams, ReviewHistoryParams { workspace: Some(shop()) });
example!(
    ReviewHistoryResult,
    ReviewHistoryResult {
        revisions: vec![
            ReviewRevision {
                base_uri: shop(),
                revision: 2,
                updated_at: "2026-11-21T06:02:10.118Z".into(),
                source: ReviewSource {
                    kind: "person".into(),
                    label: "written by ana".into(),
                    client: None,
                    review_id: None,
                    round: None,
                    name: Some("ana".into()),
                },
                title: "Notes on the login refactor".into(),
                bytes: 312,
            },
            ReviewRevision {
                base_uri: shop(),
                revision: 1,
                updated_at: "2026-11-21T05:57:22.457Z".into(),
                source: ReviewSource {
                    kind: "agent".into(),
                    label: "presented by claude-code".into(),
                    client: Some("claude-code".into()),
                    review_id: None,
                    round: None,
                    name: None,
                },
                title: "Login refactor".into(),
                bytes: 148,
            },
        ],
    }
);
example!(ReviewUpdated, ReviewUpdated { seq: 12, review: review() });

example!(
    FeedbackListParams,
    FeedbackListParams {
        workspace: Some(shop()),
        path: Some("src/auth.rs".into()),
        include_resolved: true,
        offset: 500,
        limit: Some(500),
    }
);
example!(FeedbackListResult, FeedbackListResult { threads: vec![thread()], total: 1200, next_offset: Some(1000) });
example!(
    FeedbackCreateParams,
    FeedbackCreateParams {
        path: in_shop("src/auth.rs"),
        range: Range { start: position(1, 16), end: position(1, 24) },
        text: Some("\"naïve\"".into()),
        body: "Use a real token here".into(),
        author: Some("ana".into()),
    }
);
example!(
    FeedbackReplyParams,
    FeedbackReplyParams { thread_id: "573dda29".into(), body: "Which token?".into(), author: Some("ana".into()) }
);
example!(ThreadIdParams, ThreadIdParams { thread_id: "573dda29-f9f8-42f0-bf44-eb5690b0f283".into() });
example!(ThreadResult, ThreadResult { thread: thread() });
example!(
    BufferChangedParams,
    BufferChangedParams {
        path: in_shop("src/auth.rs"),
        text: "use std::fmt;\n// a line not saved yet\npub fn login(user: &str) -> bool {\n".into(),
    }
);
example!(FeedbackChanged, feedback_changed());

example!(
    ReviewRequestParams,
    ReviewRequestParams {
        workspace: shop(),
        summary: "Compute the answer instead of hard-coding it".into(),
        relevant_docs: strings(&["docs/design.md"]),
        focus_areas: strings(&["naming"]),
        previous_review_id: Some("2026-11-21-001".into()),
        scope: Some("main..HEAD".into()),
        reviewer: Some("command".into()),
    }
);
example!(
    ReviewRequestResult,
    ReviewRequestResult {
        review_id: "2026-11-21-001".into(),
        round: 1,
        status: "needs_changes".into(),
        verdict: "needs_changes".into(),
        review: structured_review(),
        markdown: MARKDOWN.into(),
        audit_path: Some(in_shop(".reviews/sessions/2026-11-21-001/round-1")),
        shown_in_editors: 1,
        warnings: strings(&["id_ed25519:1 (removed line): private-key was redacted"]),
    }
);
example!(ReviewAwaitParams, ReviewAwaitParams { review_id: "001".into() });
example!(ReviewCancelParams, ReviewCancelParams { review_id: "2026-11-21-001".into() });
example!(ReviewCancelResult, ReviewCancelResult { review_id: "2026-11-21-001".into(), round: 2 });
example!(
    ReviewProgress,
    ReviewProgress {
        request: Id::Number(2),
        progress: 4.0,
        total: 6.0,
        message: "asking the reviewer (python3 tests/fixtures/fake_reviewer.py needs_changes)".into(),
    }
);

example!(SessionsListParams, SessionsListParams { workspace: Some(shop()), limit: Some(5) });
example!(SessionsGetParams, SessionsGetParams { review_id: "2026-11-21-001".into() });
example!(
    SessionsCompleteParams,
    SessionsCompleteParams {
        review_id: "2026-11-21-001".into(),
        final_status: "merged".into(),
        notes: Some("Shipped in 1.4".into()),
    }
);
example!(SessionsResult, SessionsResult { sessions: vec![waiting_session(), failed_session(), session()] });

example!(InboxParams, InboxParams { workspace: Some(shop()), offset: 40 });
example!(
    InboxResult,
    InboxResult {
        rounds: vec![waiting_round()],
        // Open, the agent's word last: it waits on the person.
        threads: vec![Thread {
            resolved: false,
            standing: "addressed".into(),
            resolved_by: None,
            resolved_at: None,
            ..thread()
        }],
        next_offset: Some(41),
    }
);
example!(RoundGetParams, RoundGetParams { review_id: "002".into(), round: Some(1) });
example!(
    RoundForReview,
    RoundForReview {
        review_id: "2026-11-24-002".into(),
        round: 2,
        workspace: shop(),
        summary: "Cart totals now include tax".into(),
        focus_areas: strings(&["rounding"]),
        // Not kept once a round is answered.
        asked_by: String::new(),
        requested_at: String::new(),
        scope: "all".into(),
        previous_round: Some(1),
        files: vec![RoundFile {
            path: "src/cart.rs".into(),
            old_path: Some("src/basket.rs".into()),
            status: "renamed".into(),
            before: Some("fn total() { round() }\n".into()),
            after: Some("fn total() {}\n".into()),
            previous: Some("fn total() { round(); }\n".into()),
            changed_since_previous: true,
            binary: false,
            too_large: false,
        }],
        // Sent with the verdict.
        drafts: Vec::new(),
        earlier: vec![EarlierComment {
            round: 1,
            path: "src/cart.rs".into(),
            line: 11,
            end_line: 12,
            body: "Why drop the rounding?".into(),
            state: "addressed".into(),
            thread_id: "1c7332e6-7840-4dea-b7fa-b17dfab6881a".into(),
            comments: vec![comment(
                "dbe18c04-6d9c-4070-b271-a39c090fe23b",
                "Why drop the rounding?",
                "ana",
                "2026-11-24T09:20:41.552Z",
            )],
        }],
        answered: Some(AnsweredRound {
            at: "2026-11-24T09:20:41.552Z".into(),
            reviewer: "ana (in person)".into(),
            verdict: "needs_changes".into(),
            review: structured_review(),
        }),
    }
);
example!(
    RoundCommentParams,
    RoundCommentParams {
        review_id: "2026-11-24-002".into(),
        path: "src/cart.rs".into(),
        side: Some("old".into()),
        start_line: 11,
        end_line: Some(12),
        body: "Why drop the rounding?".into(),
        suggestion: Some("total.round()".into()),
        severity: Some("major".into()),
        draft_id: Some("d1".into()),
        author: Some("ana".into()),
    }
);
example!(RoundCommentResult, RoundCommentResult { draft: draft() });
example!(RoundUncommentParams, RoundUncommentParams { review_id: "2026-11-24-002".into(), draft_id: "d1".into() });
example!(RoundUncommentResult, RoundUncommentResult { removed: "d1".into() });
example!(
    RoundSubmitParams,
    RoundSubmitParams {
        review_id: "2026-11-24-002".into(),
        verdict: "request_changes".into(),
        summary: Some("Keep the rounding".into()),
        author: Some("ana".into()),
    }
);
example!(
    RoundSubmitResult,
    RoundSubmitResult {
        review_id: "2026-11-24-002".into(),
        round: 2,
        verdict: "needs_changes".into(),
        status: "needs_changes".into(),
        review: structured_review(),
        markdown: MARKDOWN.into(),
        threads: strings(&["1c7332e6-7840-4dea-b7fa-b17dfab6881a"]),
        warnings: strings(&["src/old.rs is deleted by the change: its comment has no place to go"]),
    }
);
example!(WaitingRound, waiting_round());
example!(
    RoundChanged,
    RoundChanged {
        review_id: "2026-11-24-002".into(),
        round: 2,
        workspace: shop(),
        state: "submitted".into(),
        drafts: Vec::new(),
        verdict: Some("needs_changes".into()),
    }
);

example!(SubscribeParams, SubscribeParams { workspaces: vec![shop()] });
example!(SubscribeResult, SubscribeResult { subscribed: true });
example!(EventsReplayParams, EventsReplayParams { after: 5, instance: Some(INSTANCE.into()) });
example!(
    EventsReplayResult,
    EventsReplayResult {
        events: vec![Event {
            seq: 7,
            method: FEEDBACK_CHANGED.into(),
            params: serde_json::to_value(feedback_changed()).expect("a thread is JSON"),
        }],
        complete: true,
        seq: 7,
        instance: INSTANCE.into(),
    }
);
example!(
    Status,
    Status {
        pid: 14674,
        version: "0.1.0".into(),
        protocol: 1,
        socket: "/run/user/1000/parley/parley-v1.sock".into(),
        data_dir: "/home/ana/.local/share/parley".into(),
        started_at: "2026-11-21T06:28:15Z".into(),
        uptime_secs: 24,
        connections: ConnectionCounts { mcp: 1, editor: 1, cli: 1 },
        editors: vec![EditorSummary {
            connection_id: 2,
            name: "nvim".into(),
            editor_id: Some("nvim-4242".into()),
            workspaces: vec![shop()],
        }],
        workspaces: vec![shop()],
        reviews: 1,
        threads: 2,
        store_notice: Some(
            "Feedback store corrupted, attempting recovery from backup: restored from \
             /home/ana/.local/share/parley/backups/parley-backup-20261121T062652.337679Z.json"
                .into()
        ),
        log: Some(LogDestination::File { path: "/run/user/1000/parley/parley-v1.log".into() }),
    }
);
example!(
    ExportDocument,
    ExportDocument {
        format: "parley-export".into(),
        version: 1,
        exported_at: "2026-11-21T06:28:45.455Z".into(),
        reviews: vec![json!({"v": "1", "base_uri": SHOP, "content": "# Login refactor\n", "revision": 4})],
        threads: vec![json!({"v": "1", "id": "573dda29-f9f8-42f0-bf44-eb5690b0f283", "path": "src/auth.rs"})],
        sessions: vec![json!({"v": "1", "id": "2026-11-21-001", "workspace": SHOP})],
        walkthroughs: vec![json!({"v": "1", "id": "c0a3e1f2-5b7d-4e8a-9f10-2b3c4d5e6f70", "workspace": SHOP})],
    }
);
example!(ImportResult, ImportResult { reviews: 1, threads: 1, walkthroughs: 1 });
example!(StoreFileParams, StoreFileParams { path: "/home/ana/parley-export.json".into() });
example!(
    ExportFileResult,
    ExportFileResult {
        path: "/home/ana/parley-export.json".into(),
        bytes: 48213,
        reviews: 2,
        threads: 5,
        sessions: 1,
        walkthroughs: 1
    }
);
example!(ShutdownParams, ShutdownParams { reason: Some("handover".into()) });
example!(ShutdownResult, ShutdownResult { stopping: true });
example!(DaemonStopping, DaemonStopping { reason: "requested".into() });

fn plan_comment() -> PlanComment {
    PlanComment {
        path: "plan.md".into(),
        start_line: 3,
        end_line: 3,
        quote: "2. Drop the rounding in `total`".into(),
        body: "Keep the rounding: invoices depend on it".into(),
        suggestion: Some("2. Round once, in `total`".into()),
    }
}

example!(
    PlanOpenParams,
    PlanOpenParams {
        host: "claude".into(),
        host_session: "4f0c8a52-3a8e-4d6b-9d7e-2b1f0c9a7e11".into(),
        cwd: in_shop("src"),
        plan: "# Tax in cart totals\n\n1. Add `tax` to `Cart`\n2. Drop the rounding in `total`\n".into(),
        name: Some("tax-in-cart-totals.md".into()),
        new_only: true,
    }
);
example!(
    PlanOpened,
    PlanOpened {
        review_id: "2026-11-26-001".into(),
        round: 2,
        workspace: shop(),
        path: "tax-in-cart-totals.md".into(),
        status: "modified".into(),
        already_answered: false,
    }
);
example!(PlanRoundParams, PlanRoundParams { review_id: "2026-11-26-001".into(), round: 2 });
example!(
    PlanVerdict,
    PlanVerdict {
        review_id: "2026-11-26-001".into(),
        round: 2,
        outcome: "changes_requested".into(),
        summary: Some("Close, but keep the rounding".into()),
        comments: vec![plan_comment()],
        reason: None,
    }
);
example!(
    PlanAnswered,
    PlanAnswered { review_id: "2026-11-26-001".into(), round: 2, state: "answered_elsewhere".into() }
);
example!(
    PlanNotesParams,
    PlanNotesParams {
        host: "claude".into(),
        host_session: "4f0c8a52-3a8e-4d6b-9d7e-2b1f0c9a7e11".into(),
        cwd: in_shop("src"),
    }
);
example!(
    PlanNotesResult,
    PlanNotesResult { review_id: Some("2026-11-26-001".into()), round: Some(2), comments: vec![plan_comment()] }
);
example!(AgentsListParams, AgentsListParams { workspace: Some(shop()) });
example!(
    AgentsListResult,
    AgentsListResult {
        agents: vec![agent_info()],
        absent: vec![AbsentAgent {
            name: "codex-2".into(),
            threads: vec!["9b1f0c4e-2d7a-4c55-8e61-0f3a5b7d9c21".into()],
        }],
    }
);
example!(AgentsChanged, AgentsChanged { agents: vec![agent_info()] });
example!(
    AgentAskParams,
    AgentAskParams {
        agent: Some("claude-1".into()),
        path: in_shop("src/auth.rs"),
        start_line: 1,
        end_line: Some(3),
        message: "Why is the token read twice here?".into(),
        author: Some("ana".into()),
    }
);
example!(AgentAskResult, AgentAskResult { thread: thread(), agent: "claude-1".into(), delivery: delivery() });
example!(AgentResendParams, AgentResendParams { thread_id: "573dda29".into(), agent: "codex-1".into() });
example!(AgentTypedParams, AgentTypedParams { thread_id: "573dda29".into(), preview: true });
example!(
    AgentTypedResult,
    AgentTypedResult {
        thread: thread(),
        agent: "claude-1".into(),
        text: "ana asks you about src/auth.rs:2-4 (thread 573dda29-f9f8-42f0-bf44-eb5690b0f283): Why is the token read twice here? Answer with reply_feedback (threadId 573dda29-f9f8-42f0-bf44-eb5690b0f283); get_feedback shows the thread.".into(),
    }
);
example!(
    MessagesTakeParams,
    MessagesTakeParams { host_pid: Some(48290), ancestors: vec![48213, 3120], cwd: Some(in_shop("src")) }
);
example!(
    MessagesTakeResult,
    MessagesTakeResult {
        agent: Some("claude-1".into()),
        messages: vec![
            AgentMessage {
                thread_id: Some("573dda29-f9f8-42f0-bf44-eb5690b0f283".into()),
                comment_id: Some("738da53d-d408-44fd-b347-d41ef1620926".into()),
                walkthrough_id: None,
                click_id: None,
                text: "ana asks about src/auth.rs:2-4 (thread 573dda29): Why is the token read twice here? Answer with reply_feedback on thread 573dda29-f9f8-42f0-bf44-eb5690b0f283.".into(),
            },
            AgentMessage {
                thread_id: None,
                comment_id: None,
                walkthrough_id: Some(WALKTHROUGH_ID.into()),
                click_id: Some(CLICK_ID.into()),
                text: "ana clicked \"Run the tests\" in your walkthrough \"Login refactor\" (walkthrough c0a3e1f2-5b7d-4e8a-9f10-2b3c4d5e6f70, block 3): Please run the whole test suite and tell me what fails.".into(),
            },
        ],
    }
);

const WALKTHROUGH_ID: &str = "c0a3e1f2-5b7d-4e8a-9f10-2b3c4d5e6f70";
const CLICK_ID: &str = "4d1c9a7e-0b2f-4e33-8c5d-6a7b8c9d0e1f";

fn click() -> ActionClick {
    ActionClick {
        id: CLICK_ID.into(),
        author: "ana".into(),
        clicked_at: "2026-11-21T07:02:40.118Z".into(),
        state: "delivered".into(),
        via: Some("tool-answer".into()),
        updated_at: "2026-11-21T07:03:05.911Z".into(),
        agent: Some("claude-1".into()),
    }
}

/// A walkthrough with a block of every kind, one comment not placed.
fn walkthrough() -> Walkthrough {
    let content = "# Login refactor\n\nThe token is read once, in [`src/auth.rs:2`][].\n\n```mermaid\nflowchart TD\n  login --> session\n```\n\n```comment\nlocation: findDefinition(`read_token`)\nicon: lightbulb\n\nThe one place the token is read.\n```\n\n```comment\nlocation: search(\"src\", \"token\")\n\nEvery use.\n```\n\n```gitdiff\nrange: HEAD~1..HEAD\n```\n\n```action\nbutton: Run the tests\n\nPlease run the whole test suite and tell me what fails.\n```\n";
    Walkthrough {
        id: WALKTHROUGH_ID.into(),
        workspace: shop(),
        title: "Login refactor".into(),
        base_uri: shop(),
        content: content.into(),
        revision: 2,
        updated_at: "2026-11-21T07:01:12.500Z".into(),
        presented_by: "claude-1".into(),
        head: Some("9f2c41d7a0b3e5c8d1f4a6b2c9e0d3f5a7b1c4e8".into()),
        parts: vec![
            WalkthroughPart::Markdown {
                text: "# Login refactor\n\nThe token is read once, in [`src/auth.rs:2`][].\n\n".into(),
            },
            WalkthroughPart::Block { index: 0 },
            WalkthroughPart::Block { index: 1 },
            WalkthroughPart::Block { index: 2 },
            WalkthroughPart::Block { index: 3 },
            WalkthroughPart::Block { index: 4 },
        ],
        blocks: vec![
            WalkthroughBlock::Mermaid { index: 0, source: "flowchart TD\n  login --> session\n".into() },
            WalkthroughBlock::Comment {
                index: 1,
                location: "findDefinition(`read_token`)".into(),
                icon: Some("lightbulb".into()),
                body: "The one place the token is read.".into(),
                places: vec![WalkthroughPlace {
                    path: "src/auth.rs".into(),
                    start_line: 9,
                    end_line: 9,
                    thread_id: Some("573dda29-f9f8-42f0-bf44-eb5690b0f283".into()),
                }],
                problem: None,
                candidates: Vec::new(),
            },
            WalkthroughBlock::Comment {
                index: 2,
                location: "search(\"src\", \"token\")".into(),
                icon: None,
                body: "Every use.".into(),
                places: Vec::new(),
                problem: Some("the location matches 2 places: name one with path:line".into()),
                candidates: vec![
                    WalkthroughPlace { path: "src/auth.rs".into(), start_line: 1, end_line: 1, thread_id: None },
                    WalkthroughPlace { path: "src/session.rs".into(), start_line: 14, end_line: 14, thread_id: None },
                ],
            },
            WalkthroughBlock::Gitdiff {
                index: 3,
                range: "HEAD~1..HEAD".into(),
                exclude_staged: false,
                exclude_unstaged: false,
                scope: Some("HEAD~1..HEAD".into()),
                problem: None,
            },
            WalkthroughBlock::Action {
                index: 4,
                button: "Run the tests".into(),
                message: "Please run the whole test suite and tell me what fails.".into(),
                clicks: vec![click()],
                problem: None,
            },
        ],
        references: vec![Reference {
            text: "[`src/auth.rs:2`][]".into(),
            path: "src/auth.rs".into(),
            line: Some(2),
            end_line: None,
            resolved_path: Some(in_shop("src/auth.rs")),
            problem: None,
        }],
    }
}

example!(WalkthroughListParams, WalkthroughListParams { workspace: Some(shop()) });
example!(
    WalkthroughListResult,
    WalkthroughListResult {
        walkthroughs: vec![WalkthroughSummary {
            id: WALKTHROUGH_ID.into(),
            workspace: shop(),
            title: "Login refactor".into(),
            revision: 2,
            updated_at: "2026-11-21T07:01:12.500Z".into(),
            presented_by: "claude-1".into(),
            placed: 1,
            unplaced: 1,
            clicks_waiting: 0,
        }],
    }
);
example!(
    WalkthroughGetParams,
    WalkthroughGetParams { id: Some("c0a3".into()), workspace: Some(shop()), revision: Some(1) }
);
example!(WalkthroughGetResult, WalkthroughGetResult { walkthrough: Some(walkthrough()) });
example!(WalkthroughActParams, WalkthroughActParams { id: "c0a3".into(), block_index: 4, author: Some("ana".into()) });
example!(WalkthroughActResult, WalkthroughActResult { walkthrough: walkthrough(), click: click() });
example!(
    WalkthroughResendParams,
    WalkthroughResendParams { id: "c0a3".into(), click_id: Some("4d1c".into()), agent: "codex-1".into() }
);
example!(WalkthroughUpdated, WalkthroughUpdated { seq: 57, walkthrough: walkthrough() });

example!(
    SymbolsFindParams,
    SymbolsFindParams { workspace: shop(), name: "read_token".into(), kind: "definition".into() }
);
example!(
    SymbolsFindResult,
    SymbolsFindResult {
        places: vec![
            SymbolPlace {
                path: in_shop("src/auth.rs"),
                range: Range { start: position(9, 7), end: position(9, 17) },
                name: "read_token".into(),
                container: Some("auth".into()),
            },
            SymbolPlace {
                path: in_shop("src/session.rs"),
                range: Range { start: position(3, 11), end: position(3, 27) },
                name: "read_token_cached".into(),
                container: None,
            },
        ],
    }
);
example!(DiagnosticsGetParams, DiagnosticsGetParams { workspace: shop(), path: Some(in_shop("src/auth.rs")) });
example!(
    DiagnosticsGetResult,
    DiagnosticsGetResult {
        files: vec![FileDiagnostics {
            path: in_shop("src/auth.rs"),
            version: 7,
            dirty: true,
            sha256: Some("3a7bd3e2360a3d29eea436fcfb7e44c735d117c42d1c1835420b6b9942dd4f1b".into()),
            stale: false,
            diagnostics: vec![Diagnostic {
                severity: "error".into(),
                source: Some("rustc".into()),
                code: Some("E0425".into()),
                message: "cannot find value `tokn` in this scope".into(),
                range: Range { start: position(3, 15), end: position(3, 19) },
            }],
        }],
    }
);

example!(PrLinkParams, PrLinkParams { workspace: shop(), pull_request: Some("octo/shop#42".into()), api: None });
example!(PrStatusParams, PrStatusParams { workspace: shop() });
example!(PrPullParams, PrPullParams { workspace: shop(), token: Some("ghp_fromTheEditorsEnvironment".into()) });
example!(
    PrPushParams,
    PrPushParams {
        workspace: shop(),
        dry_run: true,
        event: Some("approve".into()),
        token: Some("ghp_fromTheEditorsEnvironment".into()),
        review_id: Some("2026-11-26-003".into()),
        round: Some(2),
    }
);
fn pulled() -> PrPullSummary {
    PrPullSummary {
        at: "2026-11-26T09:12:40Z".into(),
        new_threads: 2,
        replies: 1,
        resolved: 1,
        reopened: 0,
        outdated: 0,
        gone: 0,
        tied: 0,
    }
}
example!(
    PrStatusResult,
    PrStatusResult {
        workspace: shop(),
        linked: Some(LinkedPr {
            pull_request: "octo/shop#42".into(),
            url: "https://github.com/octo/shop/pull/42".into(),
            api: "https://api.github.com".into(),
            found_by: "gh".into(),
            linked_at: "2026-11-26T09:10:02Z".into(),
            state: Some("OPEN".into()),
            head_oid: Some("5f1c2d9e0a4b7c3d8e6f1a2b9c0d4e7f3a5b8c1d".into()),
            last_pull: Some(pulled()),
            last_error: None,
            conversation: vec![PrComment {
                author: "mona".into(),
                body: "Thanks! A few notes inline.".into(),
                created_at: "2026-11-26T08:58:11Z".into(),
                url: "https://github.com/octo/shop/pull/42#issuecomment-2210987654".into(),
            }],
            unplaced: vec![PrUnplaced {
                path: "src/legacy.rs".into(),
                line: Some(12),
                url: "https://github.com/octo/shop/pull/42#discussion_r1812345699".into(),
                reason: "src/legacy.rs is not in this checkout (check out the pull request's branch)".into(),
            }],
            placed_by_line: Vec::new(),
            conflicts: Vec::new(),
            left_open: Vec::new(),
            last_push: Some(PrLastPush {
                at: "2026-11-26T09:20:15Z".into(),
                threads: 3,
                replies: 1,
                resolutions: 1,
                not_sent: 0,
                review: Some("submitted".into()),
                event: Some("request-changes".into()),
                round: Some("2026-11-26-003 round 2".into()),
            }),
            waiting: Some(PrWaiting { threads: 1, replies: 2, resolutions: 0 }),
        }),
        pulled: Some(pulled()),
        pushed: None,
    }
);
