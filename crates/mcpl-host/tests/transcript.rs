//! §9's Go example as a transcript: connect, open an instance, a call that hides tools, a
//! push that shows them again, a close. Named assertions first; the snapshot adds the wire.

mod common;

use common::*;
use mcpl_host::controller::{CallRequest, ChangeItem, CloseRequest, OpenRequest};
use serde_json::json;

#[test]
fn s9_go_example() {
    let mut s = arcade();
    s.push = true;
    let mut p = Pair::new(s);
    // 1. The connect reads: the list takes no rev, the empty statement takes rev 1.
    assert_eq!(p.sent_methods(), vec!["tools/list", "toolsets/list"]);
    assert_eq!(p.host.snapshot().applied().get(), 1);
    // 2. Open takes rev 2 and makes the instance's tools visible.
    let req = OpenRequest {
        toolset: mcpl_host::names::ToolsetName::parse("game").unwrap(),
        instance: Some(mcpl_host::names::InstanceName::parse("vs-bot").unwrap()),
        options: Some(json!({"size": 9})),
    };
    p.host.open(p.now, req).expect("open");
    p.run();
    assert!(p.host.snapshot().visible("play", Some(&inst("vs-bot"))));
    // 3. A call whose result hides play and pass (rev 3); no push follows.
    p.server.borrow_mut().call_hints = Some(json!({"tools": [
        {"name": "play", "instance": "vs-bot", "visible": false},
        {"name": "pass", "instance": "vs-bot", "visible": false}]}));
    let call = CallRequest {
        tool: "play".into(),
        instance: Some(mcpl_host::names::InstanceName::parse("vs-bot").unwrap()),
        args: json!({"move": "C3"})
            .as_object()
            .cloned()
            .unwrap_or_default(),
    };
    p.host.call(p.now, call).expect("call");
    p.run();
    assert!(!p.host.snapshot().visible("play", Some(&inst("vs-bot"))));
    // 4. White plays: a push with rev 4 shows play again, applied on read.
    p.server
        .borrow_mut()
        .set_visible("play", Some("vs-bot"), true);
    p.run();
    assert!(p.host.snapshot().visible("play", Some(&inst("vs-bot"))));
    assert_eq!(p.host.snapshot().applied().get(), 4);
    // 7. Close: the instance closes with its ended record's id.
    p.host
        .close(
            p.now,
            CloseRequest {
                toolset: mcpl_host::names::ToolsetName::parse("game").unwrap(),
                instance: Some(mcpl_host::names::InstanceName::parse("vs-bot").unwrap()),
            },
        )
        .expect("close");
    p.run();
    assert!(p.items().iter().any(|i| matches!(
        i,
        ChangeItem::Closed {
            ended_id: Some(_),
            ..
        }
    )));
    assert_eq!(p.recoveries(), 1, "only the connect read ran");
    insta::assert_snapshot!(p.transcript.join("\n"));
}
