//! Wire method names, one constant each, so no method name is spelled twice in the project.

// MCP
/// `initialize` (Client → Server, Request).
pub const INITIALIZE: &str = "initialize";
/// `notifications/initialized` (Client → Server, Notification).
pub const INITIALIZED: &str = "notifications/initialized";
/// `ping` (either direction, Request).
pub const PING: &str = "ping";
/// `tools/list` (Client → Server, Request).
pub const TOOLS_LIST: &str = "tools/list";
/// `tools/call` (Client → Server, Request).
pub const TOOLS_CALL: &str = "tools/call";
/// `notifications/cancelled` (either direction, Notification).
pub const CANCELLED: &str = "notifications/cancelled";
/// `notifications/tools/list_changed` (Server → Client, Notification).
pub const TOOLS_LIST_CHANGED: &str = "notifications/tools/list_changed";
/// `notifications/message` (Server → Client, Notification): a log message.
pub const MESSAGE: &str = "notifications/message";

// MCPL base
/// `featureSets/update` (Host → Server, Request for any grant change).
pub const FEATURE_SETS_UPDATE: &str = "featureSets/update";
/// `push/event` (Server → Host, Request).
pub const PUSH_EVENT: &str = "push/event";
/// `mcpl/manifest` (Host → Server, Request).
pub const MANIFEST: &str = "mcpl/manifest";
/// `mcpl/manifestChanged` (Server → Host, Notification).
pub const MANIFEST_CHANGED: &str = "mcpl/manifestChanged";

// RFC-014
/// `toolsets/open` (Host → Server, Request).
pub const TOOLSETS_OPEN: &str = "toolsets/open";
/// `toolsets/close` (Host → Server, Request).
pub const TOOLSETS_CLOSE: &str = "toolsets/close";
/// `toolsets/list` (Host → Server, Request).
pub const TOOLSETS_LIST: &str = "toolsets/list";
/// `tools/hints` (Server → Host, Notification): hint changes with nothing to explain them.
pub const TOOLS_HINTS: &str = "tools/hints";
