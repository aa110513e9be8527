//! What happens on the server's own initiative (§6.2, "something else's consequences"): the
//! bot's moves and idle timeouts. Each returns `Update`s the driver applies, so they reach
//! the player as pushes that carry their hints.

use std::time::Instant;

use mcpl_server::{Event, Principal, Update};

use crate::arcade::{Arcade, BotTurn, describe, show_turn};
use crate::catalog::GO;
use crate::go::Color;
use crate::table::Table;

impl Arcade {
    /// Makes the bot's move owed by `turn` and returns the update for the player: a push with
    /// the move that shows `play` (with the new legal moves) and `pass` again, or that ends the
    /// game. `None` when the turn is stale (the game ended or moved on meanwhile).
    ///
    /// The bot thinks without holding the arcade's lock.
    pub fn bot_turn(&self, turn: &BotTurn, now: Instant) -> Option<(Principal, Update)> {
        let stale = |t: &Table| t.game().history().len() != turn.moves || !t.bot_to_move();
        let (mut bot, game) = {
            let mut state = self.lock();
            let table = state.tables.get_mut(&turn.table)?;
            if stale(table) {
                return None;
            }
            table.take_bot()?
        };
        let decision = bot.choose(&game);
        let mut state = self.lock();
        let table = state.tables.get_mut(&turn.table)?;
        table.return_bot(bot);
        if stale(table) {
            return None;
        }
        let bot_color = table.game().to_move();
        let played = table.play(bot_color, decision.mv, now).ok()?;
        let board = table.game().render();
        let text = describe("The bot", &played);
        let mut update = Update::new();
        let event = if let Some(outcome) = played.outcome {
            let reason = table.result_for(bot_color.opponent(), &outcome);
            update.instance(GO, &turn.instance).end(reason.clone());
            state.remove(turn.table, Some(&outcome));
            format!("{text} {reason}\n\n{board}")
        } else {
            show_turn(&mut update.instance(GO, &turn.instance), table);
            format!("{text} Your move.\n\n{board}")
        };
        update.event(Event::text(event).about(GO, Some(&turn.instance)));
        Some((turn.principal.clone(), update))
    }

    /// Ends every game nobody has moved in for the idle timeout (and every challenge nobody
    /// accepted in that time). Returns an update per seated agent: the end, with a record.
    pub fn expire_idle(&self, now: Instant) -> Vec<(Principal, Update)> {
        let mut state = self.lock();
        let timeout = self.config().idle_timeout;
        let idle: Vec<u64> = state
            .tables
            .iter()
            .filter(|(_, t)| now.saturating_duration_since(t.last_activity()) >= timeout)
            .map(|(&id, _)| id)
            .collect();
        let minutes = timeout.as_secs() / 60;
        let mut updates = Vec::new();
        for id in idle {
            let Some(table) = state.remove(id, None) else {
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
    }

    /// When the next game would time out, for the driver's timer.
    pub fn next_deadline(&self) -> Option<Instant> {
        let state = self.lock();
        state
            .tables
            .values()
            .map(|t| t.last_activity() + self.config().idle_timeout)
            .min()
    }
}
