//! Random calls from two agents, well-formed or not, never break the arcade: every call gets
//! an answer, and a refused call changes no board.

mod common;

use common::{World, quick_config};
use mcpl_server::Principal;
use proptest::prelude::*;
use serde_json::{Value, json};

fn arbitrary_call() -> impl Strategy<Value = (usize, String, Value, Option<String>)> {
    let who = 0usize..2;
    let tool = prop::sample::select(vec![
        "play",
        "play",
        "play",
        "pass",
        "resign",
        "board",
        "challenge",
        "games",
        "hint",
        "nope",
    ]);
    let arg = prop_oneof![
        "[A-Ta-t][0-9]{1,2}".prop_map(|m| json!({"move": m})),
        Just(json!({"move": "E5"})),
        Just(json!({})),
        (0u64..25).prop_map(|s| json!({"who": "bob", "size": s})),
        Just(json!({"who": "alice", "size": 9})),
        Just(json!({"game": "vs-bot"})),
        any::<i64>().prop_map(|n| json!({"move": n})),
    ];
    let instance = prop::sample::select(vec![None, Some("vs-bot"), Some("vs-bob"), Some("zz")]);
    (who, tool, arg, instance).prop_map(|(w, t, a, i)| (w, t.to_owned(), a, i.map(str::to_owned)))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn random_calls_are_answered_and_refusals_change_no_board(
        calls in prop::collection::vec(arbitrary_call(), 1..40),
    ) {
        let mut w = World::new(quick_config());
        let agents = [w.connect("alice"), w.connect("bob")];
        let names = ["alice", "bob"];
        w.open(agents[0], "vs-bot", json!({"size": 9})).unwrap();
        for (who, tool, args, instance) in calls {
            let principal = Principal::authenticated(names[who]);
            let boards: Vec<Option<String>> = ["vs-bot", "vs-bob", "vs-alice"]
                .iter()
                .map(|i| w.arcade.board(&principal, i).unwrap())
                .collect();
            let mut params = json!({"name": tool, "arguments": args});
            if let Some(i) = &instance {
                params["_meta"] = json!({"mcpl/instance": i});
            }
            let refused = match w.request(agents[who], "tools/call", params) {
                Ok(result) => {
                    prop_assert!(result["content"].is_array(), "every call gets content: {}", result);
                    result["isError"] == true
                }
                // Only a tool the server does not have is a protocol error (MCP).
                Err(e) => {
                    prop_assert_eq!(tool.as_str(), "nope", "{}", e.message);
                    true
                }
            };
            if refused {
                let after: Vec<Option<String>> = ["vs-bot", "vs-bob", "vs-alice"]
                    .iter()
                    .map(|i| w.arcade.board(&principal, i).unwrap())
                    .collect();
                prop_assert_eq!(boards, after);
            }
            w.run_bots();
        }
    }
}
