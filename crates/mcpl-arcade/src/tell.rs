//! [`Tell`]: what a handler's store step decided to tell the SDK, applied after the step.
//!
//! A step may run more than once (see `store`), so it must not write to the SDK's `Context`.
//! It records the same changes here instead, in order, and the handler applies the `Tell` of
//! the step's last run once the store call returned.

use mcpl_protocol::mcp::Tool;
use mcpl_server::{Context, Event, Principal, Scoped};
use serde_json::Value;

use crate::catalog::GO;
use crate::table::Table;

/// One tool change in an instance of `go`.
#[derive(Debug, Clone)]
pub(crate) enum Change {
    /// The player's turn: `play` with this position's legal moves (hidden when none is
    /// legal) and `pass`, as [`show_turn`] states them.
    Turn(Option<Box<Tool>>),
    /// Makes a tool visible.
    Show(&'static str),
    /// Makes a tool invisible.
    Hide(&'static str),
    /// Ends the instance with a record.
    End(String),
    /// Opens the instance on the server's initiative, with options and a title.
    Open(Value, String),
}

impl Change {
    /// The turn of the player to move at `table`.
    pub(crate) fn turn(table: &Table) -> Change {
        Change::Turn(table.play_definition().map(Box::new))
    }

    /// The tools of a game whose player waits (for the opponent's move or acceptance).
    pub(crate) fn waiting() -> [Change; 4] {
        [
            Change::Hide("play"),
            Change::Hide("pass"),
            Change::Show("board"),
            Change::Show("resign"),
        ]
    }

    /// States this change in `scope`.
    pub(crate) fn apply(self, scope: &mut Scoped<'_>) {
        match self {
            Change::Turn(definition) => show_turn(scope, definition.map(|d| *d)),
            Change::Show(tool) => {
                scope.show(tool);
            }
            Change::Hide(tool) => {
                scope.hide(tool);
            }
            Change::End(reason) => {
                scope.end(reason);
            }
            Change::Open(options, title) => {
                scope.open(options, Some(&title));
            }
        }
    }
}

/// States `play` (with `definition`, this position's legal moves) and `pass` visible for the
/// player to move; without a legal point `play` is hidden.
pub(crate) fn show_turn(scope: &mut Scoped<'_>, definition: Option<Tool>) {
    match definition {
        Some(definition) => scope.define(definition).show("play"),
        None => scope.hide("play"),
    };
    scope.show("pass");
}

#[derive(Debug, Clone)]
enum Note {
    /// A change in the call's own instance (`Context::here`).
    Here(Change),
    /// A change in another instance of the caller's.
    Mine(String, Change),
    /// A change in someone else's instance.
    Theirs(Principal, String, Change),
    /// The event that explains a principal's changes.
    Event(Principal, Event),
    /// A suggestion that a principal open its side of a game (§7: it opens nothing).
    SuggestOpen {
        to: Principal,
        instance: String,
        options: Value,
        reason: String,
    },
}

/// Changes for the SDK, recorded in order by a store step.
#[derive(Debug, Clone, Default)]
pub(crate) struct Tell {
    notes: Vec<Note>,
}

impl Tell {
    /// Changes in the call's own instance.
    pub(crate) fn here(&mut self, changes: impl IntoIterator<Item = Change>) -> &mut Self {
        self.notes.extend(changes.into_iter().map(Note::Here));
        self
    }

    /// Changes in the caller's instance `instance` (not the call's own).
    pub(crate) fn mine(
        &mut self,
        instance: &str,
        changes: impl IntoIterator<Item = Change>,
    ) -> &mut Self {
        let notes = changes
            .into_iter()
            .map(|c| Note::Mine(instance.to_owned(), c));
        self.notes.extend(notes);
        self
    }

    /// Changes in `who`'s instance `instance`.
    pub(crate) fn theirs(
        &mut self,
        who: &Principal,
        instance: &str,
        changes: impl IntoIterator<Item = Change>,
    ) -> &mut Self {
        let notes = changes
            .into_iter()
            .map(|c| Note::Theirs(who.clone(), instance.to_owned(), c));
        self.notes.extend(notes);
        self
    }

    /// The event that explains `who`'s changes.
    pub(crate) fn event(&mut self, who: &Principal, event: Event) -> &mut Self {
        self.notes.push(Note::Event(who.clone(), event));
        self
    }

    /// Suggests that `to` open its instance `instance` of `go` with `options`.
    pub(crate) fn suggest_open(
        &mut self,
        to: &Principal,
        instance: &str,
        options: Value,
        reason: String,
    ) -> &mut Self {
        self.notes.push(Note::SuggestOpen {
            to: to.clone(),
            instance: instance.to_owned(),
            options,
            reason,
        });
        self
    }

    /// Records every change in `ctx`, in the order they were told.
    pub(crate) fn apply(self, ctx: &mut Context) {
        for note in self.notes {
            match note {
                Note::Here(change) => change.apply(&mut ctx.here()),
                Note::Mine(instance, change) => {
                    change.apply(&mut ctx.update().instance(GO, instance));
                }
                Note::Theirs(who, instance, change) => {
                    change.apply(&mut ctx.update_for(&who).instance(GO, instance));
                }
                Note::Event(who, event) => {
                    ctx.update_for(&who).event(event);
                }
                Note::SuggestOpen {
                    to,
                    instance,
                    options,
                    reason,
                } => {
                    ctx.update_for(&to)
                        .suggest_open(GO, Some(&instance), Some(options), reason);
                }
            }
        }
    }
}

/// A bot move owed after a player's move. The driver runs [`Arcade::bot_turn`](crate::Arcade::bot_turn) for it once
/// the player's call result (which hid `play`) is committed, so the bot's push comes after
/// it in rev order (§6.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BotTurn {
    /// The player the bot answers.
    pub principal: Principal,
    /// The player's instance.
    pub instance: String,
    pub(crate) table: u64,
    pub(crate) moves: usize,
}
