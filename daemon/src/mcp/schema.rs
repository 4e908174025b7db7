//! Tool schemas that every JSON Schema validator reads without complaint:
//! schemars marks integers with `format` values such as `uint32` that are not
//! JSON Schema formats, and validators in strict mode (the TypeScript SDK's
//! ajv among them) print a warning for each one on every `tools/list`.

use serde_json::{Map, Value};

/// The `format` values JSON Schema 2020-12 defines; any other is dropped.
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Removes non-standard `format` keywords from a schema, at every depth.
/// The bounds that matter stay: schemars writes `minimum: 0` for unsigned
/// integers beside the format it invents.
pub fn make_portable(schema: &mut Map<String, Value>) {
    if schema.get("format").and_then(Value::as_str).is_some_and(|f| !STANDARD_FORMATS.contains(&f)) {
        schema.remove("format");
    }
    for (key, value) in schema.iter_mut() {
        // Under `properties` and `$defs` the keys are names, not keywords,
        // so a property called "format" is left alone.
        let names_schemas = matches!(key.as_str(), "properties" | "$defs" | "definitions" | "patternProperties");
        match value {
            Value::Object(inner) if names_schemas => {
                for sub in inner.values_mut() {
                    if let Value::Object(sub) = sub {
                        make_portable(sub);
                    }
                }
            }
            Value::Object(inner) => make_portable(inner),
            Value::Array(items) => {
                for item in items {
                    if let Value::Object(item) = item {
                        make_portable(item);
                    }
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn portable(schema: Value) -> Value {
        let Value::Object(mut map) = schema else { panic!("an object") };
        make_portable(&mut map);
        Value::Object(map)
    }

    #[test]
    fn invented_formats_go_and_standard_ones_stay() {
        let schema = json!({
            "type": "object",
            "properties": {
                "line": {"type": "integer", "format": "uint32", "minimum": 0},
                "at": {"type": "string", "format": "date-time"},
                "format": {"type": "string"},
                "ranges": {"type": "array", "items": {"$ref": "#/$defs/Range"}},
                "maybe": {"anyOf": [{"type": "integer", "format": "int64"}, {"type": "null"}]}
            },
            "$defs": {"Range": {"type": "object", "properties": {"end": {"type": "integer", "format": "uint"}}}}
        });
        assert_eq!(
            portable(schema),
            json!({
                "type": "object",
                "properties": {
                    "line": {"type": "integer", "minimum": 0},
                    "at": {"type": "string", "format": "date-time"},
                    "format": {"type": "string"},
                    "ranges": {"type": "array", "items": {"$ref": "#/$defs/Range"}},
                    "maybe": {"anyOf": [{"type": "integer"}, {"type": "null"}]}
                },
                "$defs": {"Range": {"type": "object", "properties": {"end": {"type": "integer"}}}}
            })
        );
    }
}
