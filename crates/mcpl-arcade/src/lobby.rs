//! The lobby's and the tutor's texts: standings, your games, the rules.

use mcpl_server::Principal;

use crate::go::{Color, Move, Played};
use crate::store::Games;
pub use crate::store::Record;

/// "You played D4, capturing 2." and the like.
pub(crate) fn describe(who: &str, played: &Played) -> String {
    let mut text = match played.turn.mv {
        Move::Play(point) => format!("{who} played {point}"),
        Move::Pass => format!("{who} passed"),
        Move::Resign => format!("{who} resigned"),
    };
    match played.turn.captured.len() {
        0 => {}
        1 => text.push_str(", capturing 1 stone"),
        n => text.push_str(&format!(", capturing {n} stones")),
    }
    text.push('.');
    text
}

/// An instance name for a game against `id`: `vs-` and the id's name-safe characters.
pub(crate) fn instance_for(id: &str) -> String {
    let safe: String = id
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .take(28)
        .collect();
    if safe.is_empty() {
        "vs-agent".to_owned()
    } else {
        format!("vs-{safe}")
    }
}

/// The standings, best first.
pub(crate) fn standings(games: &Games) -> String {
    if games.standings().is_empty() {
        return "No game has finished yet.".to_owned();
    }
    let mut rows: Vec<_> = games.standings().iter().collect();
    rows.sort_by(|(a, ra), (b, rb)| {
        rb.wins
            .cmp(&ra.wins)
            .then(ra.losses.cmp(&rb.losses))
            .then(a.cmp(b))
    });
    let mut out = String::from("Standings (wins-losses-draws):\n");
    for (name, r) in rows {
        out.push_str(&format!("- {name}: {}-{}-{}\n", r.wins, r.losses, r.draws));
    }
    out
}

/// The caller's games and the challenges that wait for it.
pub(crate) fn games(games: &Games, me: &Principal) -> String {
    let mut out = String::new();
    let mut mine: Vec<_> = games
        .tables()
        .flat_map(|(id, table)| {
            [Color::Black, Color::White]
                .into_iter()
                .filter_map(move |c| match table.seat(c).joined() {
                    Some((p, instance)) if p == me => Some((instance, id, table, c)),
                    _ => None,
                })
        })
        .collect();
    mine.sort_by_key(|&(instance, id, _, _)| (instance, id));
    for &(instance, _, table, color) in &mine {
        let game = table.game();
        let status = if !table.started() {
            "waiting for them to accept".to_owned()
        } else if game.to_move() == color {
            "your move".to_owned()
        } else {
            "their move".to_owned()
        };
        out.push_str(&format!(
            "- `{instance}`: {} vs {}, you are {color}, move {}, {status}\n",
            table.options().size,
            table.seat(color.opponent()).name(),
            game.history().len() + 1,
        ));
    }
    for (_, table) in games.tables() {
        let white = table.seat(Color::White);
        if white.principal() == Some(me) && white.joined().is_none() {
            out.push_str(&format!(
                "- challenge from {}: {}; open `go` with options {{\"size\": {}, \"opponent\": \"{}\"}} to accept\n",
                table.seat(Color::Black).name(),
                table.options().size,
                table.options().size.lines(),
                table.seat(Color::Black).name(),
            ));
        }
    }
    if out.is_empty() {
        "You have no games and no challenges.".to_owned()
    } else {
        format!("Your games:\n{out}")
    }
}

/// The rules as the arcade applies them.
pub(crate) const RULES: &str = "\
Go, as the arcade plays it:
- Black moves first; players alternate placing one stone on an empty point, or pass.
- Points are named by a column letter (A-T, no I) and a row number from 1 at the bottom: D4.
- A group of stones with no empty neighbouring point (liberty) is captured and removed.
- Suicide is not allowed: a move must leave its stone a liberty, unless it captures.
- Positional superko: no move may recreate an earlier whole-board position (so a ko cannot
  be retaken at once).
- Two passes in a row end the game. Area scoring: your stones plus the empty points only you
  surround; White adds komi (7.5 unless set). Every stone left on the board counts as alive,
  so capture dead stones before passing.
- You may resign at any time; closing a game forfeits it.";
