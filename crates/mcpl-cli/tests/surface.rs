//! `mcpl surface` as a process: bad specs are refused by name, and the surface exits when its
//! client closes stdin.

mod support;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use support::{Client, KillableArcade};

#[test]
fn a_bad_server_spec_is_refused_naming_it() {
    let out = Command::new(env!("CARGO_BIN_EXE_mcpl"))
        .args(["surface", "--server", "games=ftp://example.org"])
        .stdin(Stdio::null())
        .output()
        .expect("mcpl runs");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad server spec `games=ftp://example.org`"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn s8_6_the_surface_answers_initialize_and_exits_when_stdin_closes() {
    let mut child = Command::new("timeout")
        .args(["60", env!("CARGO_BIN_EXE_mcpl"), "surface"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("mcpl runs");
    let mut stdin = child.stdin.take().expect("piped");
    let mut stdout = BufReader::new(child.stdout.take().expect("piped"));
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2024-11-05","capabilities":{{}},"clientInfo":{{"name":"t","version":"0"}}}}}}"#
    )
    .expect("write");
    let mut line = String::new();
    stdout.read_line(&mut line).expect("an answer");
    assert!(line.contains(r#""protocolVersion":"2024-11-05""#), "{line}");
    assert!(line.contains(r#""name":"mcpl-surface""#), "{line}");
    drop(stdin);
    let status = child.wait().expect("mcpl ends");
    assert!(status.success(), "{status}");
}

#[test]
fn h57_two_arcade_processes_behind_one_surface_route_by_server() {
    let mcpl = env!("CARGO_BIN_EXE_mcpl");
    let east = format!("east={mcpl} arcade");
    let west = format!("west={mcpl} arcade");
    let mut p = Client::plain(&["surface", "--server", &east, "--server", &west]);
    let tools = p.tools();
    let names: Vec<&str> = tools
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        names.contains(&"east__challenge") && names.contains(&"west__challenge"),
        "{names:?}"
    );

    let (text, err) = p.call(
        "toolsets_open",
        serde_json::json!({"toolset": "go", "options": {"size": 9}}),
    );
    assert!(err, "{text}");
    assert!(text.contains("`east`") && text.contains("`west`"), "{text}");
    let (text, err) = p.call(
        "toolsets_open",
        serde_json::json!({"server": "west", "toolset": "go", "instance": "g", "options": {"size": 9}}),
    );
    assert!(!err, "{text}");
    // `board` exists on both, but only west has an open game: still ambiguous by name.
    let (text, err) = p.call(
        "toolsets_act",
        serde_json::json!({"tool": "board", "args": {}}),
    );
    assert!(
        err && text.contains("`east`") && text.contains("`west`"),
        "{text}"
    );
    let (text, err) = p.call(
        "toolsets_act",
        serde_json::json!({"server": "west", "tool": "board", "args": {}}),
    );
    assert!(!err, "{text}");
    assert_eq!(p.tools(), tools);
}

#[test]
fn h28_a_killed_arcade_process_is_restarted_and_its_lost_game_told_once_without_a_reopen() {
    let arcade = KillableArcade::new("surface-kill");
    let mut p = Client::plain(&["surface", "--server", &arcade.spec]);
    let tools = p.tools();
    let (text, err) = p.call(
        "toolsets_open",
        serde_json::json!({"toolset": "go", "instance": "g", "options": {"size": 9}}),
    );
    assert!(!err, "{text}");
    let (text, err) = p.call(
        "toolsets_act",
        serde_json::json!({"tool": "play", "instance": "g", "args": {"move": "E5"}}),
    );
    assert!(!err, "{text}");

    let first_pid = arcade.kill();

    // Calls meanwhile name the server's state; then the surface reconnects to a new process.
    let mut told = String::new();
    for _ in 0..300 {
        let (text, _) = p.call("toolsets_look", serde_json::json!({}));
        told.push_str(&text);
        let restarted = arcade.pid().is_some_and(|p| p != first_pid);
        if restarted && told.contains("ended while the connection was down") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(told.contains("connection to `arcade` lost"), "{told}");
    assert_eq!(
        told.matches("`go`/`g` ended while the connection was down")
            .count(),
        1,
        "{told}"
    );
    // Nothing was re-opened: the new arcade has no game, and saying so again is not repeated.
    let (text, _) = p.call("toolsets_look", serde_json::json!({"toolset": "go"}));
    assert!(
        text.contains("`go` (arcade calls it \"Go\"): closed"),
        "{text}"
    );
    assert!(!text.contains("ended while"), "{text}");
    assert_eq!(p.tools(), tools);
}

/// Writes `text` to a fresh file under the temp dir; returns its path.
fn temp_file(name: &str, text: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("mcpl-surface-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write");
    path
}

/// The news part of an answer: what follows the first "Toolset update from".
fn news(text: &str) -> &str {
    text.find("Toolset update from")
        .map_or("", |at| &text[at..])
}

#[test]
fn s8_6_a_static_tool_is_callable_before_any_tools_list() {
    let mut p = Client::plain(&["surface"]);
    // No tools/list first: routing is known once the backend is read.
    let (text, err) = p.call(
        "challenge",
        serde_json::json!({"who": "someone-else", "size": 9}),
    );
    assert!(!err, "{text}");
    assert!(
        !text.contains("unknown tool") && !text.contains("no tool"),
        "{text}"
    );
    assert!(text.contains("someone-else"), "{text}");
}

#[test]
fn h42_h44_h50_h54_an_open_result_carries_its_change_with_first_sentences_attributed() {
    let mut p = Client::plain(&["surface"]);
    let (text, err) = p.call(
        "toolsets_open",
        serde_json::json!({"toolset": "go", "instance": "g", "options": {"size": 9}}),
    );
    assert!(!err, "{text}");
    // H42, H44: the open's own change rides with its result, after the result's text (H83).
    assert!(text.starts_with("opened `go`/`g`"), "{text}");
    let told = news(&text);
    assert!(told.contains("- `go`/`g` is open"), "{text}");
    // H54: server-written titles and descriptions are attributed to the server.
    assert!(
        told.contains("(arcade calls it \"Go vs bot (9x9)\")"),
        "{text}"
    );
    // H50: a first sentence is told once per definition (`pass` keeps its definition while
    // it comes and goes; `play` changes with every move, so its sentence is owed again).
    let sentence = "`pass` in `go`/`g` is available: arcade says \"Pass your turn.\"";
    assert_eq!(told.matches(sentence).count(), 1, "{text}");
    let (text, err) = p.call(
        "toolsets_act",
        serde_json::json!({"tool": "play", "instance": "g", "args": {"move": "E5"}}),
    );
    assert!(!err, "{text}");
    let mut later = text;
    for _ in 0..300 {
        if later.contains("`pass` in `go`/`g` is available") {
            break;
        }
        let (text, _) = p.call("toolsets_look", serde_json::json!({"toolset": "lobby"}));
        later.push_str(&text);
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(later.contains("`pass` in `go`/`g` is available"), "{later}");
    assert!(!later.contains(sentence), "told twice:\n{later}");
}

#[test]
fn h41_h43_h48_news_comes_in_read_order_the_final_pass_before_the_close_and_nothing_after() {
    let mut p = Client::plain(&["surface"]);
    let (text, err) = p.call(
        "toolsets_open",
        serde_json::json!({"toolset": "go", "instance": "g", "options": {"size": 9}}),
    );
    assert!(!err, "{text}");
    // The agent passes until the game ends; every answer is kept in order.
    let mut all = Vec::new();
    let end = "`go`/`g` closed; reason: arcade says \"Game over";
    'game: for _ in 0..40 {
        let (text, err) = p.call(
            "toolsets_act",
            serde_json::json!({"tool": "pass", "instance": "g", "args": {}}),
        );
        all.push(text.clone());
        if err || text.contains(end) {
            break;
        }
        // H43: the bot's reply is a push no call claimed; it comes with the next answer.
        for _ in 0..300 {
            let (text, _) = p.call("toolsets_look", serde_json::json!({"toolset": "lobby"}));
            all.push(text.clone());
            if text.contains(end) {
                break 'game;
            }
            if news(&text).contains("`pass` in `go`/`g` is available") {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
    let closing = all
        .iter()
        .position(|t| t.contains(end))
        .unwrap_or_else(|| panic!("the game never ended:\n{}", all.join("\n---\n")));
    let answer = &all[closing];
    // H41: the bot's final pass was read before the close and is told before it.
    let pass = answer
        .find("The bot passed")
        .or_else(|| {
            all[..closing]
                .iter()
                .rev()
                .find_map(|t| t.find("The bot passed").map(|_| 0))
        })
        .unwrap_or_else(|| panic!("no final pass told:\n{}", all.join("\n---\n")));
    if answer.contains("The bot passed") {
        assert!(pass < answer.find(end).unwrap(), "{answer}");
    }
    // Nothing about the instance after its close, in that answer or later ones.
    let after = &answer[answer.find(end).unwrap() + end.len()..];
    assert!(!after.contains("`go`/`g`"), "{answer}");
    for _ in 0..3 {
        let (text, _) = p.call("toolsets_look", serde_json::json!({}));
        all.push(text.clone());
        assert!(!news(&text).contains("`go`/`g`"), "{text}");
    }
    // H48: the end is told once.
    let told: usize = all.iter().map(|t| t.matches(end).count()).sum();
    assert_eq!(told, 1, "{}", all.join("\n---\n"));
}

#[test]
fn h84_h88_a_change_over_the_inline_cap_is_not_cut_but_told_with_the_next_answer() {
    let mut p = Client::plain(&["surface", "--inline-cap", "300"]);
    let (text, err) = p.call(
        "toolsets_open",
        serde_json::json!({"toolset": "go", "instance": "g", "options": {"size": 9}}),
    );
    assert!(!err, "{text}");
    // The result reads whole (the board is past the cap) and carries no part of its change.
    assert!(text.contains("Black (X) to move."), "{text}");
    assert!(!text.contains("Toolset update"), "{text}");
    // Look asks for the news: the whole change comes, uncut.
    let (text, _) = p.call("toolsets_look", serde_json::json!({"toolset": "lobby"}));
    assert!(news(&text).contains("- `go`/`g` is open"), "{text}");
    assert!(
        news(&text).contains("`play` in `go`/`g` is available"),
        "{text}"
    );
}

#[test]
fn a_config_file_serves_its_live_server_and_look_names_the_one_that_cannot_start() {
    let config = temp_file(
        "servers.json",
        &serde_json::json!({"mcpServers": {
            "games": {"command": env!("CARGO_BIN_EXE_mcpl"), "args": ["arcade"]},
            "ghost": {"command": "/nonexistent/x"}
        }})
        .to_string(),
    );
    let config = config.to_str().expect("utf-8 path");
    let mut p = Client::plain(&["surface", "--config", config]);
    let (text, err) = p.call("toolsets_look", serde_json::json!({}));
    assert!(!err, "{text}");
    assert!(
        text.contains(
            "server \"ghost\": down (cannot start \"/nonexistent/x\": No such file or directory)"
        ),
        "{text}"
    );
    assert!(text.contains("server `games`"), "{text}");
    let (text, err) = p.call(
        "toolsets_open",
        serde_json::json!({"toolset": "go", "instance": "g", "options": {"size": 9}}),
    );
    assert!(!err, "{text}");
}

#[test]
fn a_config_with_an_unset_variable_is_refused_at_start_naming_it() {
    let config = temp_file(
        "tokened.json",
        r#"{"mcpServers": {"games": {"url": "http://127.0.0.1:9/mcp",
            "headers": {"Authorization": "Bearer ${MCPL_TEST_UNSET_TOKEN}"}}}}"#,
    );
    let out = Command::new(env!("CARGO_BIN_EXE_mcpl"))
        .args(["surface", "--config"])
        .arg(&config)
        .env_remove("MCPL_TEST_UNSET_TOKEN")
        .stdin(Stdio::null())
        .output()
        .expect("mcpl runs");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("server \"games\"") && err.contains("MCPL_TEST_UNSET_TOKEN is not set"),
        "{err}"
    );
}

#[test]
fn a_dead_http_backend_is_shown_down_with_its_cause_not_as_connected() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let config = temp_file(
        "dead.json",
        &serde_json::json!({"mcpServers": {"web": {"url": url}}}).to_string(),
    );
    let mut p = Client::plain(&["surface", "--config", config.to_str().expect("utf-8")]);
    let (text, _) = p.call("toolsets_look", serde_json::json!({}));
    assert!(
        text.contains(&format!(
            "server \"web\": down (cannot connect to {url}: Connection refused)"
        )),
        "{text}"
    );
    assert!(!text.contains("-32603"), "{text}");
}

#[test]
fn h51_h83_a_look_counts_what_it_restated_as_shown_and_news_follows_the_answer_text() {
    let mut p = Client::plain(&["surface"]);
    let (text, err) = p.call("toolsets_look", serde_json::json!({}));
    assert!(!err, "{text}");
    // The catalog leads with first sentences; the news after it (H83: after the answer's own
    // text) does not repeat what the look just showed (H51).
    let catalog_end = text
        .find("Toolset update from")
        .expect("news after the catalog");
    let catalog = &text[..catalog_end];
    assert!(
        catalog.contains("standings(): arcade says \"Show the wins and losses of every player.\""),
        "{text}"
    );
    let told = news(&text);
    assert!(
        told.contains("- `standings` in `lobby` is available"),
        "{text}"
    );
    assert!(!told.contains("Show the wins and losses"), "{text}");
}
