//! Games between two agents: a challenge creates the challenger's side and pushes the
//! challenged agent a suggestion to open its own (§7: a suggestion opens nothing); opening
//! `go` with the challenger as `opponent` accepts.

use std::time::Instant;

use mcpl_server::{Context, Event, OpenReply, Principal};
use serde_json::{Map, Value};

use crate::arcade::{Arcade, Challenge, State, instance_for, show_turn};
use crate::catalog::GO;
use crate::error::ArcadeError;
use crate::go::{BoardSize, Color, Komi};
use crate::options::{GoOptions, Opponent};
use crate::table::{Seat, Table};

impl Arcade {
    pub(crate) fn accept_or_challenge(
        &self,
        state: &mut State,
        ctx: &mut Context,
        instance: &str,
        options: GoOptions,
        who: &str,
        now: Instant,
    ) -> Result<OpenReply, ArcadeError> {
        let me = ctx.principal().clone();
        if who == me.id() {
            return Err(ArcadeError::SelfChallenge);
        }
        let them = Principal::authenticated(who);
        let size = options.size;
        let pending = state
            .challenges
            .iter()
            .position(|c| c.to == me && c.from == them);
        let Some(at) = pending else {
            // No challenge from them: this open challenges them.
            let text = self.challenge(state, ctx, instance, options, &them, now);
            ctx.here()
                .hide("play")
                .hide("pass")
                .show("board")
                .show("resign");
            return Ok(OpenReply::text(text).title(format!("Go vs {who} ({size})")));
        };
        let id = state.challenges[at].table;
        let table = state
            .tables
            .get_mut(&id)
            .expect("a challenge names a live table");
        if table.options().size != size {
            let lines = table.options().size.lines();
            return Err(ArcadeError::SizeMismatch {
                who: who.to_owned(),
                size: table.options().size.to_string(),
                lines,
            });
        }
        table.join(Color::White, instance, now);
        ctx.here()
            .hide("play")
            .hide("pass")
            .show("board")
            .show("resign");
        let board = table.game().render();
        if let Some((black, their_instance)) = table.seat(Color::Black).joined() {
            let (black, their_instance) = (black.clone(), their_instance.to_owned());
            let update = ctx.update_for(&black);
            show_turn(&mut update.instance(GO, &their_instance), table);
            update.event(
                Event::text(format!(
                    "{} accepted your challenge. You are Black (X); your move.\n\n{board}",
                    me.id()
                ))
                .about(GO, Some(&their_instance)),
            );
        }
        state.challenges.remove(at);
        state.seats.insert((me, instance.to_owned()), id);
        Ok(OpenReply::text(format!(
            "You accepted {who}'s challenge: {size}, komi {}. You are White (O); {who} moves first.\n\n{board}",
            options.komi
        ))
        .title(format!("Go vs {who} ({size})")))
    }

    /// Creates a table where the caller (Black, in `instance`) waits for `them`, and pushes
    /// them the challenge with a suggestion to open their side (§7: it opens nothing).
    fn challenge(
        &self,
        state: &mut State,
        ctx: &mut Context,
        instance: &str,
        options: GoOptions,
        them: &Principal,
        now: Instant,
    ) -> String {
        let me = ctx.principal().clone();
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
        let id = state.next_table + 1;
        let table = Table::new(options, black, white, self.bot_config(id), now);
        state.add(table);
        state.challenges.push(Challenge {
            table: id,
            from: me.clone(),
            to: them.clone(),
        });
        let their_instance = instance_for(me.id());
        let update = ctx.update_for(them);
        update.suggest_open(
            GO,
            Some(&their_instance),
            Some(accept.to_json()),
            format!("{} challenged you to {size}", me.id()),
        );
        update.event(Event::text(format!(
            "{} challenges you to a game of Go on {size}; you would play White. To accept, open \
             `go` with options {}.",
            me.id(),
            accept.to_json()
        )));
        format!(
            "Challenge sent to {}. You are Black (X) and move first once they accept.",
            them.id()
        )
    }

    pub(crate) fn challenge_tool(
        &self,
        ctx: &mut Context,
        args: &Map<String, Value>,
        now: Instant,
    ) -> Result<String, ArcadeError> {
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
        let me = ctx.principal().clone();
        if who == me.id() {
            return Err(ArcadeError::SelfChallenge);
        }
        let them = Principal::authenticated(who);
        let mut state = self.lock();
        if let Some(c) = state
            .challenges
            .iter()
            .find(|c| c.from == them && c.to == me)
        {
            let size = state.tables[&c.table].options().size.lines();
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
            .find(|name| !state.seats.contains_key(&(me.clone(), name.clone())))
            .expect("some suffix is free");
        let options = GoOptions {
            size,
            opponent: Opponent::Agent(who.to_owned()),
            komi: Komi::DEFAULT,
        };
        let title = format!("Go vs {who} ({size})");
        ctx.update()
            .instance(GO, &instance)
            .open(options.to_json(), Some(&title))
            .hide("play")
            .hide("pass")
            .show("board")
            .show("resign");
        let text = self.challenge(&mut state, ctx, &instance, options, &them, now);
        Ok(format!(
            "{text} Your side of the game is open as `{instance}`."
        ))
    }
}
