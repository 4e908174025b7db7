//! A host's hook input: the JSON object on stdin, read field by field, each
//! missing or mistyped field a [`HookError::BadInput`] naming it.

use std::collections::HashMap;
use std::path::PathBuf;

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::HookError;

/// The JSON object a host sent.
#[derive(Debug)]
pub struct HookInput {
    text: String,
    fields: Map<String, Value>,
}

impl HookInput {
    pub fn parse(text: &str) -> Result<HookInput, HookError> {
        if text.trim().is_empty() {
            return Err(HookError::BadInput("stdin is empty; the host sends its hook input as JSON there".into()));
        }
        let value: Value = serde_json::from_str(text).map_err(|e| {
            HookError::BadInput(format!("stdin is not JSON ({e}); the host sends its hook input as JSON"))
        })?;
        let Value::Object(fields) = value else {
            return Err(HookError::BadInput("stdin is JSON but not an object; the host sends an object".into()));
        };
        Ok(HookInput { text: text.to_owned(), fields })
    }

    /// A field that must be a non-empty string.
    pub fn text(&self, name: &str) -> Result<&str, HookError> {
        match self.fields.get(name) {
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(s),
            Some(Value::String(_)) => Err(missing(name, "is empty")),
            Some(other) => Err(missing(name, &format!("is {}, not a string", kind(other)))),
            None => Err(missing(name, "is missing")),
        }
    }

    /// A field that may be absent or null, else a string.
    pub fn optional_text(&self, name: &str) -> Result<Option<&str>, HookError> {
        match self.fields.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(missing(name, &format!("is {}, not a string", kind(other)))),
        }
    }

    /// A field that may be absent (false), else a boolean.
    pub fn flag(&self, name: &str) -> Result<bool, HookError> {
        match self.fields.get(name) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(other) => Err(missing(name, &format!("is {}, not true or false", kind(other)))),
        }
    }

    /// A field that must be an object.
    pub fn object(&self, name: &str) -> Result<&Map<String, Value>, HookError> {
        match self.fields.get(name) {
            Some(Value::Object(object)) => Ok(object),
            Some(other) => Err(missing(name, &format!("is {}, not an object", kind(other)))),
            None => Err(missing(name, "is missing")),
        }
    }

    /// A field's JSON exactly as the host wrote it (every key, in its order).
    pub fn raw(&self, name: &str) -> Result<Box<RawValue>, HookError> {
        let mut all: HashMap<String, Box<RawValue>> = serde_json::from_str(&self.text)
            .map_err(|e| HookError::BadInput(format!("stdin could not be read again: {e}")))?;
        all.remove(name).ok_or_else(|| missing(name, "is missing"))
    }

    /// The event name, which must be `event`: a hook registered for another
    /// event would answer in a shape the host does not read.
    pub fn expect_event(&self, event: &str) -> Result<(), HookError> {
        let got = self.text("hook_event_name")?;
        if got != event {
            return Err(HookError::BadInput(format!(
                "hook_event_name is {got:?}, but this hook answers {event}: register it for {event} \
                 (`parley hooks install` writes the right entries)"
            )));
        }
        Ok(())
    }

    /// `cwd`, which must be an absolute folder.
    pub fn cwd(&self) -> Result<PathBuf, HookError> {
        let cwd = PathBuf::from(self.text("cwd")?);
        if !cwd.is_absolute() {
            return Err(missing("cwd", "is not an absolute path"));
        }
        Ok(cwd)
    }
}

fn missing(name: &str, why: &str) -> HookError {
    HookError::BadInput(format!("the field {name} {why}"))
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_read_with_errors_that_name_them() {
        let input = HookInput::parse(r#"{"a":"x","n":1,"o":{"z":1,"a":2},"b":true,"e":""}"#).expect("an object");
        assert_eq!(input.text("a").expect("a string"), "x");
        assert!(input.text("n").expect_err("a number").to_string().contains("the field n is a number"));
        assert!(input.text("e").expect_err("empty").to_string().contains("the field e is empty"));
        assert!(input.text("gone").expect_err("missing").to_string().contains("the field gone is missing"));
        assert_eq!(input.raw("o").expect("raw").get(), r#"{"z":1,"a":2}"#, "kept as written");
        assert!(input.flag("b").expect("a flag"));
        assert!(!input.flag("gone").expect("absent is false"));
        for bad in ["", "not json", "[1]", "\"text\""] {
            assert!(matches!(HookInput::parse(bad), Err(HookError::BadInput(_))), "{bad:?}");
        }
    }
}
