//! The `parley` binary: the daemon (`parley daemon`) and the command line.

/// glibc's malloc slows badly once the heap is large and fragmented (100,000
/// threads loaded and re-checked); mimalloc keeps allocation cheap there.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(parley_daemon::cli::main());
}
