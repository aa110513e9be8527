//! The four meta-tools' names and definitions as listed to the model: constant, so the
//! list never changes. A leaf: the presenter and its parts read it.

use mcpl_protocol::mcp::Tool;
use serde_json::{Value, json};

/// The four meta-tools' names (DESIGN.md): constant, and valid for every model API.
pub const META_OPEN: &str = "toolsets_open";
/// See [`META_OPEN`].
pub const META_LOOK: &str = "toolsets_look";
/// See [`META_OPEN`].
pub const META_ACT: &str = "toolsets_act";
/// See [`META_OPEN`].
pub const META_CLOSE: &str = "toolsets_close";

fn string_prop(desc: &str) -> Value {
    json!({"type": "string", "description": desc})
}

/// The four meta-tools, as listed to the model (constant, so the list never changes).
pub(super) fn meta_tools() -> Vec<Tool> {
    let server = string_prop("The server, when a name is on several servers.");
    let make = |name: &str, desc: &str, props: Value, required: Value| {
        let mut t = Tool::new(name);
        t.description = Some(json!(desc));
        t.input_schema = json!({"type": "object", "properties": props, "required": required});
        t
    };
    vec![
        make(
            META_OPEN,
            "Open a toolset (or a new instance of one) so its tools can be used with toolsets_act.",
            json!({"server": server, "toolset": string_prop("The toolset."),
                   "instance": string_prop("A name for the instance (instanced toolsets)."),
                   "options": {"type": "object", "description": "Options for the toolset."}}),
            json!(["toolset"]),
        ),
        make(
            META_LOOK,
            "Show open toolsets and available tools, or one tool's definition; with query, search every toolset and tool, open or closed, by name and description.",
            json!({"server": server, "toolset": string_prop("Only this toolset."),
                   "instance": string_prop("Only this instance."), "tool": string_prop("One tool."),
                   "query": string_prop("Words to search for; the best matches come back with the call that opens each.")}),
            json!([]),
        ),
        make(
            META_ACT,
            "Call a tool of an open toolset.",
            json!({"server": server, "tool": string_prop("The tool."),
                   "instance": string_prop("The instance, when several are open."),
                   "args": {"type": "object", "description": "The tool's arguments."}}),
            json!(["tool"]),
        ),
        make(
            META_CLOSE,
            "Close a toolset or one of its instances.",
            json!({"server": server, "toolset": string_prop("The toolset."),
                   "instance": string_prop("The instance.")}),
            json!(["toolset"]),
        ),
    ]
}
