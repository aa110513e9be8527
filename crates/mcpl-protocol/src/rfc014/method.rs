//! The RFC-014 methods as typed [`RequestMethod`]s and [`NotificationMethod`]s.

use super::hints::HintChanges;
use super::toolsets::{CloseParams, CloseResult, ListParams, ListResult, OpenParams, OpenResult};
use crate::method::{NotificationMethod, RequestMethod};
use crate::methods;

/// `toolsets/open` (Host → Server, Request).
#[derive(Debug, Clone, Copy)]
pub enum ToolsetsOpen {}

impl RequestMethod for ToolsetsOpen {
    const METHOD: &'static str = methods::TOOLSETS_OPEN;
    type Params = OpenParams;
    type Result = OpenResult;
}

/// `toolsets/close` (Host → Server, Request).
#[derive(Debug, Clone, Copy)]
pub enum ToolsetsClose {}

impl RequestMethod for ToolsetsClose {
    const METHOD: &'static str = methods::TOOLSETS_CLOSE;
    type Params = CloseParams;
    type Result = CloseResult;
}

/// `toolsets/list` (Host → Server, Request).
#[derive(Debug, Clone, Copy)]
pub enum ToolsetsList {}

impl RequestMethod for ToolsetsList {
    const METHOD: &'static str = methods::TOOLSETS_LIST;
    type Params = ListParams;
    type Result = ListResult;
}

/// `tools/hints` (Server → Host, Notification): hint changes with nothing to explain them.
#[derive(Debug, Clone, Copy)]
pub enum ToolsHints {}

impl NotificationMethod for ToolsHints {
    const METHOD: &'static str = methods::TOOLS_HINTS;
    type Params = HintChanges;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn method_names_match_the_table() {
        assert_eq!(ToolsetsOpen::METHOD, "toolsets/open");
        assert_eq!(ToolsetsClose::METHOD, "toolsets/close");
        assert_eq!(ToolsetsList::METHOD, "toolsets/list");
        assert_eq!(ToolsHints::METHOD, "tools/hints");
    }
}
