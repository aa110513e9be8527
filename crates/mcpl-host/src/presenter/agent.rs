//! The id of an embedding agent (a leaf).

/// The embedding agent's id (an agent has one window).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AgentId(pub String);
