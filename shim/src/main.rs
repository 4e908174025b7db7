//! The `parley-mcp` binary: put this in an MCP host's config.

fn main() {
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("parley-mcp: cannot start: {e}");
            std::process::exit(1);
        }
    };
    let code = runtime.block_on(parley_shim::run());
    // Exit explicitly: tokio reads stdin on a blocking thread that would keep
    // the process alive until the host writes again.
    std::process::exit(code);
}
