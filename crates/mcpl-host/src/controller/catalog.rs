//! Reading `tools/list`: pages are collected and checked, and nothing becomes state before the
//! last page has arrived and every page passed (H01-H08).

use std::collections::BTreeSet;

use mcpl_protocol::mcp::{Tool, ToolsListResult};
use mcpl_protocol::rfc014::REV_KEY;
use serde_json::Value;

/// Why a list read failed; nothing of it was applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ListFailure {
    /// H03: a page was not a valid `tools/list` result.
    Malformed(&'static str),
    /// H04: a cursor came back twice, or there were too many pages.
    Looping,
    /// H07: two pages carried different numeric revs.
    Straddled,
    /// The server answered with an error.
    Error,
    /// H05: a page did not arrive in time.
    Timeout,
}

/// A list read in progress: the pages so far and the revs they carried.
#[derive(Debug, Default)]
pub(crate) struct ListRead {
    tools: Vec<Tool>,
    cursors: BTreeSet<String>,
    revs: Vec<u64>,
    pages: usize,
}

/// What one page means for the read.
pub(crate) enum PageStep {
    /// Ask for the page after this cursor.
    Next(String),
    /// The list is whole: apply these tools at this rev.
    Done {
        /// Every tool, in list order.
        tools: Vec<Tool>,
        /// The list's `mcpl/rev`, if any page carried one.
        rev: Option<u64>,
    },
}

impl ListRead {
    /// Checks one page and adds it; the read fails whole on any bad page (H03).
    pub(crate) fn page(
        &mut self,
        result: &Value,
        max_pages: usize,
    ) -> Result<PageStep, ListFailure> {
        // H03: check the shape before decoding, so the log names what was wrong.
        let obj = result
            .as_object()
            .ok_or(ListFailure::Malformed("result is not an object"))?;
        let tools = obj
            .get("tools")
            .and_then(Value::as_array)
            .ok_or(ListFailure::Malformed("tools is not an array"))?;
        if !tools
            .iter()
            .all(|t| t.get("name").is_some_and(Value::is_string))
        {
            return Err(ListFailure::Malformed("a tool has no string name"));
        }
        let page: ToolsListResult = serde_json::from_value(result.clone())
            .map_err(|_| ListFailure::Malformed("the page does not decode"))?;
        let parsed = page.tools;
        let cursor = page.next_cursor;
        // H07: only numeric revs count; a page without one cannot straddle by itself.
        if let Some(rev) = page
            .meta
            .as_ref()
            .and_then(|m| m.get(REV_KEY))
            .and_then(Value::as_u64)
        {
            self.revs.push(rev);
        }
        self.pages += 1;
        self.tools.extend(parsed);
        match cursor {
            Some(c) => {
                if self.pages >= max_pages || !self.cursors.insert(c.clone()) {
                    return Err(ListFailure::Looping);
                }
                Ok(PageStep::Next(c))
            }
            None => {
                let first = self.revs.first().copied();
                if self.revs.iter().any(|r| Some(*r) != first) {
                    return Err(ListFailure::Straddled);
                }
                Ok(PageStep::Done {
                    tools: std::mem::take(&mut self.tools),
                    rev: first,
                })
            }
        }
    }
}
