//! The `parley-mcp` binary: put this in an MCP host's config.

fn main() {
    if let Some(arg) = std::env::args().nth(1) {
        std::process::exit(answer_argument(&arg));
    }
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

/// `parley-mcp` takes no arguments: an MCP host starts it bare. `--version`
/// and `--help` answer; anything else is refused rather than ignored.
fn answer_argument(arg: &str) -> i32 {
    match arg {
        "--version" | "-V" => {
            println!("parley-mcp {}", parley_protocol::BUILD_VERSION);
            0
        }
        "--help" | "-h" => {
            println!(
                "parley-mcp: Parley's MCP server for agent hosts. It relays MCP on stdio to the Parley daemon, \
                 starting the daemon when none runs.\nPut it in your host's MCP config with no arguments; \
                 `parley mcp-config HOST` prints that config."
            );
            0
        }
        other => {
            eprintln!("parley-mcp: unexpected argument {other:?}: it takes none (see `parley-mcp --help`)");
            2
        }
    }
}
