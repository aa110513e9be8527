//! RFC-014 (Tool Presence, Toolsets and Surfaces) wire types.
//!
//! Pure serde, no logic beyond defaults and the name grammar. Every type a peer may extend
//! keeps unknown members in `extra`.
//!
//! **Names.** Toolset and instance names travel as plain `String`s in the wire types, so that
//! one bad name never turns a whole message into a decode failure: a server answers a bad
//! name in `toolsets/open` with `-32602` naming the rule, and a host skips one bad hint entry.
//! [`ToolsetName`] and [`InstanceName`] are the checked forms; build them with `parse` or
//! `TryFrom`, or through the `toolset_name()` / `instance_name()` helpers on the params.
//!
//! - [`name`]: the grammar, [`ToolsetName`], [`InstanceName`], [`NameError`].
//! - [`meta`]: [`Rev`], [`Presence`], the `_meta` keys and [`ToolHintsMeta`].
//! - [`manifest`]: [`ToolsetDecl`] and the manifest members of the domain `toolsets`.
//! - [`hints`]: [`HintChanges`] and its entries; the `push/event` members.
//! - [`toolsets`]: `toolsets/open|close|list` params and results, [`EndedRecord`].
//! - `on_mcp`: RFC-014's `_meta` members read and written on MCP's own types (`Tool`,
//!   `ToolsListResult`, `CallToolParams`, `CallToolResult`).
//! - [`method`]: the typed methods ([`ToolsetsOpen`], [`ToolsetsClose`], [`ToolsetsList`],
//!   [`ToolsHints`]).

pub mod hints;
pub mod manifest;
pub mod meta;
pub mod method;
pub mod name;
mod on_mcp;
pub mod toolsets;

pub use hints::{
    HintChanges, PushHintMembers, SuggestAction, SuggestEntry, ToolHintEntry, ToolsetChange,
    ToolsetState,
};
pub use manifest::{
    ManifestToolsetMembers, SURFACE_KEY, Surface, TOOL_HINTS_KEY, TOOLSETS_DOMAIN, TOOLSETS_KEY,
    ToolsetDecl, ToolsetDefault,
};
pub use meta::{
    HINTS_KEY, INSTANCE_KEY, PRESENCE_KEY, Presence, REV_KEY, Rev, TOOLSET_KEY, ToolHintsMeta,
    VISIBLE_KEY,
};
pub use method::{ToolsHints, ToolsetsClose, ToolsetsList, ToolsetsOpen};
pub use name::{InstanceName, NAME_MAX_LEN, NAME_RULE, NameError, ToolsetName, check_name};
pub use toolsets::{
    CloseParams, CloseResult, EndedRecord, HintsMeta, ListMeta, ListParams, ListResult, OpenEntry,
    OpenParams, OpenResult,
};
