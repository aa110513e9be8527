//! What happens on the server's own initiative (§6.2, "something else's consequences"): the
//! bot's moves and idle timeouts. Each returns `Update`s the driver applies, so they reach
//! the player as pushes that carry their hints. Like the handlers, each edits the games in
//! store steps that only build values, and a store out of reach is an error that changed
//! nothing.

use std::time::{Duration, Instant};

use mcpl_server::{Event, Principal, Update};

use crate::arcade::Arcade;
use crate::catalog::GO;
use crate::error::GameStoreError;
use crate::go::Color;
use crate::lobby::describe;
use crate::table::{Table, unix_millis};
use crate::tell::BotTurn;
use crate::tell::Change;

impl Arcade {
    /// Makes the bot's move owed by `turn` and returns the update for the player: a push with
    /// the move that shows `play` (with the new legal moves) and `pass` again, or that ends the
    /// game. `None` when the turn is stale (the game ended or moved on meanwhile).
    ///
    /// The bot thinks outside any store step: one step copies the position, a second plays
    /// the chosen move if the game is still where the bot found it.
    pub fn bot_turn(
        &self,
        turn: &BotTurn,
        now: Instant,
    ) -> Result<Option<(Principal, Update)>, GameStoreError> {
        let stale = |t: &Table| t.game().history().len() != turn.moves || !t.bot_to_move();
        let position = self.read(|games| {
            let table = games.table(turn.table)?;
            (!stale(table)).then(|| table.game().clone())
        })?;
        let Some(position) = position else {
            return Ok(None);
        };
        let decision = self.bot_for(turn.table, turn.moves).choose(&position);
        let now = self.wall(now);
        self.edit(|games| {
            let table = games.table_mut(turn.table)?;
            if stale(table) {
                return None;
            }
            let bot_color = table.game().to_move();
            let played = table.play(bot_color, decision.mv, now).ok()?;
            let board = table.game().render();
            let text = describe("The bot", &played);
            let mut update = Update::new();
            let mut scope = update.instance(GO, &turn.instance);
            let event = if let Some(outcome) = played.outcome {
                let reason = table.result_for(bot_color.opponent(), &outcome);
                Change::End(reason.clone()).apply(&mut scope);
                games.remove(turn.table, Some(&outcome));
                format!("{text} {reason}\n\n{board}")
            } else {
                Change::turn(table).apply(&mut scope);
                format!("{text} Your move.\n\n{board}")
            };
            update.event(Event::text(event).about(GO, Some(&turn.instance)));
            Some((turn.principal.clone(), update))
        })
    }

    /// Ends every game nobody has moved in for the idle timeout (and every challenge nobody
    /// accepted in that time). Returns an update per seated agent: the end, with a record.
    ///
    /// The step removes the idle tables and builds the updates together, so replicas that
    /// expire at once never both end the same game: only the step that took it tells.
    pub fn expire_idle(&self, now: Instant) -> Result<Vec<(Principal, Update)>, GameStoreError> {
        let timeout = self.config().idle_timeout;
        let now = unix_millis(self.wall(now));
        let timeout_ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX);
        let minutes = timeout.as_secs() / 60;
        self.edit(|games| {
            let idle: Vec<u64> = games
                .tables()
                .filter(|(_, t)| now.saturating_sub(t.last_activity_millis()) >= timeout_ms)
                .map(|(id, _)| id)
                .collect();
            let mut updates = Vec::new();
            for id in idle {
                let Some(table) = games.remove(id, None) else {
                    continue;
                };
                let reason = if table.started() {
                    format!("The game timed out after {minutes} minutes without a move; no result.")
                } else {
                    format!("The challenge expired after {minutes} minutes without an answer.")
                };
                for color in [Color::Black, Color::White] {
                    if let Some((p, instance)) = table.seat(color).joined() {
                        let mut update = Update::new();
                        update.instance(GO, instance).end(reason.clone());
                        update.event(Event::text(reason.clone()).about(GO, Some(instance)));
                        updates.push((p.clone(), update));
                    }
                }
            }
            updates
        })
    }

    /// When the next game would time out (the driver's clock, from `now`), for its timer.
    pub fn next_deadline(&self, now: Instant) -> Result<Option<Instant>, GameStoreError> {
        let timeout_ms = u64::try_from(self.config().idle_timeout.as_millis()).unwrap_or(u64::MAX);
        let now_ms = unix_millis(self.wall(now));
        let next = self.read(|games| {
            games
                .tables()
                .map(|(_, t)| t.last_activity_millis().saturating_add(timeout_ms))
                .min()
        })?;
        Ok(next.map(|at| now + Duration::from_millis(at.saturating_sub(now_ms))))
    }
}
