//! H65, H81: what the host writes to its log and traces, through `tracing` as it ships.
//!
//! This binary holds a single test on purpose: it installs a process-wide subscriber before
//! anything logs, so no other test thread can race it for `tracing`'s per-callsite interest
//! cache (a thread-local subscriber can miss events that way on a loaded machine).

mod common;

use std::sync::{Arc, Mutex};

use common::*;
use mcpl_host::presenter::META_ACT;
use serde_json::json;

#[derive(Clone, Default)]
struct Buf(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Buf {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("lock").extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Buf {
    /// Everything written so far, emptied.
    fn take(&self) -> String {
        String::from_utf8(std::mem::take(&mut *self.0.lock().expect("lock"))).expect("utf8")
    }
}

#[test]
fn h81_h65_log_lines_and_traces_redact_server_chosen_values() {
    let buf = Buf::default();
    let w = buf.clone();
    let sub = tracing_subscriber::fmt()
        .with_writer(move || w.clone())
        .with_ansi(false)
        .with_max_level(tracing::Level::TRACE)
        .finish();
    tracing::subscriber::set_global_default(sub).expect("the only subscriber");

    // H81: a failed list read and a schema that does not compile are logged without the
    // server's values.
    let mut p = Pair::new(arcade());
    p.hold.insert("tools/list".into());
    p.host.resync(p.now);
    p.flush();
    let r = p.held.pop().expect("page");
    p.hold.clear();
    p.feed(ok(
        r.id,
        json!({"tools": [{"name": "SECRET-NAME"}], "nextCursor": 1}),
    ));
    p.run();
    p.host.resync(p.now);
    p.run();
    let _ = mcpl_host::presenter::check_args(
        &json!({"$ref": "https://SECRET-HOST/x"}),
        &serde_json::Map::new(),
    );
    let out = buf.take();
    assert!(out.contains("tools/list read failed"), "{out}");
    assert!(
        !out.contains("SECRET"),
        "a server value reached the log: {out}"
    );

    // H65: the presenter's default trace sink writes a refused act as a failed tool call,
    // once, with the refusal's kind and no server value.
    let h = Host::new(vec![("arcade", arcade())]);
    buf.take();
    assert!(
        h.pres
            .plan(META_ACT, json!({"tool": "SECRET-TOOL"}))
            .is_err()
    );
    let out = buf.take();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 1, "{out}");
    for field in [
        "act refused before sending",
        "tool_call=\"toolsets_act\"",
        "status=\"refused\"",
        "refusal=\"no_server_has\"",
    ] {
        assert!(lines[0].contains(field), "{field} missing: {out}");
    }
    assert!(
        !out.contains("SECRET"),
        "a server value reached the trace: {out}"
    );
}
