//! The embedding agent, as the driver sees it: where notices and pushes go.

use crate::controller::PushEvent;
use crate::names::ServerName;
use crate::presenter::WindowItem;

/// The embedding agent: where notices go.
pub trait Agent: Send + 'static {
    /// Store `item` in the agent's window; return false if it could not be stored (the
    /// change then stays owed, H45).
    fn notice(&mut self, item: &WindowItem) -> bool;

    /// True for an agent whose only window is its results (a plain MCP client): notices
    /// are not written as they come but ride with its next answer, in read order.
    fn results_are_window(&self) -> bool {
        false
    }

    /// A server pushed an event; for agents that show pushes as they arrive. Return true
    /// when this told the agent the event (an MCPL client's own `push/event`): it is then not
    /// told again as news. Showing it where the model may not read it (a log message) does
    /// not count: return false.
    fn pushed(&mut self, _server: &ServerName, _event: &PushEvent) -> bool {
        false
    }
}
