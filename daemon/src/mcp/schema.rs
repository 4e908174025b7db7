//! Tool schemas that every JSON Schema validator reads without complaint:
//! schemars marks integers with `format` values such as `uint32` that are not
//! JSON Schema formats, and validators in strict mode (the TypeScript SDK's
//! ajv among them) print a warning for each one on every `tools/list`.
//! Also keeps output schemas small: every agent pays for `tools/list` in
//! tokens at every start, and output schemas were three quarters of it.

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

/// Drops the root's `$schema`: MCP says tool schemas are JSON Schema
/// 2020-12 when they do not say otherwise, so naming it on every tool only
/// lengthens `tools/list`.
pub fn drop_dialect(schema: &mut Map<String, Value>) {
    schema.remove("$schema");
}

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

/// Keywords an output schema does without: hosts validate results with
/// output schemas, and the model learns what a result means from the tool's
/// description and the result itself, so the field prose, titles and
/// serde defaults only cost tokens.
/// (`minimum` is schemars' note that an integer is unsigned.)
const OUTPUT_ONLY_PROSE: &[&str] = &["description", "title", "default", "$schema", "examples", "minimum"];

/// Definitions an output schema shows only as an object: the review a round
/// returns (seed 004's format, which the README documents field by field) is
/// most of three tools' schemas, and spelled out it told an agent nothing the
/// review itself does not. Its comments (`ReviewComment`), which agents act
/// on, stay spelled out where a result has them at its top level. So are
/// `get_diagnostics`' files and problems (the README lists their fields).
const OPAQUE_DEFINITIONS: &[&str] = &[
    "StructuredReview",
    "DesignCompliance",
    "MissingRequirement",
    "SummaryCounts",
    "TestResults",
    "DiagnosedFile",
    "ProblemResult",
];

/// Shrinks an output schema without changing what it accepts for the fields
/// agents use: drops [`OUTPUT_ONLY_PROSE`] at every depth (never a property
/// of that name), shows [`OPAQUE_DEFINITIONS`] as plain objects, and drops
/// the definitions nothing refers to any more.
pub fn compact_output(schema: &mut Map<String, Value>) {
    strip_prose(schema);
    for name in OPAQUE_DEFINITIONS {
        let reference = format!("#/$defs/{name}");
        replace_refs(schema, &reference);
    }
    prune_definitions(schema);
}

fn strip_prose(schema: &mut Map<String, Value>) {
    schema.retain(|key, _| !OUTPUT_ONLY_PROSE.contains(&key.as_str()));
    for (key, value) in schema.iter_mut() {
        let names_schemas = matches!(key.as_str(), "properties" | "$defs" | "definitions" | "patternProperties");
        match value {
            Value::Object(inner) if names_schemas => {
                for sub in inner.values_mut() {
                    if let Value::Object(sub) = sub {
                        strip_prose(sub);
                    }
                }
            }
            Value::Object(inner) => strip_prose(inner),
            Value::Array(items) => items.iter_mut().filter_map(Value::as_object_mut).for_each(strip_prose),
            _ => {}
        }
    }
}

/// Replaces every `{"$ref": reference}` (with siblings or not) by a plain
/// object schema.
fn replace_refs(schema: &mut Map<String, Value>, reference: &str) {
    if schema.get("$ref").and_then(Value::as_str) == Some(reference) {
        schema.remove("$ref");
        schema.insert("type".into(), Value::String("object".into()));
    }
    for value in schema.values_mut() {
        match value {
            Value::Object(inner) => replace_refs(inner, reference),
            Value::Array(items) => {
                items.iter_mut().filter_map(Value::as_object_mut).for_each(|item| replace_refs(item, reference))
            }
            _ => {}
        }
    }
}

/// Removes the `$defs` entries no `$ref` reaches from the schema's root.
fn prune_definitions(schema: &mut Map<String, Value>) {
    let Some(Value::Object(defs)) = schema.remove("$defs") else { return };
    let mut reached = std::collections::BTreeSet::new();
    let mut queue = Vec::new();
    collect_refs(&Value::Object(schema.clone()), &mut queue);
    while let Some(name) = queue.pop() {
        if reached.insert(name.clone())
            && let Some(def) = defs.get(&name)
        {
            collect_refs(def, &mut queue);
        }
    }
    let kept: Map<String, Value> = defs.into_iter().filter(|(name, _)| reached.contains(name)).collect();
    if !kept.is_empty() {
        schema.insert("$defs".into(), Value::Object(kept));
    }
}

fn collect_refs(value: &Value, found: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            if let Some(name) = map.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/$defs/")) {
                found.push(name.to_owned());
            }
            map.values().for_each(|v| collect_refs(v, found));
        }
        Value::Array(items) => items.iter().for_each(|v| collect_refs(v, found)),
        _ => {}
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

    #[test]
    fn output_schemas_lose_their_prose_and_unused_definitions_but_no_field() {
        let mut schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "Result",
            "type": "object",
            "properties": {
                "description": {"type": "string", "description": "a field named description stays"},
                "review": {"$ref": "#/$defs/StructuredReview", "description": "the review"},
                "files": {"type": "array", "default": [], "items": {"$ref": "#/$defs/File"}}
            },
            "required": ["review"],
            "$defs": {
                "StructuredReview": {"type": "object", "properties": {"c": {"$ref": "#/$defs/Comment"}}},
                "Comment": {"type": "object"},
                "File": {"type": "object", "title": "File", "properties": {"path": {"type": "string"}}}
            }
        });
        let Value::Object(map) = &mut schema else { panic!("an object") };
        compact_output(map);
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "properties": {
                    "description": {"type": "string"},
                    "review": {"type": "object"},
                    "files": {"type": "array", "items": {"$ref": "#/$defs/File"}}
                },
                "required": ["review"],
                "$defs": {"File": {"type": "object", "properties": {"path": {"type": "string"}}}}
            })
        );
    }
}
