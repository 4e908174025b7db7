//! The `parley` binary: the daemon (`parley daemon`) and the command line.

fn main() {
    std::process::exit(parley_daemon::cli::main());
}
