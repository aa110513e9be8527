//! §11's compatibility tools for hosts without `toolHints`: `toolset_open`,
//! `toolset_choose` and `toolset_close`, with a current instance per toolset.

use super::Session;
use super::catalog::{TOOLSET_CHOOSE, TOOLSET_OPEN};
use super::data::Begin;
use super::toolsets::{adoption_text, list_or_none};
use crate::store::OpenKey;
use mcpl_protocol::jsonrpc::RequestId;
use mcpl_protocol::mcp::CallToolResult;
use mcpl_protocol::rfc014::{InstanceName, ToolsetName};
use serde_json::{Map, Value};

impl Session {
    /// §11: `toolset_open` makes what it opens or adopts the current instance.
    pub(super) fn make_current(&mut self, key: &OpenKey) {
        if let Some(i) = &key.instance {
            self.current.insert(key.toolset.clone(), i.clone());
        }
    }

    /// §11's `toolset_open`, `toolset_choose` and `toolset_close`, answered as tool results.
    pub(super) fn compat_call(&mut self, id: RequestId, tool: &str, args: &Map<String, Value>) {
        let s = |k: &str| args.get(k).and_then(Value::as_str);
        let Some(toolset) = s("toolset") else {
            return self.tool_error(id, "argument `toolset`: a toolset name is required");
        };
        match tool {
            TOOLSET_OPEN => {
                let (toolset, instance, options) =
                    match self.check_open(toolset, s("instance"), args.get("options")) {
                        Ok(v) => v,
                        Err(e) => return self.tool_error(id, &e),
                    };
                match self.begin_open(toolset, instance, &options) {
                    Begin::Adopted {
                        key,
                        options: in_force,
                        ..
                    } => {
                        self.make_current(&key);
                        let text = adoption_text(&key, &options, &in_force);
                        self.respond_tool(id, CallToolResult::text(text));
                    }
                    Begin::Busy(key) => self.tool_error(
                        id,
                        &format!(
                            "{} is still being opened; retry in a moment",
                            key.describe()
                        ),
                    ),
                    Begin::Started(key) => self.start_open(id, key, options, true, None),
                    Begin::Full { key, open } => self.tool_error(id, &Begin::full_text(&key, open)),
                    Begin::Unavailable(why) => self.tool_error(id, &why),
                }
            }
            TOOLSET_CHOOSE => {
                let Ok(name) = ToolsetName::parse(toolset) else {
                    return self.tool_error(id, &format!("unknown toolset `{toolset}`"));
                };
                let open = self.open_instances(&name);
                match s("instance") {
                    Some(i) if open.iter().any(|o| o == i) => {
                        let i = InstanceName::parse(i).expect("open names are valid");
                        self.current.insert(name.clone(), i.clone());
                        let text = format!("instance `{i}` of `{name}` is now current");
                        self.respond_tool(id, CallToolResult::text(text));
                    }
                    other => {
                        let text = format!(
                            "instance `{}` of `{toolset}` is not open; open instances: {}",
                            other.unwrap_or(""),
                            list_or_none(&open)
                        );
                        self.tool_error(id, &text);
                    }
                }
            }
            _ => {
                let key = match self.check_close(toolset, s("instance"), true) {
                    Ok(k) => k,
                    Err(e) => return self.tool_error(id, &e),
                };
                match self.begin_close(&key) {
                    Ok(options) => self.start_close(id, key, options, true),
                    Err(()) => {
                        let text = format!("{} is not open; nothing was closed", key.describe());
                        self.respond_tool(id, CallToolResult::text(text));
                    }
                }
            }
        }
    }
}
