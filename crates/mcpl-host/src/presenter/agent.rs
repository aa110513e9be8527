//! The id of an embedding agent (a leaf).

/// The embedding agent's id (an agent has one window).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AgentId(String);

impl AgentId {
    /// The agent called `id` (any text: the embedder's own name for it).
    pub fn new(id: impl Into<String>) -> AgentId {
        AgentId(id.into())
    }

    /// The id as a string slice.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for AgentId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::AgentId;

    #[test]
    fn an_agent_id_reads_back_as_the_embedders_own_text() {
        let id = AgentId::new("claude-code:7f3a");
        assert_eq!(id.as_str(), "claude-code:7f3a");
        assert_eq!(id.to_string(), "claude-code:7f3a");
    }
}
