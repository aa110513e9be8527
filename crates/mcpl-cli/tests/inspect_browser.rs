//! Issue 20: `mcpl arcade --inspect ADDR` and `mcpl surface --inspect ADDR` in a real
//! headless browser (Debian's chromium via chromium-driver and Python selenium, installed by
//! `scripts/test`). Both serve stdio (the page works whatever the main transport).
//!
//! Server view: the page shows a game, then a second one opened after it loaded without a
//! reload, changes on a move, draws one timeline mark per hint change, moves a connection's
//! "last seen" on a ping, and logs no console error. Host view: a plain MCP client drives the surface in front of a real `mcpl arcade`;
//! the page shows the backend, its rev and open games, follows a second game, a move and the
//! news it leaves waiting, and the list's change counter stays 0. The screenshots land in
//! target/tmp and, copied on purpose, in docs/inspector.png and docs/inspector-host.png.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use mcpl_rpc::transport::child::StderrMode;
use mcpl_rpc::{Event, Limits, Peer, PeerConfig, RequestOptions, Transport};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

const WAIT: Duration = Duration::from_secs(60);

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The highest rev in the hint changes `value` (a result, or push params) carries.
fn rev_in(value: &Value) -> u64 {
    let hints = value
        .pointer("/_meta/mcpl~1hints")
        .or_else(|| value.get("hints"))
        .unwrap_or(value);
    hints.get("rev").and_then(Value::as_u64).unwrap_or(0)
}

struct Client {
    peer: Peer,
    events: mcpl_rpc::Events,
    rev: u64,
}

impl Client {
    async fn ask(&mut self, method: &str, params: Value) -> Value {
        let value = self
            .peer
            .request_value(method, Some(params), RequestOptions::timeout(WAIT))
            .await
            .unwrap_or_else(|e| panic!("{method} failed: {e}"))
            .value;
        self.rev = self.rev.max(rev_in(&value));
        value
    }

    /// Reads what the server sends on its own until a `push/event` with hints arrives.
    async fn until_push(&mut self) {
        let wait = async {
            loop {
                match self.events.recv().await {
                    Some(Event::Request {
                        request, responder, ..
                    }) if request.method == "push/event" => {
                        let _ = responder.respond(json!({}));
                        let params = request.params.unwrap_or(Value::Null);
                        self.rev = self.rev.max(rev_in(&params));
                        if params.get("hints").is_some() {
                            return;
                        }
                    }
                    Some(Event::Notification { notification, .. })
                        if notification.method == "tools/hints" =>
                    {
                        let params = notification.params.unwrap_or(Value::Null);
                        self.rev = self.rev.max(rev_in(&params));
                    }
                    Some(_) => {}
                    None => panic!("the arcade closed"),
                }
            }
        };
        tokio::time::timeout(WAIT, wait)
            .await
            .expect("the bot's move is pushed");
    }
}

/// The browser side, one command at a time (tests/e2e/inspect_browser.py).
struct Browser {
    stdin: tokio::process::ChildStdin,
    stdout: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
    child: tokio::process::Child,
}

impl Browser {
    /// Starts the browser script on `url`, saving its screenshot to `shot`.
    fn start(url: &str, shot: &Path) -> Browser {
        let mut child = tokio::process::Command::new(root().join(".venv/bin/python"))
            .arg(root().join("tests/e2e/inspect_browser.py"))
            .arg(url)
            .arg(shot)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("python starts");
        Browser {
            stdin: child.stdin.take().expect("piped stdin"),
            stdout: BufReader::new(child.stdout.take().expect("piped stdout")).lines(),
            child,
        }
    }

    /// Reads the browser's answer; returns what follows its `ok`.
    async fn reply(&mut self, what: &str) -> String {
        let line = tokio::time::timeout(WAIT, self.stdout.next_line())
            .await
            .unwrap_or_else(|_| panic!("the browser did not answer `{what}`"))
            .expect("the browser's stdout");
        match line {
            Some(l) if l.starts_with("ok") => l[2..].trim().to_owned(),
            other => {
                // It may be waiting for a command: stop it rather than wait for it.
                let _ = self.child.start_kill();
                let status = self.child.wait().await;
                panic!("browser step `{what}` failed: {other:?} ({status:?}; its stderr above)")
            }
        }
    }

    async fn step(&mut self, command: &str) -> String {
        self.stdin
            .write_all(format!("{command}\n").as_bytes())
            .await
            .expect("the browser reads commands");
        self.reply(command).await
    }
}

fn need(path: &str) {
    assert!(
        Path::new(path).exists(),
        "{path} is missing: run scripts/test, which installs chromium, chromium-driver and the test venv"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue20_the_inspector_page_follows_games_live_in_a_real_browser() {
    let python = root().join(".venv/bin/python");
    need("/usr/bin/chromium");
    need("/usr/bin/chromedriver");
    need(python.to_str().expect("a UTF-8 path"));

    let (transport, url) = start_with_inspector(
        &["arcade", "--inspect", "127.0.0.1:0"],
        "mcpl arcade: inspect at ",
    )
    .await;
    let (peer, events) = Peer::start(transport, PeerConfig::default());
    let mut client = Client {
        peer,
        events,
        rev: 0,
    };
    client
        .ask(
            "initialize",
            json!({"protocolVersion": "2025-06-18",
                   "capabilities": {"experimental": {"mcpl": {"version": "0.5", "toolHints": true,
                       "pushEvents": true, "featureSets": true}}},
                   "clientInfo": {"name": "inspect-browser", "version": "1"}}),
        )
        .await;
    client
        .peer
        .notify_value("notifications/initialized", None)
        .expect("the peer is open");
    client
        .ask(
            "featureSets/update",
            json!({"effectiveCapabilities": ["pushEvents"]}),
        )
        .await;
    client
        .ask(
            "toolsets/open",
            json!({"toolset": "go", "instance": "first-game", "options": {"size": 9}}),
        )
        .await;

    let shot = Path::new(env!("CARGO_TARGET_TMPDIR")).join("inspector.png");
    let mut browser = Browser::start(&url, &shot);
    browser.reply("load the page").await;
    browser.step("wait-instance first-game").await;
    browser.step(&format!("wait-marks {}", client.rev)).await;

    // A second game after the page loaded: it appears without a reload.
    client
        .ask(
            "toolsets/open",
            json!({"toolset": "go", "instance": "second-game", "options": {"size": 9}}),
        )
        .await;
    browser.step("wait-instance second-game").await;
    browser.step(&format!("wait-marks {}", client.rev)).await;

    // A move, and the bot's answer pushed back: each hint change is one more mark.
    let before = client.rev;
    client
        .ask(
            "tools/call",
            json!({"name": "play", "arguments": {"move": "E5"},
                   "_meta": {"mcpl/instance": "second-game"}}),
        )
        .await;
    client.until_push().await;
    assert!(
        client.rev > before,
        "the move and the bot's answer took revs"
    );
    browser.step(&format!("wait-marks {}", client.rev)).await;
    browser.step("wait-text push/event").await;

    // "Last seen" follows any inbound message, not only hint records: a ping moves it.
    let seen_cell = "#connections tbody tr td:nth-child(4)";
    let before: f64 = browser
        .step(&format!("read {seen_cell}"))
        .await
        .split_whitespace()
        .next()
        .and_then(|s| s.parse().ok())
        .expect("last seen reads `N.N s`");
    // Far enough apart for the page's tenths of a second to tell them apart.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    client.ask("ping", json!({})).await;
    browser
        .step(&format!("wait-above {seen_cell}|{}", before + 1.0))
        .await;
    browser.step("finish").await;
    let _ = browser.child.wait().await;
    assert!(shot.exists(), "the screenshot was written");
    client.peer.close().await;
}

/// Starts `mcpl` with `args` on stdio and reads the inspector URL it prints on stderr after
/// `prefix`.
async fn start_with_inspector(args: &[&str], prefix: &str) -> (Transport, String) {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_mcpl"));
    command.args(args);
    let mut transport =
        Transport::child(command, StderrMode::Capture, Limits::default()).expect("mcpl starts");
    let mut stderr = transport.take_stderr().expect("captured stderr");
    let url = tokio::time::timeout(WAIT, async {
        loop {
            let line = stderr
                .next_line()
                .await
                .expect("mcpl prints its inspect URL");
            if let Some(url) = line.strip_prefix(prefix) {
                return url.to_owned();
            }
        }
    })
    .await
    .expect("the inspect URL within the wait");
    // Keep reading: a closed pipe would fail the process's next write to stderr.
    tokio::spawn(async move {
        while let Some(line) = stderr.next_line().await {
            eprintln!("mcpl: {line}");
        }
    });
    (transport, url)
}

/// A plain MCP client: no MCPL, tools only. Answers whatever the surface asks of it.
struct PlainClient {
    peer: Peer,
}

impl PlainClient {
    async fn start(transport: Transport) -> PlainClient {
        let (peer, mut events) = Peer::start(transport, PeerConfig::default());
        tokio::spawn(async move {
            while let Some(event) = events.recv().await {
                if let Event::Request { responder, .. } = event {
                    let _ = responder.respond(json!({}));
                }
            }
        });
        let client = PlainClient { peer };
        client
            .ask(
                "initialize",
                json!({"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "plain-browser-test", "version": "1"}}),
            )
            .await;
        client
            .peer
            .notify_value("notifications/initialized", None)
            .expect("the peer is open");
        client
    }

    async fn ask(&self, method: &str, params: Value) -> Value {
        self.peer
            .request_value(method, Some(params), RequestOptions::timeout(WAIT))
            .await
            .unwrap_or_else(|e| panic!("{method} failed: {e}"))
            .value
    }

    /// Calls a tool; returns its text, failing the test on an error result.
    async fn call(&self, tool: &str, args: Value) -> String {
        let r = self
            .ask("tools/call", json!({"name": tool, "arguments": args}))
            .await;
        let text: Vec<&str> = r["content"]
            .as_array()
            .expect("content")
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect();
        let text = text.join("\n");
        assert_ne!(r["isError"], json!(true), "{tool}: {text}");
        text
    }
}

/// The backend's rev as the page shows it.
async fn rev_shown(browser: &mut Browser) -> u64 {
    let text = browser
        .step(r#"read #backends tr[data-server="arcade"] td.rev"#)
        .await;
    text.parse()
        .unwrap_or_else(|_| panic!("the rev cell reads {text:?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue20_the_surface_host_view_follows_a_plain_client_live_in_a_real_browser() {
    need("/usr/bin/chromium");
    need("/usr/bin/chromedriver");
    need(
        root()
            .join(".venv/bin/python")
            .to_str()
            .expect("a UTF-8 path"),
    );
    let backend = format!("arcade={} arcade", env!("CARGO_BIN_EXE_mcpl"));
    let (transport, url) = start_with_inspector(
        &["surface", "--server", &backend, "--inspect", "127.0.0.1:0"],
        "mcpl surface: inspect at ",
    )
    .await;
    eprintln!("the surface's inspector: {url}");
    let client = PlainClient::start(transport).await;
    let first_list = client.ask("tools/list", json!({})).await;
    let opened = client
        .call(
            "toolsets_open",
            json!({"toolset": "go", "instance": "first-game", "options": {"size": 9}}),
        )
        .await;
    assert!(opened.contains("first-game"), "{opened}");

    let shot = Path::new(env!("CARGO_TARGET_TMPDIR")).join("inspector-host.png");
    let mut browser = Browser::start(&url, &shot);
    browser.reply("load the page").await;
    let game = |name: &str| {
        format!(r#"wait-css #backends tr[data-server="arcade"] .toolset[data-instance="{name}"]"#)
    };
    browser.step(&game("first-game")).await;
    browser
        .step(r#"wait-css-text #backends tr[data-server="arcade"] td:nth-child(2)|connected"#)
        .await;
    let rev_open = rev_shown(&mut browser).await;
    assert!(rev_open > 0, "the open took a rev");
    browser.step("wait-css-text #list-changes|0").await;

    // A second game after the page loaded: it and its rev arrive without a reload.
    client
        .call(
            "toolsets_open",
            json!({"toolset": "go", "instance": "second-game", "options": {"size": 9}}),
        )
        .await;
    browser.step(&game("second-game")).await;
    let rev_second = rev_shown(&mut browser).await;
    assert!(rev_second > rev_open, "{rev_second} after {rev_open}");

    // A move: the bot's answer is pushed to the surface, which owes it to the plain client
    // until its next call; the page shows it waiting, then told.
    let moved = client
        .call(
            "toolsets_act",
            json!({"tool": "play", "instance": "second-game", "args": {"move": "E5"}}),
        )
        .await;
    assert!(!moved.is_empty());
    browser.step("wait-css #news .news pre").await;
    let news = browser.step("read #news .news pre").await;
    assert!(news.contains("arcade"), "{news}");
    let rev_moved = rev_shown(&mut browser).await;
    assert!(rev_moved > rev_second, "{rev_moved} after {rev_second}");
    browser.step("shot").await;
    let look = client.call("toolsets_look", json!({})).await;
    assert!(!look.is_empty());
    browser.step("wait-text Nothing waiting").await;

    // The model-facing list never changed: the page's counter and the client agree.
    browser.step("wait-css-text #list-changes|0").await;
    assert_eq!(client.ask("tools/list", json!({})).await, first_list);
    browser.step("finish").await;
    let _ = browser.child.wait().await;
    assert!(shot.exists(), "the screenshot was written");
    client.peer.close().await;
}

/// Sends one raw HTTP/1.1 GET for `path` to `addr` with `headers`; returns the status line.
async fn status_of(addr: &str, path: &str, headers: &[(&str, &str)]) -> String {
    let mut stream = tokio::net::TcpStream::connect(addr)
        .await
        .expect("the inspector accepts");
    let mut request = format!("GET {path} HTTP/1.1\r\nConnection: close\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    stream
        .write_all(request.as_bytes())
        .await
        .expect("the request is sent");
    let mut lines = BufReader::new(stream).lines();
    tokio::time::timeout(WAIT, lines.next_line())
        .await
        .expect("an answer within the wait")
        .expect("a readable answer")
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue20_host_and_origin_are_checked_on_loopback_and_a_token_is_required_off_it() {
    // The server view (`mcpl arcade`) and the host view (`mcpl surface`) share the checks.
    for command in ["arcade", "surface"] {
        let (transport, url) = start_with_inspector(
            &[command, "--inspect", "127.0.0.1:0"],
            &format!("mcpl {command}: inspect at "),
        )
        .await;
        let addr = url
            .trim_start_matches("http://")
            .trim_end_matches('/')
            .to_owned();
        let ok = status_of(&addr, "/", &[("Host", &addr)]).await;
        assert!(ok.contains(" 200 "), "{command}: {ok}");
        // DNS rebinding: a foreign name as Host, on the page and on its live stream.
        for path in ["/", "/events"] {
            let rebound = status_of(&addr, path, &[("Host", "evil.example")]).await;
            assert!(rebound.contains(" 403 "), "{command} {path}: {rebound}");
            let foreign = status_of(
                &addr,
                path,
                &[("Host", &addr), ("Origin", "http://evil.example")],
            )
            .await;
            assert!(foreign.contains(" 403 "), "{command} {path}: {foreign}");
        }
        let stream = status_of(
            &addr,
            "/events",
            &[("Host", &addr), ("Origin", &format!("http://{addr}"))],
        )
        .await;
        assert!(stream.contains(" 200 "), "{command}: {stream}");
        drop(transport);

        // Off loopback without a token: refused at start, with the reason, before serving.
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_mcpl"))
            .args([command, "--inspect", "0.0.0.0:0"])
            .stdin(Stdio::null())
            .output()
            .expect("mcpl runs");
        assert!(!out.status.success(), "{command}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--inspect-token"), "{command}: {err}");
        assert!(out.stdout.is_empty(), "{command} served before refusing");
    }
}
