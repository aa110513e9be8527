//! `mcpl conformance` end to end through real processes: the server suite against the arcade
//! with its fixture contract (`mcpl arcade --conformance`, on stdio and on WebSocket with a
//! shared principal), and the host suite against the surface host (`mcpl surface`).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Output, Stdio};

use serde_json::Value;

const MCPL: &str = env!("CARGO_BIN_EXE_mcpl");

/// Vectors whose rule binds only the host: the server suite does not report them.
const HOST_ONLY: [&str; 8] = ["v12", "v19", "v20", "v21", "v24", "v25", "v35", "v36"];
/// Vectors that need two connections of one principal, which a command target cannot give
/// (it starts a process per connection): not applicable there, counted apart.
const SHARED: [&str; 3] = ["v09", "v14", "v32"];

fn conformance(args: &[&str]) -> (Output, Value) {
    let out = Command::new(MCPL)
        .arg("conformance")
        .args(args)
        .output()
        .expect("the mcpl binary runs");
    let report = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "`mcpl conformance {args:?}` printed no JSON report ({e}):\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out, report)
}

/// A report's checks as `(id, result, reason)`.
fn checks(report: &Value) -> Vec<(String, String, String)> {
    report["checks"]
        .as_array()
        .expect("the report lists its checks")
        .iter()
        .map(|c| {
            let field = |k: &str| c[k].as_str().unwrap_or_default().to_owned();
            (field("id"), field("result"), field("reason"))
        })
        .collect()
}

/// A scratch file path under the system temp directory, unique to this test process.
fn scratch(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!(
        "mcpl-cli-conformance-{}-{name}",
        std::process::id()
    ))
}

#[test]
fn s13_the_arcade_with_its_fixture_passes_the_server_suite() {
    let junit = scratch("server.xml");
    let junit_arg = junit.to_string_lossy().into_owned();
    let (out, report) = conformance(&[
        "server",
        "--json",
        "--junit",
        &junit_arg,
        "--",
        MCPL,
        "arcade",
        "--conformance",
    ]);
    let checks = checks(&report);
    assert_eq!(checks.len(), 38 - HOST_ONLY.len(), "{report:#}");
    for (id, result, reason) in &checks {
        match result.as_str() {
            "pass" if !SHARED.contains(&id.as_str()) => {}
            "n/a" if SHARED.contains(&id.as_str()) => {
                assert!(reason.contains("one principal"), "{id}: {reason}")
            }
            _ => panic!("{id}: {result} {reason}\n{report:#}"),
        }
    }
    assert_eq!(
        report["summary"]["not_applicable"],
        SHARED.len(),
        "{report:#}"
    );
    assert_eq!(out.status.code(), Some(0), "{report:#}");
    let xml = std::fs::read_to_string(&junit).expect("--junit writes its file");
    let _ = std::fs::remove_file(&junit);
    assert!(
        xml.contains("failures=\"0\"") && xml.contains("v38"),
        "{xml}"
    );
}

/// Kills the arcade when the test ends, pass or fail.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// §5.6: with `--listen` and a token map, connections bearing one token are one principal,
/// so `--url --token` runs every server vector, the three a command target cannot among them.
#[test]
fn v14_the_arcade_on_websocket_shares_a_principal_by_token() {
    let mut child = Command::new(MCPL)
        .args(["arcade", "--conformance", "--listen", "ws://127.0.0.1:0"])
        .args(["--token", "t-alice=alice"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the arcade starts");
    let stderr = child.stderr.take().expect("piped stderr");
    let arcade = Killed(child);
    let mut line = String::new();
    BufReader::new(stderr)
        .read_line(&mut line)
        .expect("reads the arcade's stderr");
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("ws://"))
        .unwrap_or_else(|| panic!("the arcade names its URL: {line}"))
        .to_owned();
    let args = vec!["server", "--json", "--url", &url, "--token", "t-alice"];
    let (out, report) = conformance(&args);
    let checks = checks(&report);
    assert_eq!(checks.len(), 38 - HOST_ONLY.len(), "{report:#}");
    for (id, result, reason) in &checks {
        assert_eq!(result, "pass", "{id}: {reason}\n{report:#}");
    }
    assert_eq!(out.status.code(), Some(0));
    drop(arcade);
}

/// The surface passes every host check, the 18 host vectors and the 8 host rules: with the
/// arcade's two server runs, all 38 vectors pass through the `mcpl` binary.
#[test]
fn s13_the_surface_passes_the_host_suite() {
    let (out, report) =
        conformance(&["host", "--json", "--", MCPL, "surface", "--server", "{url}"]);
    let checks = checks(&report);
    assert_eq!(checks.len(), 18 + 8, "{report:#}");
    for (id, result, reason) in &checks {
        assert_eq!(result, "pass", "{id}: {reason}\n{report:#}");
    }
    assert_eq!(out.status.code(), Some(0), "{report:#}");
}

#[test]
fn a_target_is_required_and_a_bad_check_id_is_refused_with_status_2() {
    for args in [
        &["conformance", "server"][..],
        &["conformance", "host"][..],
        &["conformance", "server", "--only", "v99", "--", "x"][..],
    ] {
        let out = Command::new(MCPL).args(args).output().expect("runs");
        assert_eq!(out.status.code(), Some(2), "mcpl {args:?}");
        assert!(out.stdout.is_empty(), "mcpl {args:?} printed a report");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("mcpl conformance"), "mcpl {args:?}: {err}");
    }
}
