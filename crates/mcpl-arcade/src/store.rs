//! Where the games live: [`Games`], every table and standing of one arcade deployment, and
//! [`GameStore`], which runs one atomic step over them.
//!
//! Every handler reads and edits the games in one [`with_games`] step and tells the SDK what
//! changed only after the step returned. A store shared by several replicas (optimistic
//! transactions) may run a step more than once on fresh copies, so a step edits only the
//! [`Games`] it is given and has no other effect; [`MemoryGames`] runs it once under a mutex.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Mutex;

use mcpl_server::Principal;
use serde::{Deserialize, Serialize};

use crate::error::ArcadeError;
pub use crate::error::GameStoreError;
use crate::go::{Color, Outcome};
use crate::table::Table;

/// One player's results.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    /// Games won.
    pub wins: u32,
    /// Games lost.
    pub losses: u32,
    /// Games drawn.
    pub draws: u32,
}

/// Every game, seat, challenge and standing of one arcade deployment.
///
/// It serializes to JSON and back exactly (no `Instant` inside: times are wall-clock
/// milliseconds). Seats and challenges are read off the tables, so only the tables, the
/// standings and the next table number are stored.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(from = "StoredGames")]
pub struct Games {
    /// Running games and challenges nobody accepted yet, by table number.
    tables: BTreeMap<u64, Table>,
    /// Results by player id.
    standings: BTreeMap<String, Record>,
    /// The last table number handed out (numbers are never reused).
    next_table: u64,
    /// The tables each agent sits at, joined or challenged: a move or an open finds its
    /// table without reading every table. Built from `tables`, never stored; a table's
    /// agents are fixed when it is added (accepting a challenge only names the instance).
    #[serde(skip)]
    seated: HashMap<Principal, BTreeSet<u64>>,
}

/// [`Games`] as stored: everything but the index, which is rebuilt when it is read.
#[derive(Deserialize)]
struct StoredGames {
    tables: BTreeMap<u64, Table>,
    standings: BTreeMap<String, Record>,
    next_table: u64,
}

impl From<StoredGames> for Games {
    fn from(stored: StoredGames) -> Self {
        Games::from_parts(stored.tables, stored.standings, stored.next_table)
    }
}

/// Where the games live. Every call is one atomic step over all games.
pub trait GameStore: Send + Sync + 'static {
    /// Runs `f` on the games, atomically. A store shared by several processes (optimistic
    /// transactions) may run `f` more than once, each time on a fresh copy; only the last
    /// run's edits are kept. So `f` must only edit the `Games` it is given.
    fn update(&self, f: &mut dyn FnMut(&mut Games)) -> Result<(), GameStoreError>;
}

/// Every game in this process (the default).
#[derive(Debug, Default)]
pub struct MemoryGames {
    games: Mutex<Games>,
}

impl MemoryGames {
    /// A store that starts with `games`.
    pub fn new(games: Games) -> Self {
        Self {
            games: Mutex::new(games),
        }
    }
}

impl GameStore for MemoryGames {
    fn update(&self, f: &mut dyn FnMut(&mut Games)) -> Result<(), GameStoreError> {
        // A panic in another step poisons the lock; the games it left are whole values.
        let mut games = self.games.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut games);
        Ok(())
    }
}

/// Runs `f` through `store` and returns the value of its last run.
pub fn with_games<R>(
    store: &dyn GameStore,
    mut f: impl FnMut(&mut Games) -> R,
) -> Result<R, GameStoreError> {
    let mut last = None;
    store.update(&mut |games| last = Some(f(games)))?;
    last.ok_or_else(|| GameStoreError("the store returned without running the step".to_owned()))
}

impl Games {
    /// How many games are running or waiting for a challenged agent.
    pub fn len(&self) -> usize {
        self.tables.len()
    }

    /// Whether no game is running or waiting.
    pub fn is_empty(&self) -> bool {
        self.tables.is_empty()
    }

    /// The table numbered `id`.
    pub fn table(&self, id: u64) -> Option<&Table> {
        self.tables.get(&id)
    }

    /// Every table, by number.
    pub fn tables(&self) -> impl Iterator<Item = (u64, &Table)> {
        self.tables.iter().map(|(&id, t)| (id, t))
    }

    /// Results by player id.
    pub fn standings(&self) -> &BTreeMap<String, Record> {
        &self.standings
    }

    /// The games from their parts: tables by number, standings by player, and the last
    /// table number handed out (for a store that keeps them apart).
    pub fn from_parts(
        tables: BTreeMap<u64, Table>,
        standings: BTreeMap<String, Record>,
        next_table: u64,
    ) -> Self {
        let mut games = Games {
            tables: BTreeMap::new(),
            standings,
            next_table,
            seated: HashMap::new(),
        };
        for (id, table) in tables {
            games.insert(id, table);
        }
        games
    }

    /// The last table number handed out.
    pub fn next_table(&self) -> u64 {
        self.next_table
    }

    pub(crate) fn table_mut(&mut self, id: u64) -> Option<&mut Table> {
        self.tables.get_mut(&id)
    }

    /// Seats `table` under a new number and returns it.
    pub(crate) fn add(&mut self, table: Table) -> u64 {
        self.next_table += 1;
        self.insert(self.next_table, table);
        self.next_table
    }

    /// Puts `table` under `id` and indexes its agents.
    fn insert(&mut self, id: u64, table: Table) {
        for principal in table.agents() {
            self.seated.entry(principal.clone()).or_default().insert(id);
        }
        self.tables.insert(id, table);
    }

    /// The numbers of the tables `principal` sits at (none: an empty iterator).
    fn tables_of(&self, principal: &Principal) -> impl Iterator<Item = u64> + '_ {
        self.seated.get(principal).into_iter().flatten().copied()
    }

    /// Removes a table (with its seats and challenge); counts the result if there is one.
    pub(crate) fn remove(&mut self, id: u64, outcome: Option<&Outcome>) -> Option<Table> {
        let table = self.tables.remove(&id)?;
        for principal in table.agents() {
            if let Some(ids) = self.seated.get_mut(principal) {
                ids.remove(&id);
                if ids.is_empty() {
                    self.seated.remove(principal);
                }
            }
        }
        if let Some(outcome) = outcome {
            for color in [Color::Black, Color::White] {
                let record = self.standings.entry(table.seat(color).name()).or_default();
                match outcome.winner() {
                    None => record.draws += 1,
                    Some(w) if w == color => record.wins += 1,
                    Some(_) => record.losses += 1,
                }
            }
        }
        Some(table)
    }

    /// The caller's table in `instance` and the colour it plays there.
    pub(crate) fn seat_of(
        &self,
        principal: &Principal,
        instance: &str,
    ) -> Result<(u64, Color), ArcadeError> {
        self.tables_of(principal)
            .find_map(|id| {
                let table = self.tables.get(&id)?;
                table.color_of(principal, instance).map(|c| (id, c))
            })
            .ok_or_else(|| ArcadeError::NoSuchGame(instance.to_owned()))
    }

    /// Whether `principal` has a game named `instance`.
    pub(crate) fn has_seat(&self, principal: &Principal, instance: &str) -> bool {
        self.seat_of(principal, instance).is_ok()
    }

    /// The table of `from`'s oldest challenge to `to` that `to` has not accepted yet.
    pub(crate) fn challenge(&self, from: &Principal, to: &Principal) -> Option<u64> {
        // Table numbers grow, so the first found is the oldest.
        self.tables_of(from).find(|id| {
            self.tables
                .get(id)
                .is_some_and(|t| t.pending_challenge() == Some((from, to)))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::GoOptions;
    use crate::seat::Seat;
    use std::time::UNIX_EPOCH;

    fn agent(id: &str, instance: Option<&str>) -> Seat {
        Seat::Agent {
            principal: Principal::authenticated(id),
            instance: instance.map(str::to_owned),
        }
    }

    fn nine() -> GoOptions {
        GoOptions::from_json(&serde_json::json!({"size": 9})).unwrap()
    }

    /// Two games against the bot for alice and a challenge from alice to bob.
    fn some_games() -> Games {
        let mut games = Games::default();
        for instance in ["g1", "g2"] {
            let table = Table::new(
                nine(),
                agent("alice", Some(instance)),
                Seat::Bot,
                UNIX_EPOCH,
            );
            games.add(table);
        }
        let challenge = Table::new(
            nine(),
            agent("alice", Some("vs-bob")),
            agent("bob", None),
            UNIX_EPOCH,
        );
        games.add(challenge);
        games
    }

    #[test]
    fn seats_and_challenges_are_found_through_the_index() {
        let games = some_games();
        let alice = Principal::authenticated("alice");
        let bob = Principal::authenticated("bob");
        assert_eq!(games.seat_of(&alice, "g2").unwrap(), (2, Color::Black));
        assert_eq!(games.seat_of(&alice, "vs-bob").unwrap(), (3, Color::Black));
        assert!(
            games.seat_of(&bob, "g1").is_err(),
            "bob does not sit at alice's games"
        );
        assert!(
            !games.has_seat(&bob, "vs-alice"),
            "bob has not accepted yet"
        );
        assert_eq!(games.challenge(&alice, &bob), Some(3));
        assert_eq!(games.challenge(&bob, &alice), None);
    }

    #[test]
    fn a_removed_table_leaves_the_index() {
        let mut games = some_games();
        let alice = Principal::authenticated("alice");
        let bob = Principal::authenticated("bob");
        games.remove(3, None).unwrap();
        assert_eq!(games.challenge(&alice, &bob), None);
        assert!(!games.seated.contains_key(&bob), "bob sits nowhere now");
        assert_eq!(games.seat_of(&alice, "g1").unwrap(), (1, Color::Black));
        games.remove(1, None).unwrap();
        games.remove(2, None).unwrap();
        assert!(games.seated.is_empty());
    }

    #[test]
    fn games_read_back_from_json_rebuild_the_index() {
        let games = some_games();
        let json = serde_json::to_value(&games).unwrap();
        assert!(
            json.get("seated").is_none(),
            "the index is not stored: {json}"
        );
        let back: Games = serde_json::from_value(json).unwrap();
        assert_eq!(back, games);
        let alice = Principal::authenticated("alice");
        assert_eq!(back.seat_of(&alice, "g1").unwrap(), (1, Color::Black));
        let parts = Games::from_parts(games.tables.clone(), BTreeMap::new(), games.next_table());
        assert_eq!(parts.seated, games.seated);
    }
}
