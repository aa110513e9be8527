//! [`Seat`]: who sits on one side of a table, the bot or an agent with its instance.

use mcpl_server::Principal;

/// Who sits on one side of a table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seat {
    /// The arcade's bot.
    Bot,
    /// An agent, with the instance name it plays in; `None` until it accepts a challenge.
    Agent {
        /// The agent.
        principal: Principal,
        /// Its instance of the `go` toolset, once it has joined.
        instance: Option<String>,
    },
}

impl Seat {
    /// The seat's agent, if an agent sits there.
    pub fn principal(&self) -> Option<&Principal> {
        match self {
            Self::Bot => None,
            Self::Agent { principal, .. } => Some(principal),
        }
    }

    /// The agent and its instance, once joined.
    pub fn joined(&self) -> Option<(&Principal, &str)> {
        match self {
            Self::Agent {
                principal,
                instance: Some(instance),
            } => Some((principal, instance)),
            _ => None,
        }
    }

    /// How the other player is named in messages.
    pub fn name(&self) -> String {
        match self {
            Self::Bot => "the bot".to_owned(),
            Self::Agent { principal, .. } => principal.id().to_owned(),
        }
    }
}
