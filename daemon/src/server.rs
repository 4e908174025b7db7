//! Running the daemon: bind the socket, open the store, start the state owner
//! and the hub, and shut all of it down in order on a signal or request.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use parley_protocol::socket;
use tokio_util::task::TaskTracker;

use crate::hub::{self, listener};
use crate::shutdown::Shutdown;
use crate::state::{self, StartTime};
use crate::store::Store;
use crate::usecases::Context;
use crate::{config, watch};

#[cfg(unix)]
#[path = "server/unix.rs"]
mod platform;
#[cfg(windows)]
#[path = "server/windows.rs"]
mod platform;

/// How long in-flight tool calls may run on after shutdown begins.
const DRAIN_CALLS: Duration = Duration::from_secs(3);
/// How long connections get to close after that.
const DRAIN_CONNECTIONS: Duration = Duration::from_secs(2);

/// Runs the daemon in the foreground until it is stopped.
pub fn run() -> anyhow::Result<()> {
    // Read before the runtime starts threads: the environment is not
    // thread-safe to read while others may change it.
    let notify_socket = config::notify_socket();
    init_logging();
    crate::memory::configure_allocator();
    tracing::debug!("the allocator purges freed pages after {} ms", crate::memory::purge_delay_ms());
    let activated = platform::take_inherited()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("parley")
        .on_thread_park(crate::memory::collect_on_idle)
        .thread_keep_alive(crate::memory::BLOCKING_THREAD_KEEP_ALIVE)
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let served = runtime.block_on(serve(notify_socket, activated));
    // A blocking read stuck on a file (a FIFO no one writes) would keep a
    // dropped runtime waiting for it forever: the store is flushed and the
    // socket gone by now, so the process ends whatever is still blocked.
    runtime.shutdown_timeout(STRAGGLERS);
    served
}

/// How long blocking work still running once the daemon has stopped may
/// delay its exit.
const STRAGGLERS: Duration = Duration::from_secs(1);

fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_new(config::log_filter())
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
}

async fn serve(notify_socket: Option<PathBuf>, activated: platform::Activated) -> anyhow::Result<()> {
    let started = StartTime { instant: Instant::now(), wall: chrono::Utc::now() };
    let socket_path = socket::socket_path()?;
    let data_dir = config::data_dir()?;
    for changed in crate::store::prepare_data_dir(&data_dir)? {
        // Older versions left the store readable by every user of the machine.
        tracing::warn!(
            "{} was open to other users (mode {:o}); it is now private to you (mode {:o})",
            changed.path.display(),
            changed.mode,
            changed.mode & !0o077
        );
    }
    crate::store::check_writable(&data_dir)?;
    let bound = listener::bind(&socket_path, activated).await?;
    let (store, recovery) = Store::open_or_recover(&data_dir)?;
    let store_path = store.path().to_owned();
    let store_notice = recovery.map(|r| {
        let from = r.backup.map_or_else(
            || "no backup existed, so it starts empty".to_owned(),
            |b| format!("restored from {}", b.display()),
        );
        let place = if r.moved_to == store_path {
            "was repaired in place".to_owned()
        } else {
            format!("was moved to {}", r.moved_to.display())
        };
        let notice = format!(
            "Feedback store corrupted, attempting recovery from backup: the damaged store ({}) {place}; {from}",
            r.cause
        );
        tracing::error!("{notice}");
        notice
    });
    let reviews = store.reviews().with_context(|| format!("reading reviews from {}", store.path().display()))?;
    let threads =
        store.threads_without_context().with_context(|| format!("reading threads from {}", store.path().display()))?;
    backup(&store, &data_dir);
    let sessions =
        store.sessions().with_context(|| format!("reading review sessions from {}", store.path().display()))?;
    let agent_names =
        store.agent_names().with_context(|| format!("reading agent names from {}", store.path().display()))?;
    // Nobody else holds the store yet, so this reopen cannot be refused:
    // sled lets go of the records the load and the backup read. A small
    // store is not worth it: sled holds about 1 KB a record.
    if threads.len() >= RELEASE_FROM_THREADS {
        store.release_memory().await;
    }
    let (state, _state_task) = state::spawn(store.clone(), reviews, threads, sessions, agent_names);
    let shutdown = Shutdown::default();
    platform::spawn_signal_handler(shutdown.clone())?;
    let watch = watch::spawn(state.clone(), store.clone(), shutdown.clone()).await;
    let context = Arc::new(Context {
        state,
        watch,
        store: store.clone(),
        shutdown: shutdown.clone(),
        runs: Default::default(),
        socket: socket_path.clone(),
        data_dir: data_dir.clone(),
        started,
        store_notice,
        log: platform::log_destination(&socket_path),
        executable: std::env::current_exe().ok().and_then(|exe| {
            let exe = exe.canonicalize().unwrap_or(exe);
            parley_protocol::hello::executable_identity(&exe).map(|build| (exe, build))
        }),
        github: Default::default(),
    });
    let tracker = TaskTracker::new();
    tracing::info!(
        pid = std::process::id(),
        version = parley_protocol::BUILD_VERSION,
        "listening on {}",
        socket_path.display()
    );
    if let Some(path) = notify_socket {
        platform::notify_ready(&path);
    }
    let (listener, guard) = bound.into_parts();
    let backups = tokio::spawn(periodic_backups(store.clone(), data_dir.clone()));
    let pulls = tokio::spawn(crate::usecases::pull_requests::schedule::pull_linked_workspaces(
        (*context).clone(),
        crate::usecases::pull_requests::schedule::interval(),
    ));
    hub::accept_loop(listener, context, tracker.clone()).await;
    backups.abort();
    pulls.abort();

    tracing::info!("shutting down: no longer accepting connections");
    let still_running = shutdown.wait_idle(DRAIN_CALLS).await;
    if still_running > 0 {
        tracing::warn!("{still_running} tool call(s) still running after {DRAIN_CALLS:?}; their agents get an error");
    }
    shutdown.close.cancel();
    tracker.close();
    if tokio::time::timeout(DRAIN_CONNECTIONS, tracker.wait()).await.is_err() {
        tracing::warn!("some connections did not close within {DRAIN_CONNECTIONS:?}");
    }
    // Every acknowledged write is durable already; what is left is derived
    // data, so a disk that refuses it now must not keep the socket behind.
    if let Err(e) = store.flush().await {
        tracing::error!("cannot flush the store while stopping: {e}");
    }
    backup(&store, &data_dir);
    guard.remove();
    tracing::info!("stopped");
    Ok(())
}

/// From how many threads the start reopens the store once it has read them,
/// to let go of what sled keeps of them (about 10 MiB at this size).
const RELEASE_FROM_THREADS: usize = 10_000;

/// How often a backup is taken while the daemon runs.
const BACKUP_EVERY: Duration = Duration::from_secs(600);

/// Writes an automatic backup; a failure is logged, never fatal.
fn backup(store: &Store, data_dir: &Path) {
    match store.write_backup(data_dir) {
        Ok(path) => tracing::debug!("backup written to {}", path.display()),
        Err(e) => tracing::warn!("cannot write a backup: {e}"),
    }
}

async fn periodic_backups(store: Store, data_dir: PathBuf) {
    let mut every = tokio::time::interval(BACKUP_EVERY);
    every.tick().await;
    loop {
        every.tick().await;
        let (handle, dir) = (store.clone(), data_dir.clone());
        let _ = tokio::task::spawn_blocking(move || backup(&handle, &dir)).await;
        store.release_memory().await;
    }
}
