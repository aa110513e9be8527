//! The store steps of one game: opening against the bot, a move, leaving.
//!
//! Each step reads and edits the [`Games`] it is given and returns its reply with a [`Tell`]
//! of what to record in the SDK's `Context`; it touches nothing else, so a store may run it
//! again on a fresh copy (see `store`). Every refusal comes before the first edit.

use std::time::SystemTime;

use mcpl_server::{CloseReply, Event, OpenReply, Principal};

use crate::catalog::GO;
use crate::error::ArcadeError;
use crate::go::{Move, Outcome, Point};
use crate::lobby::describe;
use crate::options::GoOptions;
use crate::store::Games;
use crate::table::{Seat, Table};
use crate::tell::BotTurn;
use crate::tell::{Change, Tell};

/// The move a `play`, `pass` or `resign` call asks for.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Wanted<'a> {
    /// A pass or a resignation.
    Move(Move),
    /// A point as the caller wrote it (if it did), read against the board's size.
    Point(Option<&'a str>),
}

/// Starts a game against the bot with the caller as Black.
pub(crate) fn open_vs_bot(
    games: &mut Games,
    me: &Principal,
    instance: &str,
    options: &GoOptions,
    now: SystemTime,
) -> (OpenReply, Tell) {
    let size = options.size;
    let black = Seat::Agent {
        principal: me.clone(),
        instance: Some(instance.to_owned()),
    };
    let table = Table::new(options.clone(), black, Seat::Bot, now);
    let mut tell = Tell::default();
    tell.here([
        Change::turn(&table),
        Change::Show("board"),
        Change::Show("resign"),
    ]);
    let text = format!(
        "New {size} game against the bot, komi {}. You are Black (X); your move.\n\n{}",
        table.game().komi(),
        table.game().render()
    );
    games.add(table);
    let reply = OpenReply::text(text).title(format!("Go vs bot ({size})"));
    (reply, tell)
}

/// Leaves the caller's game in `instance`: a running game is forfeited and the opponent's
/// instance ends with a record; a challenge nobody accepted is withdrawn.
pub(crate) fn leave(
    games: &mut Games,
    me: &Principal,
    instance: &str,
    disconnect: bool,
) -> (CloseReply, Tell) {
    let mut tell = Tell::default();
    let Ok((id, color)) = games.seat_of(me, instance) else {
        let text = format!("No game was running in `{instance}`.");
        return (CloseReply::text(text), tell);
    };
    let table = games.table(id).expect("a seat names a live table");
    let opponent = table.seat(color.opponent()).clone();
    if !table.started() {
        games.remove(id, None);
        if let Some(them) = opponent.principal() {
            tell.event(
                them,
                Event::text(format!("{} withdrew the challenge.", me.id())),
            );
        }
        let text = format!("Challenge to {} withdrawn.", opponent.name());
        return (CloseReply::text(text), tell);
    }
    let outcome = Outcome::Resigned {
        winner: color.opponent(),
    };
    let how = if disconnect {
        "disconnected"
    } else {
        "left the game"
    };
    if let Some((them, their_instance)) = opponent.joined() {
        let reason = format!("{} {how}; you win.", me.id());
        tell.theirs(them, their_instance, [Change::End(reason.clone())])
            .event(them, Event::text(reason).about(GO, Some(their_instance)));
    }
    games.remove(id, Some(&outcome));
    let you = if disconnect {
        "You disconnected"
    } else {
        "You left"
    };
    let text = format!("{you} and forfeit the game; {} wins.", opponent.name());
    (CloseReply::text(text), tell)
}

/// Plays the caller's move in its game in `instance`. The reply is the result text and the
/// bot's turn owed, if the bot is to answer.
pub(crate) fn play_move(
    games: &mut Games,
    me: &Principal,
    instance: &str,
    wanted: Wanted<'_>,
    now: SystemTime,
) -> Result<((String, Option<BotTurn>), Tell), ArcadeError> {
    let (id, color) = games.seat_of(me, instance)?;
    let table = games.table_mut(id).expect("a seat names a live table");
    let mv = match wanted {
        Wanted::Move(mv) => mv,
        Wanted::Point(Some(text)) => Move::Play(Point::parse(text, table.options().size)?),
        Wanted::Point(None) => {
            return Err(ArcadeError::BadInput {
                what: "move",
                why: "`move` must be a point such as \"D4\"".to_owned(),
            });
        }
    };
    let played = table.play(color, mv, now)?;
    let mut text = describe("You", &played);
    let board = table.game().render();
    let opponent = table.seat(color.opponent()).clone();
    let mut tell = Tell::default();

    if let Some(outcome) = played.outcome {
        let mine = table.result_for(color, &outcome);
        tell.here([Change::End(mine.clone())]);
        if let Some((them, their_instance)) = opponent.joined() {
            let theirs = table.result_for(color.opponent(), &outcome);
            // A resignation is told once: the result says who resigned.
            let news = if matches!(played.turn.mv, Move::Resign) {
                format!("{theirs}\n\n{board}")
            } else {
                format!("{} {theirs}\n\n{board}", describe(me.id(), &played))
            };
            tell.theirs(them, their_instance, [Change::End(theirs)])
                .event(them, Event::text(news).about(GO, Some(their_instance)));
        }
        games.remove(id, Some(&outcome));
        let said = if matches!(played.turn.mv, Move::Resign) {
            mine
        } else {
            format!("{text} {mine}")
        };
        return Ok(((format!("{said}\n\n{board}"), None), tell));
    }

    tell.here([Change::Hide("play"), Change::Hide("pass")]);
    let turn = match &opponent {
        Seat::Bot => {
            text.push_str(" The bot is thinking.");
            Some(BotTurn {
                principal: me.clone(),
                instance: instance.to_owned(),
                table: id,
                moves: table.game().history().len(),
            })
        }
        Seat::Agent { .. } => {
            if let Some((them, their_instance)) = opponent.joined() {
                let news = format!("{} Your move.\n\n{board}", describe(me.id(), &played));
                tell.theirs(them, their_instance, [Change::turn(table)])
                    .event(them, Event::text(news).about(GO, Some(their_instance)));
            }
            text.push_str(&format!(" Waiting for {}.", opponent.name()));
            None
        }
    };
    Ok(((format!("{text}\n\n{board}"), turn), tell))
}
