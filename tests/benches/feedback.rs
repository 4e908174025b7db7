//! Feedback threads at scale (DESIGN §9, issue 3 item 9, issue 9 items 14
//! and 19), measured on the real release binaries: 100,000 threads across
//! 1,000 files read over MCP, against the same reads in a fresh daemon
//! holding one file's threads, and the daemon's memory with them (after the
//! import, and started again on them); `feedback/create` from one client and
//! from many at once (durable writes, batched per flush);
//! re-anchoring a 20,000-line file with 500 threads after an edit; a 28 MB
//! file with 10 threads shuffled, and what the next reads cost; plus the
//! in-process cost of re-anchoring the 20,000-line file.
//!
//! ```sh
//! cargo build --release --workspace
//! cargo bench -p parley-tests --bench feedback
//! ```
//!
//! The 100,000 threads are loaded with `parley import` from generated export
//! files whose anchors match the files' text (with empty `anchored_against`
//! and `checked_against`, so the first read re-checks them all); the 500 are
//! made one by one with `feedback/create` over the hub, as editors make them.
//! The MCP client is the same raw line client as benches/mcp.rs's, from the
//! toolkit the benches share (`parley_tests::bench`: statistics, report,
//! watchdog, clients); this file keeps only what is its own. It prints a
//! report and asserts nothing about timings; every loop is bounded in count
//! and time, and a watchdog ends the run if anything stalls.

use std::ops::Range;
use std::path::Path;
use std::time::{Duration, Instant};

use parley_daemon::anchor::{Reanchorer, capture};
use parley_daemon::feedback::span_of;
use parley_daemon::position::LineIndex;
use parley_tests::bench::{
    Call, HubClient, LineChild, Report, Stats, fmt_duration, fmt_kib, rss_kib, shim_command, start_daemon, status_kib,
    watchdog,
};
use parley_tests::{DaemonProcess, Sandbox, bin};
use serde_json::{Value, json};

/// The whole run may take this long before the watchdog stops it.
const RUN_LIMIT: Duration = Duration::from_secs(400);

const FILES: usize = 1_000;
const THREADS_PER_FILE: usize = 100;
const LINES_PER_FILE: usize = 2 * THREADS_PER_FILE + 20;
/// Threads per `parley import` file: a hub line may be at most 16 MiB.
const IMPORT_CHUNK: usize = 10_000;
const SUMMARY_CALLS: usize = 100;
const FILE_CALLS: usize = 1_000;
/// How long the daemon is left idle after the import and the reads before
/// its memory is measured again.
const SETTLE: Duration = Duration::from_secs(8);

/// The pathological file: lines of 67 bytes, 28 MB in all.
const HUGE_LINES: usize = 420_000;
const HUGE_THREADS: usize = 10;
const HUGE_ROUNDS: usize = 5;

const BIG_LINES: usize = 20_000;
const BIG_THREADS: usize = 500;
const BIG_ROUNDS: usize = 10;
const IN_PROCESS_ROUNDS: usize = 20;

/// Clients writing at once (`PARLEY_BENCH_WRITERS` overrides), and how many
/// threads each makes.
const WRITERS: usize = 16;
const WRITES_PER_WRITER: usize = 300;

fn main() {
    watchdog::start(RUN_LIMIT);
    let mut report = Report::new("feedback");
    println!("using {} and {}", bin("parley").display(), bin("parley-mcp").display());
    // `PARLEY_BENCH_ONLY=writers` (or `scale`, `big`, `huge`, comma-separated)
    // runs only those parts, to iterate on one of them.
    let only = std::env::var("PARLEY_BENCH_ONLY").ok();
    let runs = |part: &str| only.as_deref().is_none_or(|o| o.split(',').any(|p| p.trim() == part));

    if runs("writers") {
        concurrent_writers(&mut report);
    }
    if runs("scale") || runs("big") {
        let small = if runs("scale") { Some(one_file_only()) } else { None };
        let sandbox = Sandbox::new();
        let mut daemon = start_daemon(&sandbox);
        if let Some(small) = small {
            hundred_thousand(&mut report, &sandbox, &mut daemon, small);
        }
        if runs("big") {
            let big = big_file(&mut report, &sandbox);
            in_process(&mut report, &big);
        }
        watchdog::phase("stopping the daemon");
        daemon.terminate();
    }
    if runs("huge") {
        huge_file(&mut report);
    }
    report.print();
}

// --- concurrent writers ------------------------------------------------------------

/// Many clients making threads at once over the hub, each waiting for its
/// answer (so for its write to be durable) before the next: what batching
/// writes per flush gives, against one client making them one by one.
fn concurrent_writers(report: &mut Report) {
    watchdog::phase("concurrent writers");
    let writers: usize = std::env::var("PARLEY_BENCH_WRITERS").ok().and_then(|n| n.parse().ok()).unwrap_or(WRITERS);
    let sandbox = Sandbox::new();
    let mut daemon = start_daemon(&sandbox);
    let text = big_text(6 * WRITES_PER_WRITER);
    let files: Vec<(String, String)> = (0..writers).map(|w| (format!("src/w{w:02}.rs"), text.clone())).collect();
    let borrowed: Vec<(&str, &str)> = files.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
    let repo = sandbox.repo("writers", &borrowed);
    let create = |hub: &mut HubClient, file: &Path, k: usize| {
        let params = json!({
            "path": file,
            "range": {"start": {"line": 6 * k + 1, "character": 0}, "end": {"line": 6 * k + 1, "character": 8}},
            "body": format!("Thread {k}: does this still hold?"),
            "author": "bench",
        });
        let started = Instant::now();
        hub.call("feedback/create", params);
        started.elapsed()
    };

    // One client alone, as a baseline of the same run.
    let mut hub = HubClient::connect(&sandbox.socket, &repo);
    let alone_file = repo.join("src/w00.rs");
    let started = Instant::now();
    let alone: Vec<Duration> = (0..WRITES_PER_WRITER).map(|k| create(&mut hub, &alone_file, k)).collect();
    let alone_rate = WRITES_PER_WRITER as f64 / started.elapsed().as_secs_f64();
    drop(hub);

    // Every client connected before any writes, then all at once.
    let hubs: Vec<HubClient> = (0..writers).map(|_| HubClient::connect(&sandbox.socket, &repo)).collect();
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(writers + 1));
    let workers: Vec<_> = hubs
        .into_iter()
        .enumerate()
        .map(|(w, mut hub)| {
            let barrier = barrier.clone();
            let file = repo.join(format!("src/w{w:02}.rs"));
            std::thread::spawn(move || {
                barrier.wait();
                // w00 already has threads on its first lines; the others do not
                // mind, every create is a new thread.
                (0..WRITES_PER_WRITER).map(|k| create(&mut hub, &file, k)).collect::<Vec<Duration>>()
            })
        })
        .collect();
    barrier.wait();
    let started = Instant::now();
    let mut together = Vec::new();
    for worker in workers {
        together.extend(worker.join().expect("a writer thread"));
    }
    let together_rate = (writers * WRITES_PER_WRITER) as f64 / started.elapsed().as_secs_f64();
    daemon.terminate();

    let (alone, together) = (Stats::of(alone), Stats::of(together));
    println!("\n## feedback/create: one client, then {writers} at once ({WRITES_PER_WRITER} threads each)");
    Stats::print_table(&[("one client", alone), (&format!("{writers} clients at once"), together)]);
    println!("one client: {alone_rate:.0} creates/s; {writers} clients: {together_rate:.0} creates/s");
    report.info(
        &format!("feedback/create, durable: one client vs {writers} at once (creates/s; p50 each)"),
        format!(
            "{alone_rate:.0} vs {together_rate:.0} ({:.2}×; {} / {})",
            together_rate / alone_rate,
            fmt_duration(alone.median),
            fmt_duration(together.median)
        ),
    );
}

// --- 100,000 threads -------------------------------------------------------------

/// The same reads with only one file of threads in a fresh daemon: what the
/// 100,000 threads add.
fn one_file_only() -> (Stats, Stats) {
    watchdog::phase("one file of threads in a fresh daemon");
    let sandbox = Sandbox::new();
    let mut daemon = start_daemon(&sandbox);
    let repo = sandbox.repo("one", &[]);
    let path = "src/m00/f0000.rs";
    let text = many_file_text(0);
    std::fs::create_dir_all(repo.join("src/m00")).expect("mkdir");
    std::fs::write(repo.join(path), &text).expect("write file");
    let threads: Vec<Value> = (0..THREADS_PER_FILE)
        .map(|k| thread_record(&repo, path, &text, whole_lines(&text, 2 * k + 1, 2 * k + 1), k as u64))
        .collect();
    import(&sandbox, &threads, "one");
    let mut agent = LineChild::spawn(shim_command(&sandbox, &repo));
    agent.handshake();
    let (summary, get) =
        (Call::new("get_feedback_summary", json!({})), Call::new("get_feedback", json!({ "filePath": path })));
    agent.call_value(&summary);
    agent.call_value(&get);
    let budget = Instant::now() + Duration::from_secs(20);
    let (mut summaries, mut gets) = (Vec::new(), Vec::new());
    for _ in 0..FILE_CALLS {
        if Instant::now() > budget {
            break;
        }
        summaries.push(agent.call_ok(&summary));
        gets.push(agent.call_ok(&get));
    }
    agent.close();
    daemon.terminate();
    (Stats::of(summaries), Stats::of(gets))
}

fn import(sandbox: &Sandbox, threads: &[Value], name: &str) {
    let export = json!({
        "format": "parley-export", "version": 1, "exported_at": "2026-11-21T00:00:00.000Z",
        "reviews": [], "threads": threads,
    });
    let file = sandbox.dir.path().join(format!("export-{name}.json"));
    std::fs::write(&file, serde_json::to_vec(&export).expect("export serializes")).expect("write export");
    let (code, out, err) = sandbox.cli(&["import", file.to_str().expect("UTF-8 path")]);
    assert_eq!(code, 0, "parley import failed: {out}{err}");
    let _ = std::fs::remove_file(&file);
}

fn hundred_thousand(report: &mut Report, sandbox: &Sandbox, daemon: &mut DaemonProcess, small: (Stats, Stats)) {
    watchdog::phase("writing 1,000 files and 100,000 threads");
    let started = Instant::now();
    let repo = sandbox.repo("many", &[]);
    let mut threads = Vec::with_capacity(FILES * THREADS_PER_FILE);
    let mut files = Vec::with_capacity(FILES);
    for f in 0..FILES {
        let path = format!("src/m{:02}/f{f:04}.rs", f / 50);
        let text = many_file_text(f);
        let absolute = repo.join(&path);
        std::fs::create_dir_all(absolute.parent().expect("a parent")).expect("mkdir");
        std::fs::write(&absolute, &text).expect("write file");
        for k in 0..THREADS_PER_FILE {
            let range = whole_lines(&text, 2 * k + 1, 2 * k + 1);
            threads.push(thread_record(&repo, &path, &text, range, (f * THREADS_PER_FILE + k) as u64));
        }
        files.push(path);
    }
    let written = started.elapsed();

    watchdog::phase("parley import");
    let started = Instant::now();
    for (n, chunk) in threads.chunks(IMPORT_CHUNK).enumerate() {
        import(sandbox, chunk, &n.to_string());
    }
    let imported = started.elapsed();
    drop(threads);

    watchdog::phase("reading 100,000 threads over MCP");
    let mut agent = LineChild::spawn(shim_command(sandbox, &repo));
    agent.handshake();
    let summary = Call::new("get_feedback_summary", json!({}));
    // The first read re-checks every thread against its file.
    let started = Instant::now();
    let first = agent.call_value(&summary);
    let first_read = started.elapsed();
    let counts = &first["result"]["structuredContent"];
    assert_eq!(counts["totalThreads"], json!(FILES * THREADS_PER_FILE), "every thread was imported: {counts}");
    assert_eq!(counts["fileCount"], json!(FILES), "{counts}");
    let orphaned = counts["orphanedCount"].as_u64().unwrap_or(u64::MAX);
    let summary_bytes = serde_json::to_string(&first).expect("JSON").len();
    let rss_loaded = rss_kib(daemon.pid());

    let budget = Instant::now() + Duration::from_secs(60);
    agent.call(&summary).expect("warm-up summary");
    let mut summaries = Vec::new();
    for _ in 0..SUMMARY_CALLS {
        if Instant::now() > budget {
            break;
        }
        summaries.push(agent.call_ok(&summary));
    }
    let per_file: Vec<Call> = files.iter().map(|path| Call::new("get_feedback", json!({ "filePath": path }))).collect();
    let sample = agent.call_value(&per_file[7]);
    let listed = sample["result"]["structuredContent"]["threads"].as_array().map_or(0, Vec::len);
    assert_eq!(listed, THREADS_PER_FILE, "get_feedback lists one file's threads");
    let answer_bytes = serde_json::to_string(&sample).expect("JSON").len();
    // The same file as the fresh daemon reads, answered again and again as
    // there (its threads already marked seen by this agent): what the other
    // 99,900 threads cost a read.
    agent.call_value(&per_file[0]);
    let mut one_file = Vec::new();
    for _ in 0..FILE_CALLS {
        if Instant::now() > budget {
            break;
        }
        one_file.push(agent.call_ok(&per_file[0]));
    }
    // Each other file read for the first time: its 100 threads become seen
    // by the agent, one durable write.
    let mut first_reads = Vec::new();
    for call in per_file.iter().skip(8).take(FILE_CALLS / 4) {
        if Instant::now() > budget {
            break;
        }
        first_reads.push(agent.call_ok(call));
    }
    agent.close();
    let rss_after = rss_kib(daemon.pid());
    let hwm = status_kib(daemon.pid(), "VmHWM:");
    // What the daemon holds once the burst is over: it reopens the store and
    // compacts the threads 2 s after the last of many changes, and gives the
    // freed pages back as its threads go idle.
    std::thread::sleep(SETTLE);
    let rss_settled = rss_kib(daemon.pid());

    // What a user's daemon holds when it starts on these threads (at login,
    // after an upgrade): no import behind it.
    watchdog::phase("restarting the daemon on 100,000 threads");
    daemon.terminate();
    *daemon = start_daemon(sandbox);
    let mut agent = LineChild::spawn(shim_command(sandbox, &repo));
    agent.handshake();
    let started = Instant::now();
    agent.call_value(&summary);
    let restarted_read = started.elapsed();
    agent.call_value(&per_file[7]);
    agent.close();
    let (rss_restarted, hwm_restarted) = (rss_kib(daemon.pid()), status_kib(daemon.pid(), "VmHWM:"));

    let (summaries, one_file, first_reads) = (Stats::of(summaries), Stats::of(one_file), Stats::of(first_reads));
    println!("\n## {} threads across {FILES} files", FILES * THREADS_PER_FILE);
    println!("| step | time |");
    println!("| --- | --- |");
    println!("| write the files and generate the threads | {} |", fmt_duration(written));
    println!(
        "| `parley import` ({} files of {IMPORT_CHUNK} threads) | {} |",
        FILES * THREADS_PER_FILE / IMPORT_CHUNK,
        fmt_duration(imported)
    );
    println!(
        "| first get_feedback_summary (re-checks every thread; {orphaned} orphaned) | {} |",
        fmt_duration(first_read)
    );
    println!("| daemon VmRSS with the threads loaded | {} |", fmt_kib(rss_loaded));
    println!("| daemon VmRSS right after the reads below (peak VmHWM) | {} ({}) |", fmt_kib(rss_after), fmt_kib(hwm));
    println!("| daemon VmRSS {} s after the reads | {} |", SETTLE.as_secs(), fmt_kib(rss_settled));
    println!("| daemon restarted on the threads: first get_feedback_summary | {} |", fmt_duration(restarted_read));
    println!(
        "| daemon restarted: VmRSS after a summary and a file's read (peak VmHWM) | {} ({}) |",
        fmt_kib(rss_restarted),
        fmt_kib(hwm_restarted)
    );
    println!();
    Stats::print_table(&[
        (&format!("get_feedback_summary ({FILES} files, {summary_bytes} bytes)"), summaries),
        (&format!("get_feedback_summary, fresh daemon with {THREADS_PER_FILE} threads in 1 file"), small.0),
        (
            &format!("get_feedback {{filePath}} ({THREADS_PER_FILE} threads, {answer_bytes} bytes), read again"),
            one_file,
        ),
        ("get_feedback {filePath}, the same file in a fresh daemon with only its threads", small.1),
        ("get_feedback {filePath}, another file's first read (its threads become seen)", first_reads),
    ]);
    report.row(
        "100,000 threads: get_feedback_summary (p50 / p99; verdict on p99)",
        "≤ 5 ms",
        format!("{} / {}", fmt_duration(summaries.median), fmt_duration(summaries.p99)),
        summaries.p99 <= Duration::from_millis(5),
    );
    report.row(
        "100,000 threads: get_feedback {filePath} (p50 / p99; verdict on p99)",
        "≤ 1 ms",
        format!("{} / {}", fmt_duration(one_file.median), fmt_duration(one_file.p99)),
        one_file.p99 <= Duration::from_millis(1),
    );
    // The same reads in a fresh daemon holding one file's threads, in the
    // same run: what the other 99,900 threads cost, whatever the machine.
    let summary_ratio = ratio(summaries.median, small.0.median);
    report.row(
        "scale-free summary: 100,000 threads vs a fresh daemon's one file (p50 ratio)",
        "≤ 2×",
        format!(
            "{summary_ratio:.2}× ({} vs {}; p99 {:.2}×)",
            fmt_duration(summaries.median),
            fmt_duration(small.0.median),
            ratio(summaries.p99, small.0.p99)
        ),
        summary_ratio <= 2.0,
    );
    let file_ratio = ratio(one_file.median, small.1.median);
    report.row(
        "scale-free per-file read: the same file at 100,000 threads vs a fresh daemon (p50 ratio)",
        "≤ 1.1×",
        format!(
            "{file_ratio:.2}× ({} vs {}; p99 {:.2}×)",
            fmt_duration(one_file.median),
            fmt_duration(small.1.median),
            ratio(one_file.p99, small.1.p99)
        ),
        file_ratio <= 1.1,
    );
    report.row(
        &format!(
            "daemon VmRSS with 100,000 threads, {} s after the import and the reads (right after them; peak VmHWM)",
            SETTLE.as_secs()
        ),
        "≤ 150 MiB",
        format!("{} ({}; {})", fmt_kib(rss_settled), fmt_kib(rss_after), fmt_kib(hwm)),
        rss_settled <= 150 * 1024,
    );
    report.row(
        "daemon VmRSS started on 100,000 threads, after a summary and a file's read (peak VmHWM)",
        "≤ 150 MiB",
        format!("{} ({})", fmt_kib(rss_restarted), fmt_kib(hwm_restarted)),
        rss_restarted <= 150 * 1024,
    );
}

fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64().max(1e-9)
}

/// A file of unique lines; thread `k` sits on line `2k + 1`.
fn many_file_text(f: usize) -> String {
    let mut text = format!("fn file_{f}() -> u64 {{\n");
    for l in 1..LINES_PER_FILE - 1 {
        text.push_str(&format!("    let v{l} = compute({f}, {l}); // file {f}, line {l}\n"));
    }
    text.push_str("}\n");
    text
}

/// The byte range of 0-based lines `first..=last`, without the last newline.
fn whole_lines(text: &str, first: usize, last: usize) -> Range<usize> {
    let mut starts = std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1));
    let start = starts.nth(first).expect("the line exists");
    let after = text[start..].match_indices('\n').nth(last - first).map_or(text.len(), |(i, _)| start + i);
    start..after
}

/// A thread as `parley export` writes it (daemon/src/store/records/versioned.rs),
/// anchored on `range` of `text`.
fn thread_record(repo: &Path, path: &str, text: &str, range: Range<usize>, n: u64) -> Value {
    let anchor = capture(text, range.clone());
    let span = span_of(&LineIndex::new(text), range.clone());
    let created = "2026-11-21T00:00:00.000Z";
    json!({
        "v": "1",
        "id": uuid(n, 1),
        "workspace": repo,
        "path": path,
        "start": range.start,
        "end": range.end,
        "quote": anchor.quote,
        "prefix": anchor.prefix(),
        "suffix": anchor.suffix(),
        "anchored_against": "",
        "checked_against": "",
        "span": [span.start_line, span.end_line, span.start.bytes, span.start.utf16, span.start.chars,
                 span.end.bytes, span.end.utf16, span.end.chars],
        "state": "anchored",
        "similarity": null,
        "original_quote": anchor.quote,
        "comments": [{
            "id": uuid(n, 2),
            "body": format!("Bench comment {n}: is this the right value here?"),
            "author": "bench",
            "created_at": created,
        }],
        "created_at": created,
        "updated_at": created,
        "resolved": false,
    })
}

/// A deterministic id in the UUID shape thread ids must have.
fn uuid(n: u64, kind: u64) -> String {
    format!("{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}", n >> 16, n & 0xffff, kind, 0, n)
}

// --- one big file ------------------------------------------------------------------

/// The big file's text and the ranges of its threads.
struct BigFile {
    text: String,
    ranges: Vec<Range<usize>>,
}

fn big_file(report: &mut Report, sandbox: &Sandbox) -> BigFile {
    watchdog::phase("creating 500 threads on a 20,000-line file");
    let text = big_text(BIG_LINES);
    let repo = sandbox.repo("big", &[("src/big.rs", &text)]);
    let file = repo.join("src/big.rs");
    // On every sixth function's `let` line (every 36 lines); every fifth
    // thread spans the function's three-line body.
    let lines: Vec<(usize, usize)> =
        (0..BIG_THREADS).map(|k| (36 * k + 1, if k % 5 == 0 { 36 * k + 3 } else { 36 * k + 1 })).collect();
    let ranges: Vec<Range<usize>> = lines.iter().map(|&(a, b)| whole_lines(&text, a, b)).collect();
    let mut hub = HubClient::connect(&sandbox.socket, &repo);
    let mut creations = Vec::new();
    for (k, &(first, last)) in lines.iter().enumerate() {
        let end = ranges[k].end - text[..ranges[k].end].rfind('\n').map_or(0, |i| i + 1);
        let params = json!({
            "path": file,
            "range": {"start": {"line": first, "character": 0}, "end": {"line": last, "character": end}},
            "body": format!("Thread {k}: does this still hold?"),
            "author": "bench",
        });
        let started = Instant::now();
        let thread = hub.call("feedback/create", params);
        creations.push(started.elapsed());
        assert_eq!(thread["thread"]["quote"].as_str(), Some(&text[ranges[k].clone()]), "thread {k} on its text");
    }
    drop(hub);

    watchdog::phase("re-anchoring after edits");
    let mut agent = LineChild::spawn(shim_command(sandbox, &repo));
    agent.handshake();
    let get = Call::new("get_feedback", json!({ "filePath": "src/big.rs" }));
    agent.call_value(&get);
    // The file unchanged: listing 500 threads, nothing to re-anchor.
    let mut unchanged = Vec::new();
    for _ in 0..20 {
        unchanged.push(agent.call_ok(&get));
    }
    let mut current = text.clone();
    let mut after_insert = Vec::new();
    let mut states = Vec::new();
    let budget = Instant::now() + Duration::from_secs(60);
    for round in 0..BIG_ROUNDS {
        if Instant::now() > budget {
            break;
        }
        // Three new lines near the top: every thread below moves.
        let at = whole_lines(&current, 5 + round, 5 + round).start;
        current.insert_str(at, &format!("// inserted in round {round}\n// a second line\n\n"));
        std::fs::write(&file, &current).expect("edit the big file");
        let started = Instant::now();
        let answer = agent.call_value(&get);
        after_insert.push(started.elapsed());
        states.push(state_counts(&answer));
        // The watcher re-checks the file 75 ms after the write; let it pass
        // (it finds the file already checked) so rounds do not overlap.
        std::thread::sleep(Duration::from_millis(200));
    }
    agent.close();
    let anchored_everywhere = states.iter().all(|s| s.0 == BIG_THREADS);

    let (creations, unchanged, after_insert) = (Stats::of(creations), Stats::of(unchanged), Stats::of(after_insert));
    println!("\n## {BIG_THREADS} threads on a {BIG_LINES}-line file ({} bytes)", text.len());
    Stats::print_table(&[
        ("feedback/create over the hub (each is stored durably)", creations),
        ("get_feedback {filePath}, file unchanged (listing only)", unchanged),
        ("get_feedback {filePath} after inserting 3 lines near the top", after_insert),
    ]);
    let (a, o) = states.last().copied().unwrap_or_default();
    println!("states after the last edit: {a} anchored, {o} other");
    report.row(
        "re-anchor a 20,000-line file with 500 threads after an edit: the next get_feedback (median / max)",
        "≤ 20 ms",
        format!(
            "{} / {} (listing alone: {})",
            fmt_duration(after_insert.median),
            fmt_duration(after_insert.max),
            fmt_duration(unchanged.median)
        ),
        after_insert.median <= Duration::from_millis(20) && anchored_everywhere,
    );
    BigFile { text, ranges }
}

/// (anchored, other) thread counts of a get_feedback answer.
fn state_counts(answer: &Value) -> (usize, usize) {
    let threads = answer["result"]["structuredContent"]["threads"].as_array().expect("threads");
    let anchored = threads.iter().filter(|t| t["state"] == json!("anchored")).count();
    (anchored, threads.len() - anchored)
}

/// Functions of five lines and a blank one, every line different.
fn big_text(lines: usize) -> String {
    let mut text = String::new();
    for n in 0..lines {
        let i = n / 6;
        let line = match n % 6 {
            0 => format!("pub fn function_{i}(input: &str) -> usize {{"),
            1 => format!("    let mut total = {i};"),
            2 => format!("    for c in input.chars() {{ total += c as usize * {}; }}", i % 7 + 1),
            3 => format!("    total // ends function_{i}"),
            4 => "}".to_owned(),
            _ => String::new(),
        };
        text.push_str(&line);
        text.push('\n');
    }
    text
}

// --- a pathological file ---------------------------------------------------------------

/// `n` lines of 67 bytes that look nothing alike (a xorshift walk), so no
/// line is a fuzzy match for another.
fn noise_lines(n: usize, seed: u64) -> Vec<String> {
    let mut state = seed;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    (0..n).map(|_| format!("{:016x} {:016x} {:016x} {:016x}", next(), next(), next(), next())).collect()
}

/// A 28 MB file with 10 threads (half on one line, half on three) is
/// shuffled, and a small file beside it edited; then the next reads are
/// timed. In a fresh daemon of its own, so its memory does not mix with the
/// 100,000 threads'.
fn huge_file(report: &mut Report) {
    watchdog::phase("a 28 MB file with 10 threads");
    let sandbox = Sandbox::new();
    let mut daemon = start_daemon(&sandbox);
    let mut lines = noise_lines(HUGE_LINES, 0x9e37_79b9_7f4a_7c15);
    let small = big_text(60);
    let repo = sandbox.repo("huge", &[("src/small.rs", &small)]);
    let huge = repo.join("huge.txt");
    std::fs::write(&huge, lines.join("\n") + "\n").expect("write the huge file");
    let mut hub = HubClient::connect(&sandbox.socket, &repo);
    let mut create = |file: &Path, first: usize, last: usize, width: usize| {
        let params = json!({
            "path": file,
            "range": {"start": {"line": first, "character": 0}, "end": {"line": last, "character": width}},
            "body": "bench", "author": "bench",
        });
        hub.call("feedback/create", params);
    };
    for k in 0..HUGE_THREADS {
        let first = (k + 1) * HUGE_LINES / (HUGE_THREADS + 2);
        create(&huge, first, if k % 2 == 0 { first } else { first + 2 }, 67);
    }
    create(&repo.join("src/small.rs"), 7, 7, 17);
    drop(hub);
    let mut agent = LineChild::spawn(shim_command(&sandbox, &repo));
    agent.handshake();
    let summary = Call::new("get_feedback_summary", json!({}));
    let small_get = Call::new("get_feedback", json!({ "filePath": "src/small.rs" }));
    let huge_get = Call::new("get_feedback", json!({ "filePath": "huge.txt" }));
    agent.call_value(&summary);
    let (mut summaries, mut huge_reads, mut small_reads) = (Vec::new(), Vec::new(), Vec::new());
    let mut stale = 0;
    let mut order = {
        let mut state: u64 = 0x2545_f491_4f6c_dd1d;
        std::iter::from_fn(move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            Some(state)
        })
    };
    let budget = Instant::now() + Duration::from_secs(120);
    for round in 0..HUGE_ROUNDS {
        if Instant::now() > budget {
            break;
        }
        for i in (1..lines.len()).rev() {
            let j = (order.next().expect("enough numbers") % (i as u64 + 1)) as usize;
            lines.swap(i, j);
        }
        std::fs::write(&huge, lines.join("\n") + "\n").expect("shuffle the huge file");
        std::fs::write(repo.join("src/small.rs"), format!("// round {round}\n{small}")).expect("edit the small file");
        // Whichever read comes first pays for re-anchoring the huge file
        // (unless the watcher got there first); the rounds alternate.
        let started = Instant::now();
        if round % 2 == 0 {
            agent.call_value(&summary);
            summaries.push(started.elapsed());
        } else {
            let answer = agent.call_value(&huge_get);
            huge_reads.push(started.elapsed());
            let threads = answer["result"]["structuredContent"]["threads"].as_array().expect("threads");
            stale = threads.iter().filter(|t| t["state"] == json!("stale")).count();
        }
        let started = Instant::now();
        agent.call_value(&small_get);
        small_reads.push(started.elapsed());
        // Let the watcher's own look at the files pass before the next round.
        std::thread::sleep(Duration::from_millis(300));
    }
    agent.close();
    let rss = rss_kib(daemon.pid());
    daemon.terminate();
    let (summaries, huge_reads, small_reads) = (Stats::of(summaries), Stats::of(huge_reads), Stats::of(small_reads));
    println!("\n## a {HUGE_LINES}-line file ({} MiB) with {HUGE_THREADS} threads, shuffled", (67 * HUGE_LINES) >> 20);
    Stats::print_table(&[
        ("get_feedback_summary right after a shuffle", summaries),
        ("get_feedback {filePath} of the huge file right after a shuffle", huge_reads),
        ("get_feedback {filePath} of the small file, after either", small_reads),
    ]);
    println!("threads left stale by the last shuffle: {stale} of {HUGE_THREADS}; daemon VmRSS {}", fmt_kib(rss));
    let worst = summaries.max.max(huge_reads.max);
    report.row(
        "a 28 MB file with 10 threads, shuffled: the next read (max of the summary and the file's read)",
        "≤ 100 ms or marked stale",
        format!(
            "{} (summary p50 {}, file p50 {}); {stale} of {HUGE_THREADS} threads stale",
            fmt_duration(worst),
            fmt_duration(summaries.median),
            fmt_duration(huge_reads.median)
        ),
        worst <= Duration::from_millis(100),
    );
}

// --- in process ----------------------------------------------------------------------

/// The daemon's re-anchoring functions on the same file and edit, without IO.
fn in_process(report: &mut Report, big: &BigFile) {
    watchdog::phase("in-process re-anchoring");
    let old = big.text.as_str();
    let anchors: Vec<_> = big.ranges.iter().map(|r| capture(old, r.clone())).collect();
    let mut new = old.to_owned();
    new.insert_str(whole_lines(old, 5, 5).start, "// inserted\n// a second line\n\n");
    let (mut reanchor_only, mut with_positions, mut without_snapshot) = (Vec::new(), Vec::new(), Vec::new());
    let mut found = 0;
    for _ in 0..IN_PROCESS_ROUNDS {
        let started = Instant::now();
        let reanchorer = Reanchorer::new(Some(old), &new);
        found = anchors.iter().filter(|a| reanchorer.reanchor(a).range.is_some()).count();
        reanchor_only.push(started.elapsed());

        // What feedback::recheck adds per thread: a new anchor and its span.
        let started = Instant::now();
        let reanchorer = Reanchorer::new(Some(old), &new);
        let index = LineIndex::new(&new);
        for anchor in &anchors {
            if let Some(range) = reanchorer.reanchor(anchor).range {
                std::hint::black_box(capture(&new, range.clone()));
                std::hint::black_box(span_of(&index, range));
            }
        }
        with_positions.push(started.elapsed());

        let started = Instant::now();
        let reanchorer = Reanchorer::new(None, &new);
        for anchor in &anchors {
            std::hint::black_box(reanchorer.reanchor(anchor));
        }
        without_snapshot.push(started.elapsed());
    }
    let (reanchor_only, with_positions, without_snapshot) =
        (Stats::of(reanchor_only), Stats::of(with_positions), Stats::of(without_snapshot));
    println!(
        "\n## in process: {BIG_THREADS} anchors, {BIG_LINES}-line file, 3 lines inserted near the top ({found} found)"
    );
    Stats::print_table(&[
        ("Reanchorer (line diff) + reanchor × 500", reanchor_only),
        ("… + capture + span_of per thread (as feedback::recheck)", with_positions),
        ("Reanchorer without the old text (no snapshot)", without_snapshot),
    ]);
    report.info(
        "in-process: the same re-anchoring (median; with capture and span_of per thread)",
        format!("{} ({})", fmt_duration(reanchor_only.median), fmt_duration(with_positions.median)),
    );
}

// --- the hub client -------------------------------------------------------------------
