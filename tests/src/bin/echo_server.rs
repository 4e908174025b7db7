//! A plain rmcp stdio MCP server with one tool, `echo {text}`: the yardstick
//! the benchmarks measure Parley's shim + daemon against (DESIGN §9), written
//! the way rmcp's own examples write a server. It must stay plain: no tuning
//! that Parley's own MCP server does not also get.

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{Implementation, ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, ServiceExt, schemars, tool, tool_handler, tool_router};
use serde::Deserialize;

/// Arguments of `echo`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    /// The text to send back.
    text: String,
}

#[derive(Clone)]
struct Echo {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Echo {
    fn new() -> Self {
        Echo { tool_router: Self::tool_router() }
    }

    #[tool(description = "Returns the text it is given.")]
    fn echo(&self, Parameters(args): Parameters<EchoArgs>) -> String {
        args.text
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Echo {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("echo", env!("CARGO_PKG_VERSION")))
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let service = Echo::new().serve(rmcp::transport::stdio()).await?;
    service.waiting().await?;
    Ok(())
}
