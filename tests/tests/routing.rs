//! Several agents and editor windows on one daemon: reviews reach exactly the
//! windows on their workspace, and selections come from the window the agent
//! most likely means.

use parley_tests::{Sandbox, review_args};
use serde_json::json;

#[tokio::test]
async fn two_agents_and_two_windows_see_only_their_own_workspace() {
    let sandbox = Sandbox::new();
    let a = sandbox.repo("alpha", &[("a.rs", "alpha\n")]);
    let b = sandbox.repo("beta", &[("b.rs", "beta\n")]);
    let _daemon = sandbox.start_daemon();
    let agent_a = sandbox.agent(&a).await;
    let agent_b = sandbox.agent(&b).await;
    let mut window_a = sandbox.editor("window-a", &[&a]).await;
    let mut window_b = sandbox.editor("window-b", &[&b]).await;

    let sent_a = agent_a.call_ok("present_review", review_args("# A1 [`a.rs:1`][]", &a)).await;
    assert_eq!(sent_a["delivered_to"], json!([{"editor": "window-a"}]));
    let sent_b = agent_b.call_ok("present_review", review_args("# B1 [`b.rs:1`][]", &b)).await;
    assert_eq!(sent_b["delivered_to"], json!([{"editor": "window-b"}]));
    agent_a.call_ok("present_review", review_args("# A2", &a)).await;
    agent_b.call_ok("present_review", review_args("# B2", &b)).await;

    // Each window's stream holds its own workspace's reviews, in order, and
    // nothing from the other: had B1 reached window A, it would sit between A1 and A2.
    for (window, want) in
        [(&mut window_a, ["# A1 [`a.rs:1`][]", "# A2"]), (&mut window_b, ["# B1 [`b.rs:1`][]", "# B2"])]
    {
        for content in want {
            let update = window.next_notification().await;
            assert_eq!(update.method, "review/updated");
            assert_eq!(update.params["review"]["content"], json!(content));
        }
    }
    let status = sandbox.status();
    assert_eq!(status["connections"]["mcp"], json!(2));
    assert_eq!(status["connections"]["editor"], json!(2));
    let workspaces = status["workspaces"].as_array().expect("list").len();
    assert_eq!(workspaces, 2, "{status}");
}

#[tokio::test]
async fn a_window_that_reconnects_replays_what_it_missed() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("ws", &[("a.rs", "x\n")]);
    let other = sandbox.repo("other", &[("b.rs", "y\n")]);
    let _daemon = sandbox.start_daemon();
    let agent = sandbox.agent(&repo).await;
    let mut window = sandbox.editor("nvim", &[&repo]).await;
    agent.call_ok("present_review", review_args("# one", &repo)).await;
    let first = window.next_notification().await;
    let seen = first.params["seq"].as_u64().expect("events carry a seq");
    drop(window);

    agent.call_ok("present_review", review_args("# two", &repo)).await;
    agent.call_ok("present_review", review_args("# elsewhere", &other)).await;
    agent.call_ok("present_review", review_args("# three", &repo)).await;

    let mut window = sandbox.editor("nvim", &[&repo]).await;
    assert!(window.reply.seq >= seen + 3, "hello reports the newest seq");
    let replay = window.call("events/replay", json!({ "after": seen })).await;
    assert_eq!(replay["complete"], json!(true));
    let contents: Vec<&str> = replay["events"]
        .as_array()
        .expect("list")
        .iter()
        .filter_map(|e| e["params"]["review"]["content"].as_str())
        .collect();
    assert_eq!(contents, ["# two", "# three"], "only this workspace's events, in order");
}

#[tokio::test]
async fn selection_comes_from_the_window_the_agent_means() {
    let sandbox = Sandbox::new();
    let a = sandbox.repo("alpha", &[("a.rs", "one\ntwo\n")]);
    let b = sandbox.repo("beta", &[("b.rs", "three\n")]);
    let elsewhere = sandbox.repo("gamma", &[("c.rs", "c\n")]);
    let _daemon = sandbox.start_daemon();

    let selection = |text: &str, path: &std::path::Path| json!({"path": path, "text": text, "start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 3}});
    let mut first = sandbox.editor_with("first", Some("win-1"), &[&a]).await;
    first.selection = selection("from first", &a.join("a.rs"));
    let mut second = sandbox.editor_with("second", Some("win-2"), &[&a]).await;
    second.selection = selection("from second", &a.join("a.rs"));
    let mut third = sandbox.editor_with("third", Some("win-3"), &[&b]).await;
    third.selection = selection("from third", &b.join("b.rs"));
    // The first window takes focus last; a round trip on its own connection
    // makes sure the daemon has seen the focus before the agents ask.
    first.notify("editor/focus", json!({ "focused": true })).await;
    first.call("status", json!({})).await;
    let _answering = [first.answer_in_background(), second.answer_in_background(), third.answer_in_background()];

    let cases = [
        (&a, Some("win-2"), "from second", "the window this agent runs in"),
        (&a, None, "from first", "the most recently focused window on this workspace"),
        (&b, None, "from third", "the most recently focused window on this workspace"),
        (&b, Some("win-gone"), "from third", "the most recently focused window on this workspace"),
        (&elsewhere, Some("win-2"), "from second", "the window this agent runs in"),
    ];
    for (cwd, editor_id, want, why) in cases {
        let env: Vec<(&str, &str)> = editor_id.map(|id| ("PARLEY_EDITOR_ID", id)).into_iter().collect();
        let agent = sandbox.agent_with(cwd, &env).await;
        let got = agent.call_ok("get_selection", json!({})).await;
        assert_eq!(got["selectedText"], json!(want), "agent in {} with {editor_id:?}: {got}", cwd.display());
        assert!(got["message"].as_str().is_some_and(|m| m.contains(why)), "{got}");
    }
}

#[tokio::test]
async fn a_window_that_does_not_answer_falls_back_to_its_last_pushed_selection() {
    let sandbox = Sandbox::new();
    let repo = sandbox.repo("ws", &[("a.rs", "hello\n")]);
    let _daemon = sandbox.start_daemon();
    let mut window = sandbox.editor("slow", &[&repo]).await;
    let pushed = json!({"path": repo.join("a.rs"), "text": "hello",
        "start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 5}});
    window.notify("selection/changed", json!({ "selection": pushed })).await;
    window.call("status", json!({})).await;
    let agent = sandbox.agent(&repo).await;
    // The window never answers selection/get (this test does not read it).
    let got = agent.call_ok("get_selection", json!({})).await;
    assert_eq!(got["selectedText"], json!("hello"));
    assert!(got["message"].as_str().is_some_and(|m| m.contains("did not answer within 2 s")), "{got}");
}

#[tokio::test]
async fn parley_watch_never_wins_the_selection_and_another_projects_window_is_given_only_when_asked() {
    let sandbox = Sandbox::new();
    let shop = sandbox.repo("shop", &[("cart.py", "def total():\n    return 1\n")]);
    let rr = sandbox.repo("rr", &[("r.py", "x = 1\n")]);
    let _daemon = sandbox.start_daemon();
    let mut nvim = sandbox.editor("nvim", &[&shop]).await;
    nvim.selection = json!({"path": shop.join("cart.py"), "text": "return",
        "start": {"line": 1, "character": 4}, "end": {"line": 1, "character": 10}});
    let _answering = nvim.answer_in_background();

    // `parley watch` on the same folder connects after the window, which
    // made it the most recently focused one when it said it was a window.
    let mut watch = sandbox
        .command("parley")
        .arg("watch")
        .current_dir(&shop)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start parley watch");
    let stderr = watch.stderr.take().expect("piped stderr");
    let watching = tokio::task::spawn_blocking(move || {
        use std::io::BufRead as _;
        std::io::BufReader::new(stderr).lines().map_while(Result::ok).find(|l| l.contains("watching"))
    });
    let said = tokio::time::timeout(parley_tests::DEADLINE, watching).await.expect("watch connects in time");
    assert!(said.expect("read stderr").is_some(), "parley watch never said it was watching");

    let agent = sandbox.agent(&shop).await;
    let got = agent.call_ok("get_selection", json!({})).await;
    assert_eq!((&got["selectedText"], &got["editor"]), (&json!("return"), &json!("nvim")), "{got}");
    assert_eq!(got.get("otherWorkspace"), None, "{got}");

    // An agent in a repository no window is open on gets nothing, and is told
    // which window it could ask and how.
    let elsewhere = sandbox.agent(&rr).await;
    let got = elsewhere.call_ok("get_selection", json!({})).await;
    assert_eq!(got["selectedText"], json!(null), "{got}");
    let message = got["message"].as_str().expect("message");
    assert!(message.contains("No editor window is open on your workspace"), "{message}");
    assert!(message.contains("nvim") && message.contains("anyWorkspace: true"), "{message}");
    // Asked for any workspace, it gets the selection, plainly marked as another project's.
    let got = elsewhere.call_ok("get_selection", json!({"anyWorkspace": true})).await;
    assert_eq!(got["selectedText"], json!("return"), "{got}");
    assert_eq!(got["otherWorkspace"], json!(true), "{got}");
    assert!(got["message"].as_str().is_some_and(|m| m.contains("ANOTHER workspace")), "{got}");
    let _ = watch.kill();
    let _ = watch.wait();
}
