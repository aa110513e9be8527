//! Where the games live: [`Games`], every table and standing of one arcade deployment, and
//! [`GameStore`], which runs one atomic step over them.
//!
//! Every handler reads and edits the games in one [`with_games`] step and tells the SDK what
//! changed only after the step returned. A store shared by several replicas (optimistic
//! transactions) may run a step more than once on fresh copies, so a step edits only the
//! [`Games`] it is given and has no other effect; [`MemoryGames`] runs it once under a mutex.

use std::collections::BTreeMap;
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
pub struct Games {
    /// Running games and challenges nobody accepted yet, by table number.
    tables: BTreeMap<u64, Table>,
    /// Results by player id.
    standings: BTreeMap<String, Record>,
    /// The last table number handed out (numbers are never reused).
    next_table: u64,
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
        Games {
            tables,
            standings,
            next_table,
        }
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
        self.tables.insert(self.next_table, table);
        self.next_table
    }

    /// Removes a table (with its seats and challenge); counts the result if there is one.
    pub(crate) fn remove(&mut self, id: u64, outcome: Option<&Outcome>) -> Option<Table> {
        let table = self.tables.remove(&id)?;
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
        self.tables
            .iter()
            .find_map(|(&id, t)| t.color_of(principal, instance).map(|c| (id, c)))
            .ok_or_else(|| ArcadeError::NoSuchGame(instance.to_owned()))
    }

    /// Whether `principal` has a game named `instance`.
    pub(crate) fn has_seat(&self, principal: &Principal, instance: &str) -> bool {
        self.seat_of(principal, instance).is_ok()
    }

    /// The table of `from`'s oldest challenge to `to` that `to` has not accepted yet.
    pub(crate) fn challenge(&self, from: &Principal, to: &Principal) -> Option<u64> {
        self.tables
            .iter()
            .find(|(_, t)| t.pending_challenge() == Some((from, to)))
            .map(|(&id, _)| id)
    }
}
