//! Games between two agents: a challenge creates the challenger's side and pushes the
//! challenged agent a suggestion to open its own (§7: a suggestion opens nothing); opening
//! `go` with the challenger as `opponent` accepts.
//!
//! Like every step over the games, [`accept_or_challenge`] and the `challenge` tool's step
//! only edit the games and record what to tell in a [`Tell`].

use std::time::SystemTime;

use mcpl_server::{Event, OpenReply, Principal};
use serde_json::{Map, Value};

use crate::catalog::GO;
use crate::error::ArcadeError;
use crate::go::{BoardSize, Color, Komi};
use crate::lobby::instance_for;
use crate::options::{GoOptions, Opponent};
use crate::store::Games;
use crate::table::{Seat, Table};
use crate::tell::{Change, Tell};

/// Opens the caller's side of a game against the agent `who`: accepts `who`'s pending
/// challenge (the caller plays White), or else challenges `who` (the caller plays Black).
pub(crate) fn accept_or_challenge(
    games: &mut Games,
    me: &Principal,
    instance: &str,
    options: &GoOptions,
    who: &str,
    now: SystemTime,
) -> Result<(OpenReply, Tell), ArcadeError> {
    if who == me.id() {
        return Err(ArcadeError::SelfChallenge);
    }
    let them = Principal::authenticated(who);
    let size = options.size;
    let title = format!("Go vs {who} ({size})");
    let mut tell = Tell::default();
    let Some(id) = games.challenge(&them, me) else {
        // No challenge from them: this open challenges them.
        let text = challenge(games, &mut tell, me, instance, options.clone(), &them, now);
        tell.here(Change::waiting());
        return Ok((OpenReply::text(text).title(title), tell));
    };
    let table = games.table_mut(id).expect("a challenge names a live table");
    if table.options().size != size {
        return Err(ArcadeError::SizeMismatch {
            who: who.to_owned(),
            size: table.options().size.to_string(),
            lines: table.options().size.lines(),
        });
    }
    table.join(Color::White, instance, now);
    tell.here(Change::waiting());
    let board = table.game().render();
    if let Some((black, their_instance)) = table.seat(Color::Black).joined() {
        let news = format!(
            "{} accepted your challenge. You are Black (X); your move.\n\n{board}",
            me.id()
        );
        tell.theirs(black, their_instance, [Change::turn(table)])
            .event(black, Event::text(news).about(GO, Some(their_instance)));
    }
    let text = format!(
        "You accepted {who}'s challenge: {size}, komi {}. You are White (O); {who} moves first.\n\n{board}",
        options.komi
    );
    Ok((OpenReply::text(text).title(title), tell))
}

/// Creates a table where the caller (Black, in `instance`) waits for `them`, and tells them
/// of the challenge with a suggestion to open their side (§7: it opens nothing).
fn challenge(
    games: &mut Games,
    tell: &mut Tell,
    me: &Principal,
    instance: &str,
    options: GoOptions,
    them: &Principal,
    now: SystemTime,
) -> String {
    let size = options.size;
    let accept = GoOptions {
        opponent: Opponent::Agent(me.id().to_owned()),
        ..options.clone()
    };
    let black = Seat::Agent {
        principal: me.clone(),
        instance: Some(instance.to_owned()),
    };
    let white = Seat::Agent {
        principal: them.clone(),
        instance: None,
    };
    games.add(Table::new(options, black, white, now));
    let their_instance = instance_for(me.id());
    tell.suggest_open(
        them,
        &their_instance,
        accept.to_json(),
        format!("{} challenged you to {size}", me.id()),
    );
    tell.event(
        them,
        Event::text(format!(
            "{} challenges you to a game of Go on {size}; you would play White. To accept, open \
             `go` with options {}.",
            me.id(),
            accept.to_json()
        )),
    );
    format!(
        "Challenge sent to {}. You are Black (X) and move first once they accept.",
        them.id()
    )
}

/// The `challenge` tool's arguments: who to challenge, and the board size (9 by default).
pub(crate) fn challenge_args(args: &Map<String, Value>) -> Result<(&str, BoardSize), ArcadeError> {
    let who = args
        .get("who")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|w| !w.is_empty())
        .ok_or_else(|| ArcadeError::BadInput {
            what: "who",
            why: "name the agent to challenge by its id".to_owned(),
        })?;
    let size = match args.get("size") {
        Some(v) => BoardSize::new(v.as_u64().ok_or_else(|| ArcadeError::BadInput {
            what: "size",
            why: format!("must be 9, 13 or 19, not `{v}`"),
        })?)?,
        None => BoardSize::NINE,
    };
    Ok((who, size))
}

/// The `challenge` tool's step: opens `me`'s side of a new game against `who` (Black,
/// waiting) and challenges them; refused when `who` already challenged `me`.
pub(crate) fn challenge_step(
    games: &mut Games,
    me: &Principal,
    who: &str,
    size: BoardSize,
    now: SystemTime,
) -> Result<(String, Tell), ArcadeError> {
    let them = Principal::authenticated(who);
    if let Some(id) = games.challenge(&them, me) {
        let size = games.table(id).map_or(size, |t| t.options().size).lines();
        return Err(ArcadeError::BadInput {
            what: "challenge",
            why: format!(
                "{who} already challenged you; open `go` with options \
                 {{\"size\": {size}, \"opponent\": \"{who}\"}} to accept"
            ),
        });
    }
    let stem = instance_for(who);
    let instance = (1..)
        .map(|n| {
            if n == 1 {
                stem.clone()
            } else {
                format!("{stem}-{n}")
            }
        })
        .find(|name| !games.has_seat(me, name))
        .expect("some suffix is free");
    let options = GoOptions {
        size,
        opponent: Opponent::Agent(who.to_owned()),
        komi: Komi::DEFAULT,
    };
    let title = format!("Go vs {who} ({size})");
    let mut tell = Tell::default();
    tell.mine(&instance, [Change::Open(options.to_json(), title)])
        .mine(&instance, Change::waiting());
    let text = challenge(games, &mut tell, me, &instance, options, &them, now);
    let text = format!("{text} Your side of the game is open as `{instance}`.");
    Ok((text, tell))
}
