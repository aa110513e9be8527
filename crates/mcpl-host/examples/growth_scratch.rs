//! Scratch (not committed): change cost against open instances.
fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(20000);
    for inst in [1usize, 10, 100, 1000] {
        println!("instances {inst}: {:.2} us/change", growth(inst, 2, n));
    }
    for tools in [1usize, 200] {
        println!("tools {tools}: {:.2} us/change", growth(1, tools, n));
    }
}

fn growth(instances: usize, tools: usize, count: usize) -> f64 {
    use mcpl_host::controller::Effect;
    use mcpl_host::{Controller, ControllerConfig};
    use mcpl_protocol::frame::{self, Limits};
    use mcpl_protocol::jsonrpc::{Message, Response};
    use serde_json::{Value, json};
    use std::time::Instant;
    let tn = |t: usize| format!("t{t}");
    let inn = |i: usize| format!("g{i}");
    let meta = json!({"mcpl/toolset": "go", "mcpl/visible": false});
    let listed = json!({"tools": (0..tools).map(|t| json!({"name": tn(t), "description": format!("Tool {t}."),
        "inputSchema": {"type": "object"}, "_meta": meta})).collect::<Vec<_>>(), "_meta": {"mcpl/rev": 0}});
    let open: Vec<Value> = (0..instances)
        .map(|i| json!({"toolset": "go", "instance": inn(i), "title": format!("Game {i}")}))
        .collect();
    let hints: Vec<Value> = (0..instances).flat_map(|i| (0..tools).map(move |t| json!({"name": format!("t{t}"), "instance": format!("g{i}"), "visible": true}))).collect();
    let statement =
        json!({"open": open, "ended": [], "_meta": {"mcpl/hints": {"rev": 1, "tools": hints}}});
    let frames: Vec<Vec<u8>> = (0..count).map(|k| {
        let visible = (k / instances) % 2 == 1;
        serde_json::to_vec(&json!({"jsonrpc": "2.0", "method": "tools/hints",
            "params": {"rev": k as u64 + 2, "tools": [{"name": tn(0), "instance": inn(k % instances), "visible": visible}]}})).unwrap()
    }).collect();
    let mut best = f64::INFINITY;
    for _ in 0..3 {
        let now = Instant::now();
        let mut config = ControllerConfig::new(mcpl_host::ServerName::sanitized("arcade"), "bench");
        config.manifest = Some(
            json!({"version": "0.5", "toolHints": true, "pushEvents": true,
            "toolsets": {"go": {"title": "Go", "default": "closed", "instances": true}}}),
        );
        let mut c = Controller::new(config, now);
        for _ in 0..8 {
            let mut answers = Vec::new();
            while let Some(e) = c.poll_effect() {
                if let Effect::Send(Message::Request(req)) = e {
                    let r = if req.method == "tools/list" {
                        listed.clone()
                    } else {
                        statement.clone()
                    };
                    answers.push(Message::Response(Response::ok(req.id, r)));
                }
            }
            if answers.is_empty() {
                break;
            }
            for a in answers {
                c.handle_message(now, None, a);
            }
        }
        assert!(c.snapshot().ready());
        let limits = Limits::default();
        let t0 = Instant::now();
        for f in &frames {
            let m = frame::decode(f, &limits).unwrap();
            c.handle_message(now, None, m);
            while let Some(e) = c.poll_effect() {
                if matches!(e, Effect::Recovering(_)) {
                    panic!("recovery");
                }
            }
        }
        let took = t0.elapsed().as_secs_f64() * 1e6 / frames.len() as f64;
        assert_eq!(c.snapshot().applied().get(), count as u64 + 1);
        best = best.min(took);
    }
    best
}
