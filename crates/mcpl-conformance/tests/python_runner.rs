//! `conformance/run.py`, the second runner over `conformance/vectors.json` (Python, standard
//! library only), judged against the reference fixture through the stdio adapter protocol:
//! the unbroken fixture passes every scripted vector, a broken one fails the vector it breaks,
//! and an expectation changed in a copy of the file fails the unbroken fixture. It needs
//! `python3`, which the test command's environment has; without it the test fails.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const FIXTURE: &str = env!("CARGO_BIN_EXE_mcpl-conformance-fixture");

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn run_py(args: &[&str]) -> (Output, String) {
    let out = Command::new("python3")
        .arg(root().join("conformance/run.py"))
        .args(args)
        .output()
        .expect("python3 is installed (the test command's environment has it)");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    (out, stdout)
}

#[test]
fn s13_the_python_runner_passes_the_reference_fixture() {
    let (out, stdout) = run_py(&["--", FIXTURE]);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("24 passed, 0 failed"), "{stdout}");
    for id in ["v05", "v17", "v18", "v34", "v38"] {
        assert!(stdout.contains(&format!("{id} pass")), "{stdout}");
    }
}

#[test]
fn v18_the_python_runner_catches_a_lowercased_name() {
    let (out, stdout) = run_py(&["--only", "v18", "--", FIXTURE, "--fault", "lowercase_names"]);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("v18 fail"), "{stdout}");
}

#[test]
fn v34_the_python_runner_catches_a_bad_name_accepted() {
    let (out, stdout) = run_py(&[
        "--only",
        "v34",
        "--",
        FIXTURE,
        "--fault",
        "accept_dotted_names",
    ]);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("v34 fail"), "{stdout}");
}

#[test]
fn v17_an_expectation_changed_in_a_copy_fails_the_good_fixture_in_python_too() {
    let text = std::fs::read_to_string(root().join("conformance/vectors.json")).expect("reads");
    let altered = text.replacen(
        "\"path\": \"/result/adopted\",\n              \"equals\": true",
        "\"path\": \"/result/adopted\",\n              \"equals\": false",
        1,
    );
    assert_ne!(altered, text, "the expectation to change is in the file");
    let copy = std::env::temp_dir().join(format!("mcpl-vectors-{}.json", std::process::id()));
    std::fs::write(&copy, altered).expect("writes the copy");
    let copy_arg = copy.to_string_lossy().into_owned();
    let (out, stdout) = run_py(&["--vectors", &copy_arg, "--only", "v17", "--", FIXTURE]);
    let _ = std::fs::remove_file(&copy);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("v17 fail"), "{stdout}");
}

#[test]
fn s13_the_python_runner_catches_a_response_without_result_or_error() {
    let (out, stdout) = run_py(&[
        "--only",
        "v02",
        "--",
        FIXTURE,
        "--fault",
        "response_without_outcome",
    ]);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("v02 fail") && stdout.contains("neither result nor error"),
        "{stdout}"
    );
}

#[test]
fn v03_the_python_runner_awaits_the_push_and_catches_a_server_that_never_pushes() {
    let (out, stdout) = run_py(&["--only", "v03", "--", FIXTURE]);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    let (out, stdout) = run_py(&["--only", "v03", "--", FIXTURE, "--fault", "never_push"]);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("v03 fail") && stdout.contains("push/event"),
        "{stdout}"
    );
}
