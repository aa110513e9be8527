//! The lobby's and the tutor's texts: standings, your games, the rules.

use mcpl_server::Principal;

use crate::arcade::State;
use crate::go::Color;

/// One player's results.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Record {
    /// Games won.
    pub wins: u32,
    /// Games lost.
    pub losses: u32,
    /// Games drawn.
    pub draws: u32,
}

/// The standings, best first.
pub(crate) fn standings(state: &State) -> String {
    if state.standings.is_empty() {
        return "No game has finished yet.".to_owned();
    }
    let mut rows: Vec<_> = state.standings.iter().collect();
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
pub(crate) fn games(state: &State, me: &Principal) -> String {
    let mut out = String::new();
    let mut mine: Vec<_> = state
        .seats
        .iter()
        .filter(|((p, _), _)| p == me)
        .map(|((_, instance), id)| (instance.clone(), *id))
        .collect();
    mine.sort();
    for (instance, id) in &mine {
        let table = &state.tables[id];
        let Some(color) = table.color_of(me, instance) else {
            continue;
        };
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
    for table in state.tables.values() {
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
