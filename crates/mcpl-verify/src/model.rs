//! A [`stateright`] model of the rev and recovery rules (RFC-014 §6; H11–H14), checked
//! exhaustively within bounds: one server makes [`CHANGES`] changes, fanned out as hints
//! with consecutive revs to [`CONNECTIONS`] connections whose wires reorder freely and lose
//! up to [`LOSSES`] messages in all.
//!
//! What each host does, as the controller does it:
//! - a hint with the next rev is applied (and then any held hints that now follow on);
//! - a hint at or below the applied rev is old news and changes nothing;
//! - a hint beyond the next rev is held, and a recovery is due (the gap);
//! - a lost message is noticed (a broken stream, a request that times out) and a recovery
//!   is due;
//! - a recovery reads the server's statement, which carries the server's rev when it was
//!   read; a statement older than what is applied changes nothing, a newer one is taken
//!   whole, and the changes it covers that were not applied yet are told once.
//!
//! Properties: never applies out of order, never tells twice, and once loss stops and
//! everything is delivered, every connection holds the server's last rev and has told each
//! change exactly once.

use stateright::{Checker, HasDiscoveries, Model, Property};

/// How many connections the principal has.
pub const CONNECTIONS: usize = 2;
/// How many changes the server makes.
pub const CHANGES: u8 = 4;
/// How many messages the wires may lose in all.
pub const LOSSES: u8 = 2;

/// Which rules the hosts run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rules {
    /// The rules as specified.
    Real,
    /// A planted bug: a host takes a recovery statement even when it is older than what it
    /// applied already (the check must find it).
    TakesStaleStatements,
    /// A planted bug: a host applies a hint beyond a gap at once instead of holding it.
    AppliesAhead,
    /// A planted bug: a recovery statement tells every change it covers, told or not.
    RetellsRecovered,
    /// A planted bug: a lost message goes unnoticed (no broken stream, no request timer), so
    /// no recovery is due.
    MissesLoss,
}

impl Rules {
    /// Every planted bug.
    pub const PLANTED: [Rules; 4] = [
        Rules::TakesStaleStatements,
        Rules::AppliesAhead,
        Rules::RetellsRecovered,
        Rules::MissesLoss,
    ];
}

/// A message on a wire to a host.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Msg {
    /// A hint carrying this rev.
    Hint(u8),
    /// A recovery statement read at this rev.
    Statement(u8),
}

/// One connection: its wire and its host's state.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Conn {
    /// Messages on the wire, deliverable in any order.
    pub wire: Vec<Msg>,
    /// The last rev applied.
    pub applied: u8,
    /// Hints held beyond a gap.
    pub held: Vec<u8>,
    /// A recovery is due.
    pub due: bool,
    /// A recovery read is in flight.
    pub recovering: bool,
    /// How many times each change was told (index = rev).
    pub told: [u8; CHANGES as usize + 1],
    /// Set when a rev was applied below one applied before.
    pub out_of_order: bool,
}

/// The whole system.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct State {
    /// Changes the server made so far (its rev).
    pub made: u8,
    /// Messages lost so far.
    pub lost: u8,
    /// The connections.
    pub conns: Vec<Conn>,
}

/// One step.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Action {
    /// The server makes its next change and fans out a hint to every connection.
    Change,
    /// Connection `0`'s wire delivers its message at index `1`.
    Deliver(usize, usize),
    /// Connection `0`'s wire loses its message at index `1`.
    Lose(usize, usize),
    /// Connection `0` runs its due recovery.
    Recover(usize),
}

/// The model.
#[derive(Debug, Clone)]
pub struct RevModel {
    /// Which rules the hosts run.
    pub rules: Rules,
}

/// Applies and tells change `rev`; anything but the next rev is out of order.
fn tell(c: &mut Conn, rev: u8) {
    if rev != c.applied + 1 {
        c.out_of_order = true;
    }
    c.told[rev as usize] = c.told[rev as usize].saturating_add(1);
    c.applied = rev;
}

fn apply_held(c: &mut Conn) {
    c.held.retain(|&r| r > c.applied);
    while let Some(pos) = c.held.iter().position(|&r| r == c.applied + 1) {
        let r = c.held.remove(pos);
        tell(c, r);
    }
    // A gap remains while anything is held.
    if !c.held.is_empty() {
        c.due = true;
    }
}

impl RevModel {
    fn deliver(&self, c: &mut Conn, msg: Msg) {
        match msg {
            Msg::Hint(r) if r <= c.applied => {}
            Msg::Hint(r) if r == c.applied + 1 => {
                tell(c, r);
                apply_held(c);
            }
            Msg::Hint(r) if self.rules == Rules::AppliesAhead => {
                tell(c, r);
                apply_held(c);
            }
            Msg::Hint(r) => {
                if !c.held.contains(&r) {
                    c.held.push(r);
                    c.held.sort_unstable();
                }
                c.due = true;
            }
            Msg::Statement(s) => {
                c.recovering = false;
                let take = s >= c.applied || self.rules == Rules::TakesStaleStatements;
                if take {
                    if s < c.applied {
                        c.out_of_order = true;
                        c.applied = s;
                    }
                    let from = match self.rules {
                        Rules::RetellsRecovered => 1,
                        _ => c.applied + 1,
                    };
                    for r in from..=s {
                        tell(c, r);
                    }
                    c.applied = s;
                }
                apply_held(c);
            }
        }
    }
}

fn quiet(s: &State) -> bool {
    s.made == CHANGES
        && s.conns
            .iter()
            .all(|c| c.wire.is_empty() && !c.due && !c.recovering)
}

impl Model for RevModel {
    type State = State;
    type Action = Action;

    fn init_states(&self) -> Vec<State> {
        vec![State {
            made: 0,
            lost: 0,
            conns: vec![Conn::default(); CONNECTIONS],
        }]
    }

    fn actions(&self, s: &State, actions: &mut Vec<Action>) {
        if s.made < CHANGES {
            actions.push(Action::Change);
        }
        for (j, c) in s.conns.iter().enumerate() {
            for i in 0..c.wire.len() {
                // Identical messages at two places are one choice.
                if c.wire[..i].contains(&c.wire[i]) {
                    continue;
                }
                actions.push(Action::Deliver(j, i));
                if s.lost < LOSSES {
                    actions.push(Action::Lose(j, i));
                }
            }
            if c.due && !c.recovering {
                actions.push(Action::Recover(j));
            }
        }
    }

    fn next_state(&self, s: &State, a: Action) -> Option<State> {
        let mut n = s.clone();
        match a {
            Action::Change => {
                n.made += 1;
                for c in &mut n.conns {
                    c.wire.push(Msg::Hint(n.made));
                }
            }
            Action::Deliver(j, i) => {
                let msg = n.conns[j].wire.remove(i);
                self.deliver(&mut n.conns[j], msg);
            }
            Action::Lose(j, i) => {
                n.lost += 1;
                let c = &mut n.conns[j];
                let msg = c.wire.remove(i);
                if self.rules != Rules::MissesLoss {
                    c.recovering = false;
                    c.due = true;
                } else if matches!(msg, Msg::Statement(_)) {
                    c.recovering = false;
                }
            }
            Action::Recover(j) => {
                let made = n.made;
                let c = &mut n.conns[j];
                c.due = false;
                c.recovering = true;
                c.wire.push(Msg::Statement(made));
            }
        }
        Some(n)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            Property::always("never applies out of order", |_, s: &State| {
                s.conns.iter().all(|c| !c.out_of_order)
            }),
            Property::always("never tells twice", |_, s: &State| {
                s.conns.iter().all(|c| c.told.iter().all(|&n| n <= 1))
            }),
            Property::eventually("loss stops and all is delivered", |_, s: &State| quiet(s)),
            Property::always("consistent once loss stops", |_, s: &State| {
                !quiet(s)
                    || s.conns.iter().all(|c| {
                        c.applied == s.made && c.told[1..=s.made as usize].iter().all(|&n| n == 1)
                    })
            }),
        ]
    }
}

/// Checks the model under `rules` exhaustively; returns the unique states explored and the
/// number of properties violated.
pub fn check(rules: Rules) -> (usize, usize) {
    let checker = RevModel { rules }.checker().spawn_bfs().join();
    (checker.unique_state_count(), checker.discoveries().len())
}

/// Checks the model under `rules` until the first property fails; returns the names of the
/// properties found failing (empty when none fails anywhere within bounds).
pub fn first_failures(rules: Rules) -> Vec<&'static str> {
    let checker = RevModel { rules }
        .checker()
        .finish_when(HasDiscoveries::AnyFailures)
        .spawn_bfs()
        .join();
    checker.discoveries().into_keys().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s6_rev_rules_hold_in_every_state_within_bounds() {
        let (states, violations) = check(Rules::Real);
        assert!(states > 1_000, "explored only {states} states");
        assert_eq!(violations, 0);
    }

    #[test]
    fn s6_every_planted_bug_is_found() {
        for rules in Rules::PLANTED {
            let found = first_failures(rules);
            assert!(
                !found.is_empty(),
                "the planted bug {rules:?} went unnoticed"
            );
        }
    }
}
