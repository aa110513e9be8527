//! Contention on a real Redis: two replicas, fifty principals each connected to both, games
//! shared by two principals, and moves racing from every connection at once. Writes conflict
//! and are run again, and nothing is lost or done twice: every game's move count in Redis
//! equals the moves its players were told were played (RFC-014 §5.6).

mod common;

use common::{RedisServer, connect};
use mcpl_protocol::mcp::CallToolResult;
use mcpl_rpc::RequestOptions;
use mcpl_server::driver::{App, Handle, Runtime};
use mcpl_server::{Context, OpenReply, Principal, Server, ServerConfig, WallClock};
use mcpl_server_redis::{Document, Fanout, RedisStore};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant, UNIX_EPOCH};

const PRINCIPALS: usize = 50;
const MOVES_PER_CONNECTION: usize = 4;

/// One game's record, a key of its own (`t:doc:game:NAME`).
#[derive(Debug, Default, Serialize, Deserialize)]
struct Moves {
    count: u64,
}

/// `pN` plays game `g{N/2}` against its partner.
fn partner(id: &str) -> Principal {
    let n: usize = id[1..].parse().expect("principals are pN");
    Principal::authenticated(format!("p{}", n ^ 1))
}

fn game_of(n: usize) -> String {
    format!("g{}", n / 2)
}

/// A game whose `play` counts the move in the game's own Redis key, retitles the game for
/// both players and hands the turn over: each move changes both players' principal state.
struct Race {
    store: Arc<RedisStore>,
}

impl App for Race {
    async fn open(&self, _ctx: &mut Context) -> OpenReply {
        OpenReply::text("Game on.")
    }

    async fn call_tool(&self, ctx: &mut Context, _: &str, _: Map<String, Value>) -> CallToolResult {
        let game = ctx.instance().map(|i| i.to_string()).unwrap_or_default();
        let doc = Document::<Moves>::open(&self.store, &format!("game:{game}"));
        let counted = doc
            .update(|m| {
                m.count += 1;
                m.count
            })
            .await;
        let count = match counted {
            Ok(n) => n,
            Err(e) => return CallToolResult::error(e.to_string()),
        };
        let title = format!("{game}: {count} moves");
        ctx.here().retitle(title.clone()).show("play");
        let other = partner(ctx.principal().id());
        ctx.update_for(&other)
            .instance("game", &game)
            .retitle(title)
            .show("play");
        CallToolResult::text(format!("move {count}"))
    }
}

async fn replica(url: &str) -> (Runtime<Race>, Fanout) {
    let store = Arc::new(RedisStore::open(url, "t").await.expect("redis reachable"));
    let clock = WallClock::new(Instant::now(), UNIX_EPOCH);
    let server = Server::with_store(
        common::decls().build().unwrap(),
        ServerConfig::new(clock),
        store.clone(),
    );
    let handle = Handle::new(server);
    let fanout = Fanout::start(&handle, store.clone())
        .await
        .expect("subscribed");
    (Runtime::new(handle, Race { store }), fanout)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s5_6_racing_moves_on_two_replicas_conflict_retry_and_lose_nothing() {
    let redis = RedisServer::start();
    let (a, _fa) = replica(&redis.url()).await;
    let (b, _fb) = replica(&redis.url()).await;
    let mut hosts = Vec::new();
    for n in 0..PRINCIPALS {
        let id = format!("p{n}");
        let mut on_a = connect(&a, &id).await;
        let mut on_b = connect(&b, &id).await;
        // Each principal opens its side of the shared game on one replica; the other
        // replica's connection hears of it before the race starts.
        let (opener, other) = if n % 2 == 0 {
            (&on_a, &mut on_b)
        } else {
            (&on_b, &mut on_a)
        };
        opener
            .ask(
                "toolsets/open",
                json!({"toolset": "game", "instance": game_of(n)}),
            )
            .await;
        let heard = other.next_hints().await;
        assert_eq!(heard["toolsets"][0]["state"], json!("open"), "{heard}");
        hosts.push((n, Arc::new(on_a), Arc::new(on_b)));
    }

    // Every connection plays at once.
    let mut racing = Vec::new();
    for (n, on_a, on_b) in &hosts {
        for host in [on_a.clone(), on_b.clone()] {
            let game = game_of(*n);
            racing.push(tokio::spawn(async move {
                let mut acknowledged = 0u64;
                for _ in 0..MOVES_PER_CONNECTION {
                    let played = host
                        .peer
                        .request_value(
                            "tools/call",
                            Some(json!({"name": "play", "arguments": {"move": "x"},
                                "_meta": {"mcpl/instance": game}})),
                            RequestOptions::timeout(Duration::from_secs(60)),
                        )
                        .await
                        .expect("every move is answered");
                    let text = played.value["content"][0]["text"].as_str().unwrap_or("");
                    assert!(text.starts_with("move "), "{}", played.value);
                    acknowledged += 1;
                }
                (game, acknowledged)
            }));
        }
    }
    let mut acknowledged = std::collections::BTreeMap::<String, u64>::new();
    for task in racing {
        let (game, n) = task.await.expect("the player finished");
        *acknowledged.entry(game).or_default() += n;
    }

    let conflicts = a.conflicts() + b.conflicts();
    assert!(
        conflicts > 0,
        "moves racing on shared principals must conflict and be run again"
    );
    let total: u64 = acknowledged.values().sum();
    assert_eq!(
        total,
        (PRINCIPALS * 2 * MOVES_PER_CONNECTION) as u64,
        "every move was acknowledged"
    );
    let store = RedisStore::open(&redis.url(), "t").await.unwrap();
    let store = Arc::new(store);
    for (game, moves) in &acknowledged {
        let doc = Document::<Moves>::open(&store, &format!("game:{game}"));
        let stored = doc.get().await.expect("the game's key reads");
        assert_eq!(
            stored.count, *moves,
            "{game}: the count in Redis equals the moves acknowledged (none lost, none twice)"
        );
    }
    // Once the last changes have crossed between the replicas, both state every principal
    // the same: the title of its last stored write.
    for (n, on_a, on_b) in &hosts {
        let mut settled = false;
        for _ in 0..100 {
            let list_a = on_a.ask("toolsets/list", json!({})).await;
            let list_b = on_b.ask("toolsets/list", json!({})).await;
            if list_a["open"] == list_b["open"] {
                settled = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(settled, "p{n}: the replicas never agreed");
    }
    eprintln!("contention: {total} moves, {conflicts} conflicting writes run again");
}
