//! The decoders that move parts of an owned value (`HintChanges::from_value`,
//! `ToolHintEntry::from_value`, `Tool::from_value`, `CallToolParams::from_value`) accept and refuse exactly what the derived
//! `Deserialize` implementations do, and decode to the same values.

use mcpl_protocol::mcp::{CallToolParams, Tool};
use mcpl_protocol::rfc014::{HintChanges, ToolHintEntry};
use proptest::prelude::*;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use std::fmt::Debug;

/// Member names of every level, so generated objects often hit known members.
const KEYS: &[&str] = &[
    "rev",
    "tools",
    "toolsets",
    "suggest",
    "name",
    "instance",
    "presence",
    "visible",
    "definition",
    "title",
    "description",
    "inputSchema",
    "outputSchema",
    "annotations",
    "_meta",
    "arguments",
    "toolset",
    "state",
    "action",
    "x",
];

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        (0u64..5).prop_map(Value::from),
        Just(json!(-1)),
        Just(json!(1.5)),
        Just(json!(u64::MAX)),
        prop::sample::select(vec![
            "dynamic", "static", "open", "closed", "g1", "play", ""
        ])
        .prop_map(Value::from),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((prop::sample::select(KEYS), inner), 0..7).prop_map(|kv| {
                Value::Object(kv.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
            }),
        ]
    })
}

/// A tool definition that is often well formed.
fn tool() -> impl Strategy<Value = Value> {
    (
        prop::option::of(prop_oneof![Just(json!("play")), leaf()]),
        prop::option::of(value()),
        prop::option::of(value()),
        prop::option::of(prop_oneof![Just(json!({"mcpl/toolset": "go"})), leaf()]),
        prop::option::of(value()),
    )
        .prop_map(|(name, description, schema, meta, extra)| {
            let mut m = Map::new();
            for (k, v) in [
                ("name", name),
                ("description", description),
                ("inputSchema", schema),
                ("_meta", meta),
                ("x", extra),
            ] {
                if let Some(v) = v {
                    m.insert(k.to_owned(), v);
                }
            }
            Value::Object(m)
        })
}

/// A tool hint entry that is often well formed.
fn entry() -> impl Strategy<Value = Value> {
    (
        prop::option::of(prop_oneof![Just(json!("play")), leaf()]),
        prop::option::of(leaf()),
        prop::option::of(leaf()),
        prop::option::of(leaf()),
        prop::option::of(prop_oneof![tool(), leaf()]),
        prop::option::of(value()),
    )
        .prop_map(|(name, instance, presence, visible, definition, extra)| {
            let mut m = Map::new();
            for (k, v) in [
                ("name", name),
                ("instance", instance),
                ("presence", presence),
                ("visible", visible),
                ("definition", definition),
                ("future", extra),
            ] {
                if let Some(v) = v {
                    m.insert(k.to_owned(), v);
                }
            }
            Value::Object(m)
        })
}

/// A hint batch that is often well formed.
fn batch() -> impl Strategy<Value = Value> {
    (
        prop::option::of(leaf()),
        prop::option::of(prop_oneof![
            prop::collection::vec(entry(), 0..4).prop_map(Value::Array),
            leaf()
        ]),
        prop::option::of(value()),
        prop::option::of(value()),
        prop::option::of(value()),
    )
        .prop_map(|(rev, tools, toolsets, suggest, extra)| {
            let mut m = Map::new();
            for (k, v) in [
                ("rev", rev),
                ("tools", tools),
                ("toolsets", toolsets),
                ("suggest", suggest),
                ("future", extra),
            ] {
                if let Some(v) = v {
                    m.insert(k.to_owned(), v);
                }
            }
            Value::Object(m)
        })
}

/// `tools/call` params: a name or not, arguments and `_meta` of every kind, unknown members.
fn call_params() -> impl Strategy<Value = Value> {
    (
        prop::option::of(prop_oneof![Just(json!("play")), leaf()]),
        prop::option::of(prop_oneof![Just(json!({"move": "E5"})), value()]),
        prop::option::of(prop_oneof![Just(json!({"mcpl/instance": "g1"})), value()]),
        prop::option::of(value()),
    )
        .prop_map(|(name, arguments, meta, extra)| {
            let mut m = Map::new();
            for (k, v) in [
                ("name", name),
                ("arguments", arguments),
                ("_meta", meta),
                ("x", extra),
            ] {
                if let Some(v) = v {
                    m.insert(k.to_owned(), v);
                }
            }
            Value::Object(m)
        })
}

fn same<T: DeserializeOwned + PartialEq + Debug>(
    input: &Value,
    ours: impl Fn(Value) -> Result<T, serde_json::Error>,
) -> Result<(), TestCaseError> {
    let derived = serde_json::from_value::<T>(input.clone());
    let moved = ours(input.clone());
    match (&moved, &derived) {
        (Ok(a), Ok(b)) => prop_assert_eq!(a, b, "input {}", input),
        (Err(_), Err(_)) => {}
        _ => prop_assert!(false, "input {input}: moved {moved:?}, derived {derived:?}"),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn hint_batches_decode_as_derived(input in prop_oneof![batch(), value()]) {
        same(&input, HintChanges::from_value)?;
    }

    #[test]
    fn hint_entries_decode_as_derived(input in prop_oneof![entry(), value()]) {
        same(&input, ToolHintEntry::from_value)?;
    }

    #[test]
    fn tools_decode_as_derived(input in prop_oneof![tool(), value()]) {
        same(&input, Tool::from_value)?;
    }

    #[test]
    fn call_params_decode_as_derived(input in prop_oneof![call_params(), value()]) {
        same(&input, CallToolParams::from_value)?;
    }
}

/// The batch row 2 of `mcpl bench` feeds: a definition with an enum of legal moves decodes
/// whole, with unknown members kept at every level.
#[test]
fn s6_a_definition_batch_decodes_with_its_schema_moved_whole() {
    let wire = json!({"rev": 7, "future": 1, "tools": [
        {"name": "play", "instance": "g1", "visible": true, "y": [2],
         "definition": {"name": "play", "description": "Play a move.", "z": null,
            "inputSchema": {"type": "object", "required": ["move"],
                "properties": {"move": {"type": "string", "enum": ["A1", "B2"]}}}}},
        {"name": "pass", "instance": "g1", "visible": false}]});
    let h = HintChanges::from_value(wire.clone()).expect("decodes");
    assert_eq!(
        h,
        serde_json::from_value::<HintChanges>(wire.clone()).unwrap()
    );
    let tools = h.tools.as_ref().expect("tools");
    let def = tools[0].definition.as_ref().expect("definition");
    assert_eq!(
        def.input_schema["properties"]["move"]["enum"],
        json!(["A1", "B2"])
    );
    assert_eq!(def.extra.get("z"), Some(&Value::Null));
    assert_eq!(tools[0].extra.get("y"), Some(&json!([2])));
    assert_eq!(h.extra.get("future"), Some(&json!(1)));
    assert_eq!(serde_json::to_value(&h).unwrap(), wire);
}

/// A batch without a rev, or a tool without a name, is refused.
#[test]
fn s6_a_batch_without_rev_or_an_entry_without_name_is_refused() {
    assert!(HintChanges::from_value(json!({"tools": []})).is_err());
    assert!(HintChanges::from_value(json!({"rev": 1, "tools": [{"visible": true}]})).is_err());
    assert!(HintChanges::from_value(json!([1])).is_err());
    assert!(Tool::from_value(json!({"description": "no name"})).is_err());
}
