//! End-to-end: `mcpl surface` driven by independent MCP clients over stdio, the official
//! Python SDK and the official npm SDK (tests/e2e). Each opens a Go game, plays moves through
//! `toolsets_act` from the legal-move enum, reads a push, closes, and checks that
//! `tools/list` returned the same list every time (RFC-014 §8.6).
//!
//! `scripts/test` installs the clients (a venv at `.venv`, `node_modules` under `tests/e2e`).
//! A test whose client is not installed fails, naming the script that installs it: a missing
//! client is never a silent pass.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs one client script with a time limit; returns its stdout after checking it said OK.
fn run_client(program: &Path, script: &str) -> String {
    let out = Command::new("timeout")
        .arg("180")
        .arg(program)
        .arg(root().join("tests/e2e").join(script))
        .arg(env!("CARGO_BIN_EXE_mcpl"))
        .current_dir(root().join("tests/e2e"))
        .output()
        .expect("the client runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.lines().any(|l| l == "OK"),
        "{script} failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    stdout
}

/// The venv's Python, after checking that it has the MCP SDK (a missing SDK fails the test).
fn python_sdk() -> PathBuf {
    let python = root().join(".venv/bin/python");
    let sdk_ok = python.exists()
        && Command::new(&python)
            .args(["-c", "import mcp"])
            .status()
            .is_ok_and(|s| s.success());
    assert!(
        sdk_ok,
        "the Python MCP SDK is not installed in .venv: run `bash scripts/test`, which installs it"
    );
    python
}

#[test]
fn s8_6_python_mcp_sdk_client_plays_through_the_surface_with_a_constant_tool_list() {
    let python = python_sdk();
    let out = run_client(&python, "python_client.py");
    assert!(out.contains("The bot played"), "{out}");
}

/// The Python MCP SDK client over `mcpl surface --config`: a tokened arcade on Streamable
/// HTTP and one on WebSocket, every TCP link cut mid-game by the test's relay; the next moves
/// play on in the same games, and a server whose command does not exist is named by look.
#[test]
fn h28_python_sdk_client_plays_on_after_a_relay_cuts_every_link_to_tokened_backends() {
    let python = python_sdk();
    let out = run_client(&python, "relay_client.py");
    assert!(out.contains("sock: move 1 before the cut"), "{out}");
}

#[test]
fn s8_6_npm_mcp_sdk_client_plays_through_the_surface_with_a_constant_tool_list() {
    let sdk = root().join("tests/e2e/node_modules/@modelcontextprotocol/sdk/package.json");
    let node = Command::new("node").arg("--version").output();
    assert!(
        sdk.exists() && node.is_ok(),
        "node or the npm MCP SDK is not installed in tests/e2e: run `bash scripts/test`, which installs it"
    );
    let out = run_client(Path::new("node"), "node_client.mjs");
    assert!(out.contains("The bot played"), "{out}");
}

/// Host-side toolsets for plain servers (issue 21), through `mcpl surface --config`: the
/// official Python SDK client drives a FastMCP server of 60 tools in three families grouped
/// automatically and by explicit globs (with `autoOpen`), and an npm SDK server grouped
/// automatically. It searches by what a description says, opens, calls, folds in a tool the
/// server added, closes, is refused with the exact open call, and the tool list never
/// changed. Both SDKs and node are required (`scripts/test` installs them).
#[test]
fn plain_servers_behind_host_side_toolsets_with_search_and_a_list_that_never_changes() {
    let python = root().join(".venv/bin/python");
    let sdk = root().join("tests/e2e/node_modules/@modelcontextprotocol/sdk/package.json");
    assert!(
        python.exists() && sdk.exists() && Command::new("node").arg("--version").output().is_ok(),
        "the Python and npm MCP SDKs and node are needed: run scripts/test"
    );
    let out = run_client(&python, "plain_client.py");
    assert!(out.contains("search: 1. tool `web_fetch`"), "{out}");
}
