//! An agent's tool call, as the daemon's MCP server decodes it: the tool's
//! name and its arguments, read by rmcp into the tool's argument type.

use parley_daemon::mcp::{check_tool_arguments, tool_input_schemas};
use serde::Deserialize;
use serde_json::{Map, Value};

/// The `params` of a `tools/call`, as the fuzzer writes them.
#[derive(Deserialize)]
struct Call {
    name: String,
    #[serde(default)]
    arguments: Option<Map<String, Value>>,
}

/// Any bytes as the params of a `tools/call`.
///
/// Rules: arguments a tool accepts name only what its input schema offers
/// (the argument types refuse unknown fields), and a refusal says something.
pub fn tool_arguments(data: &[u8]) {
    let Ok(call) = serde_json::from_slice::<Call>(data) else { return };
    let given: Vec<String> = call.arguments.iter().flat_map(|arguments| arguments.keys().cloned()).collect();
    match check_tool_arguments(&call.name, call.arguments) {
        None => {}
        Some(Ok(())) => {
            let schemas = tool_input_schemas();
            let (_, schema) = schemas.iter().find(|(name, _)| *name == call.name).expect("a checked tool is listed");
            for key in given {
                assert!(
                    schema["properties"].get(&key).is_some(),
                    "{}: accepted the argument {key:?}, which its schema does not name",
                    call.name
                );
            }
        }
        Some(Err(refusal)) => assert!(!refusal.trim().is_empty(), "{}: refused without a word", call.name),
    }
}
