//! The subset of the Model Context Protocol this project speaks: `initialize`, `ping`,
//! `tools/list`, `tools/call`, cancellation, `tools/list_changed` and log messages, with the
//! `_meta` members RFC-014 adds (§4.1, §4.3, §6).
//!
//! Every type keeps members it does not know in `extra`. Each method has a marker type that
//! implements [`RequestMethod`] or [`NotificationMethod`], so a peer reads an answer as the
//! type of the request it answers.
//!
//! - [`initialize`]: protocol versions and their negotiation, capabilities, implementation
//!   info.
//! - [`tool`]: the tool definition and its RFC-014 `_meta` helpers.
//! - [`tools`]: `tools/list` and `tools/call` params and results.
//! - [`content`]: content blocks.
//! - [`notifications`]: `ping`, cancellation, `list_changed` and log messages.

pub mod content;
pub mod initialize;
pub mod notifications;
pub mod tool;
pub mod tools;

pub use content::{ContentBlock, TextContent};
pub use initialize::{
    ClientCapabilities, Implementation, InitializeParams, InitializeResult,
    LATEST_PROTOCOL_VERSION, MCPL_EXPERIMENTAL_KEY, PROTOCOL_VERSION_2024_11_05,
    PROTOCOL_VERSION_2025_03_26, PROTOCOL_VERSION_2025_06_18, PROTOCOL_VERSION_2025_11_25,
    SUPPORTED_PROTOCOL_VERSIONS, ServerCapabilities, ToolsCapability, negotiate_protocol_version,
    negotiate_supported_version,
};
pub use notifications::{CancelledParams, EmptyObject, LoggingLevel, LoggingMessageParams};
pub use tool::Tool;
pub use tools::{CallToolParams, CallToolResult, MetaError, ToolsListParams, ToolsListResult};

use crate::method::{NotificationMethod, RequestMethod};
use crate::methods;

/// `initialize` (Client → Server, Request).
#[derive(Debug, Clone, Copy)]
pub enum Initialize {}

impl RequestMethod for Initialize {
    const METHOD: &'static str = methods::INITIALIZE;
    type Params = InitializeParams;
    type Result = InitializeResult;
}

/// `notifications/initialized` (Client → Server, Notification).
#[derive(Debug, Clone, Copy)]
pub enum Initialized {}

impl NotificationMethod for Initialized {
    const METHOD: &'static str = methods::INITIALIZED;
    type Params = EmptyObject;
}

/// `ping` (either direction, Request); the answer is an empty result.
#[derive(Debug, Clone, Copy)]
pub enum Ping {}

impl RequestMethod for Ping {
    const METHOD: &'static str = methods::PING;
    type Params = EmptyObject;
    type Result = EmptyObject;
}

/// `tools/list` (Client → Server, Request).
#[derive(Debug, Clone, Copy)]
pub enum ToolsList {}

impl RequestMethod for ToolsList {
    const METHOD: &'static str = methods::TOOLS_LIST;
    type Params = ToolsListParams;
    type Result = ToolsListResult;
}

/// `tools/call` (Client → Server, Request).
#[derive(Debug, Clone, Copy)]
pub enum ToolsCall {}

impl RequestMethod for ToolsCall {
    const METHOD: &'static str = methods::TOOLS_CALL;
    type Params = CallToolParams;
    type Result = CallToolResult;
}

/// `notifications/cancelled` (either direction, Notification).
#[derive(Debug, Clone, Copy)]
pub enum Cancelled {}

impl NotificationMethod for Cancelled {
    const METHOD: &'static str = methods::CANCELLED;
    type Params = CancelledParams;
}

/// `notifications/tools/list_changed` (Server → Client, Notification).
#[derive(Debug, Clone, Copy)]
pub enum ToolListChanged {}

impl NotificationMethod for ToolListChanged {
    const METHOD: &'static str = methods::TOOLS_LIST_CHANGED;
    type Params = EmptyObject;
}

/// `notifications/message` (Server → Client, Notification): a log message.
#[derive(Debug, Clone, Copy)]
pub enum LoggingMessage {}

impl NotificationMethod for LoggingMessage {
    const METHOD: &'static str = methods::MESSAGE;
    type Params = LoggingMessageParams;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_name_their_wire_methods() {
        assert_eq!(Initialize::METHOD, "initialize");
        assert_eq!(Initialized::METHOD, "notifications/initialized");
        assert_eq!(Ping::METHOD, "ping");
        assert_eq!(ToolsList::METHOD, "tools/list");
        assert_eq!(ToolsCall::METHOD, "tools/call");
        assert_eq!(Cancelled::METHOD, "notifications/cancelled");
        assert_eq!(ToolListChanged::METHOD, "notifications/tools/list_changed");
        assert_eq!(LoggingMessage::METHOD, "notifications/message");
    }
}
