//! Shared by the `mcpl` binary's tests: [`Client`], a line-based MCP client of an `mcpl`
//! process on stdio (`mcpl surface ...`, or `mcpl arcade` directly), and [`KillableArcade`],
//! an arcade backend a test can kill.
//!
//! Use it from a test file with `mod support;`:
//!
//! ```ignore
//! let mut c = support::Client::plain(&["surface", "--server", &spec]);
//! let tools = c.tools();                                   // the `tools/list` tools
//! let (text, is_error) = c.call("toolsets_look", json!({})); // a `tools/call`
//! let result = c.request("toolsets/list", json!({}));       // any request's result
//! ```
//!
//! The process runs under `timeout 120`, its stderr goes to the test's, and it is killed when
//! the client is dropped. A request the process sends the client (such as `push/event`) fails
//! the test unless [`Client::answer_requests`] said how to answer it.

#![allow(dead_code)] // each test file uses its own part

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{Value, json};

/// How a [`Client`] answers a request from the process: `Ok(result)` or `Err(error object)`.
pub type Answerer = Box<dyn FnMut(&Value) -> Result<Value, Value>>;

/// A line-based MCP client of an `mcpl` process.
pub struct Client {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next: u64,
    /// The `initialize` result.
    pub init: Value,
    /// The notifications the process sent while answers were awaited, in arrival order.
    pub notes: Vec<Value>,
    answerer: Option<Answerer>,
}

impl Client {
    /// Starts `mcpl ARGS`, sends `initialize` with `capabilities`, then
    /// `notifications/initialized`.
    pub fn start(args: &[&str], capabilities: Value) -> Client {
        let mut child = Command::new("timeout")
            .arg("120")
            .arg(env!("CARGO_BIN_EXE_mcpl"))
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("mcpl runs");
        let stdin = child.stdin.take().expect("piped");
        let stdout = BufReader::new(child.stdout.take().expect("piped"));
        let mut c = Client {
            child,
            stdin,
            stdout,
            next: 0,
            init: Value::Null,
            notes: Vec::new(),
            answerer: None,
        };
        c.init = c.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": capabilities,
                "clientInfo": {"name": "mcpl-cli-tests", "version": "0"}}),
        );
        c.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        c
    }

    /// A plain MCP client (no capabilities) of `mcpl ARGS`.
    pub fn plain(args: &[&str]) -> Client {
        Client::start(args, json!({}))
    }

    /// From now on, requests from the process are answered by `answerer`.
    pub fn answer_requests(
        &mut self,
        answerer: impl FnMut(&Value) -> Result<Value, Value> + 'static,
    ) {
        self.answerer = Some(Box::new(answerer));
    }

    /// Writes one message line.
    pub fn send(&mut self, msg: Value) {
        writeln!(self.stdin, "{msg}").expect("write");
    }

    /// Sends a request and reads until its answer; returns its result. An error answer fails
    /// the test. Notifications read meanwhile go to [`Client::notes`]; requests are answered.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            let n = self.stdout.read_line(&mut line).expect("read");
            assert!(n > 0, "mcpl closed stdout while `{method}` was pending");
            let v: Value = serde_json::from_str(&line).expect("a JSON line");
            if v.get("method").is_none() {
                assert_eq!(v["id"], json!(id), "an answer to nothing pending: {v}");
                assert!(v.get("error").is_none(), "`{method}` failed: {v}");
                return v["result"].clone();
            }
            if v.get("id").is_none() {
                self.notes.push(v);
                continue;
            }
            let Some(answerer) = self.answerer.as_mut() else {
                panic!("a request this client does not answer: {v}");
            };
            let answer = match answerer(&v) {
                Ok(r) => json!({"jsonrpc": "2.0", "id": v["id"], "result": r}),
                Err(e) => json!({"jsonrpc": "2.0", "id": v["id"], "error": e}),
            };
            self.send(answer);
        }
    }

    /// The tools of `tools/list`.
    pub fn tools(&mut self) -> Value {
        self.request("tools/list", json!({}))["tools"].clone()
    }

    /// Calls a tool; returns its text blocks joined by newlines, and whether it is an error.
    pub fn call(&mut self, name: &str, args: Value) -> (String, bool) {
        let r = self.request("tools/call", json!({"name": name, "arguments": args}));
        let text: Vec<&str> = r["content"]
            .as_array()
            .expect("content")
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect();
        (text.join("\n"), r["isError"] == json!(true))
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An `mcpl arcade` backend for `mcpl surface --server` that writes its process id to a file,
/// so a test can kill it and see it restarted. The file's folder is removed on drop.
pub struct KillableArcade {
    /// The `--server` spec: `arcade=sh -c 'echo $$ > PIDFILE; exec mcpl arcade'`.
    pub spec: String,
    dir: std::path::PathBuf,
}

impl KillableArcade {
    /// A backend named `arcade` whose pid file lives in a fresh folder named by `tag`.
    pub fn new(tag: &str) -> KillableArcade {
        let dir = std::env::temp_dir().join(format!("mcpl-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let spec = format!(
            "arcade=sh -c 'echo $$ > {}; exec {} arcade'",
            dir.join("pid").display(),
            env!("CARGO_BIN_EXE_mcpl")
        );
        KillableArcade { spec, dir }
    }

    /// The process id the running backend wrote, if it wrote one.
    pub fn pid(&self) -> Option<String> {
        let pid = std::fs::read_to_string(self.dir.join("pid")).ok()?;
        Some(pid.trim().to_owned())
    }

    /// Kills the running backend with SIGKILL; returns its process id.
    pub fn kill(&self) -> String {
        let pid = self.pid().expect("the arcade wrote its pid");
        let killed = Command::new("kill")
            .args(["-9", &pid])
            .status()
            .expect("kill runs");
        assert!(killed.success(), "kill -9 {pid}");
        pid
    }
}

impl Drop for KillableArcade {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
