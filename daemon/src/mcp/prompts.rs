//! The prompts hosts offer as slash commands: `address-feedback` (read the
//! open threads, fix, reply, resolve) and `review-loop` (review rounds until
//! the reviewer approves). Each is one user message that walks the agent
//! through Parley's tools; the arguments narrow or fill it in.

use std::collections::BTreeMap;

use rmcp::ErrorData;
use rmcp::model::{GetPromptResult, Prompt, PromptArgument, PromptMessage, Role};

pub const ADDRESS_FEEDBACK: &str = "address-feedback";
pub const REVIEW_LOOP: &str = "review-loop";

/// Every prompt, in the order hosts list them.
pub fn list() -> Vec<Prompt> {
    vec![
        Prompt::new(
            ADDRESS_FEEDBACK,
            Some("Read the open feedback threads humans left on this workspace, fix the code, reply to each thread and resolve it"),
            Some(vec![
                PromptArgument::new("file")
                    .with_title("File")
                    .with_description("Only the threads on this file, relative to the workspace root (default: every file)")
                    .with_required(false),
            ]),
        )
        .with_title("Address open feedback"),
        Prompt::new(
            REVIEW_LOOP,
            Some("Run review rounds on your current changes until the reviewer approves, addressing its findings and the humans' threads between rounds, then mark the review complete"),
            Some(vec![
                PromptArgument::new("summary")
                    .with_title("Summary")
                    .with_description("What you were asked to do and what you did (default: you write it from the conversation)")
                    .with_required(false),
                PromptArgument::new("focus")
                    .with_title("Focus")
                    .with_description("Areas the reviewer should look at most closely, comma-separated")
                    .with_required(false),
            ]),
        )
        .with_title("Review loop until approved"),
    ]
}

/// The prompt `name` filled in with `arguments`; an unknown prompt or
/// argument is an invalid-params error naming what exists.
pub fn get(
    name: &str,
    arguments: Option<&serde_json::Map<String, serde_json::Value>>,
) -> Result<GetPromptResult, ErrorData> {
    let known: &[&str] = match name {
        ADDRESS_FEEDBACK => &["file"],
        REVIEW_LOOP => &["summary", "focus"],
        other => {
            return Err(ErrorData::invalid_params(
                format!("no prompt {other:?}; Parley offers {ADDRESS_FEEDBACK} and {REVIEW_LOOP}"),
                None,
            ));
        }
    };
    let mut given = BTreeMap::new();
    for (key, value) in arguments.into_iter().flatten() {
        if !known.contains(&key.as_str()) {
            return Err(ErrorData::invalid_params(
                format!("prompt {name} has no argument {key:?}; its arguments are {}", known.join(", ")),
                None,
            ));
        }
        let text = match value {
            serde_json::Value::String(s) => s.trim().to_owned(),
            serde_json::Value::Null => String::new(),
            other => other.to_string(),
        };
        if !text.is_empty() {
            given.insert(key.as_str(), text);
        }
    }
    let (description, text) = match name {
        ADDRESS_FEEDBACK => ("Address open feedback", address_feedback(given.get("file").map(String::as_str))),
        _ => (
            "Review loop until approved",
            review_loop(given.get("summary").map(String::as_str), given.get("focus").map(String::as_str)),
        ),
    };
    Ok(GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)]).with_description(description))
}

fn address_feedback(file: Option<&str>) -> String {
    let (scope, call) = match file {
        Some(file) => (format!(" on {file}"), format!("get_feedback with filePath \"{file}\"")),
        None => (String::new(), "get_feedback".to_owned()),
    };
    format!(
        "\
Address the open feedback threads humans left on this workspace{scope}, using Parley's tools.

1. Call {call} to read the open threads: each has its file, 1-based lines, the text it is on (selectedText), its comments and a state.
2. For each thread, in the order listed:
   - Read the code it is on. If the state is `modified`, the code changed since the comment: compare selectedText with originalQuote. If it is `orphaned`, `stale` (the file changed and the text could not be found again within Parley's bound on that work) or `unreadable` (the file is not UTF-8 text or cannot be read), the range shown may not be where the comment belongs: judge from originalQuote and the comments whether it still applies.
   - If the request is clear, make the change. If it is unclear, or you disagree, ask with reply_feedback instead of guessing, and leave the thread open.
   - When the change is made, reply_feedback saying briefly what you changed (files and lines), then resolve_feedback.
3. Call {call} again at the end: humans may have commented while you worked. Address anything new the same way.
4. Finish with a short summary: what you changed, and which threads wait for an answer from a human."
    )
}

fn review_loop(summary: Option<&str>, focus: Option<&str>) -> String {
    let summary = match summary {
        Some(summary) => format!("with this summary: {summary}"),
        None => {
            "with a clear summary (what you were asked to do, what you did, design decisions and trade-offs)".into()
        }
    };
    let focus = match focus {
        Some(focus) => format!(", focus_areas from: {focus},"),
        None => String::new(),
    };
    format!(
        "\
Run Parley's review loop on your current changes until the reviewer approves them.

1. Before the first round, call get_feedback: address open human threads first (fix, reply_feedback, resolve_feedback).
2. Call request_review {summary}, the design docs the work must follow as relevant_docs{focus} and no previous_review_id.
3. If the result has status \"pending\", the reviewer is still working: call await_review with its review_id, again for as long as it answers pending. Do not start another round meanwhile.
4. Read the finished round and act on its verdict. Findings that name a file and line are also feedback threads: fix the code, then reply_feedback saying what you did and resolve_feedback; when you disagree with a finding, say why with reply_feedback and leave it open. Call get_feedback too: humans may have commented meanwhile.
5. Call request_review again with previous_review_id set to the review_id and a summary of what changed since the last round. Repeat from step 3.
6. When the verdict is lgtm (or lgtm_with_suggestions you have handled), call mark_review_complete with final_status \"approved\". If the reviewer keeps raising a point you cannot settle, stop and ask the human rather than looping."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_of(result: &GetPromptResult) -> String {
        let message = serde_json::to_value(&result.messages[0]).expect("messages serialize");
        message["content"]["text"].as_str().expect("a text message").to_owned()
    }

    fn args(value: serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
        value.as_object().expect("an object").clone()
    }

    #[test]
    fn every_listed_prompt_can_be_got_without_arguments() {
        for prompt in list() {
            let result = get(&prompt.name, None).expect("a listed prompt");
            assert_eq!(result.messages.len(), 1, "{}", prompt.name);
            assert!(prompt.title.is_some() && prompt.description.is_some(), "{}", prompt.name);
        }
    }

    #[test]
    fn arguments_fill_the_text_in() {
        let file = get(ADDRESS_FEEDBACK, Some(&args(serde_json::json!({ "file": "src/lib.rs" })))).expect("got");
        assert!(text_of(&file).contains("get_feedback with filePath \"src/lib.rs\""), "{}", text_of(&file));
        let summary = "Added retries to the fetcher";
        let looped =
            get(REVIEW_LOOP, Some(&args(serde_json::json!({ "summary": summary, "focus": "timeouts" })))).expect("got");
        let text = text_of(&looped);
        assert!(text.contains(summary) && text.contains("focus_areas from: timeouts"), "{text}");
        assert!(text.contains("await_review") && text.contains("mark_review_complete"), "{text}");
    }

    #[test]
    fn unknown_prompts_and_arguments_name_what_exists() {
        let unknown = get("fix-everything", None).expect_err("unknown prompt");
        assert!(unknown.message.contains("address-feedback and review-loop"), "{}", unknown.message);
        let typo =
            get(ADDRESS_FEEDBACK, Some(&args(serde_json::json!({ "path": "x" })))).expect_err("unknown argument");
        assert!(typo.message.contains("its arguments are file"), "{}", typo.message);
    }
}
