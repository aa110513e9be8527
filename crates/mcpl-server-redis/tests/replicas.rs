//! Two replicas on one real Redis: shared principal state, atomic opens, cross-replica
//! fan-out on each connection's own revs (RFC-014 §5.6, §6.1).

mod common;

use common::{RedisServer, Replica};
use mcpl_server::{
    OpenKey, OpenState, Principal, PrincipalState, PrincipalStore, WriteSet, Written,
};
use mcpl_server_redis::RedisStore;
use serde_json::json;
use std::sync::Arc;

fn key(toolset: &str, instance: &str) -> OpenKey {
    serde_json::from_value(json!({"toolset": toolset, "instance": instance})).unwrap()
}

fn open_state() -> OpenState {
    serde_json::from_value(json!({"options": null, "title": "Go", "opener": "Server",
        "tools": {}, "phase": "Open"}))
    .unwrap()
}

/// Runs `edit` on `principal`'s state in `store` as the driver does: read, edit, write if
/// the version is unchanged, else run again on the state Redis returned. Returns `edit`'s
/// value from the run that was written, and how many runs were refused.
async fn commit<R>(
    store: &RedisStore,
    principal: &Principal,
    mut edit: impl FnMut(&mut PrincipalState) -> R,
) -> (R, u64) {
    let mut stored = store.load(principal).await.expect("redis answers");
    let mut conflicts = 0;
    loop {
        let mut state = stored.state.clone();
        let out = edit(std::sync::Arc::make_mut(&mut state));
        let write = WriteSet {
            principal: principal.clone(),
            read: stored.version,
            state: Some(state),
        };
        match store.write(&write).await.expect("redis answers") {
            Written::Done { .. } => return (out, conflicts),
            Written::Conflict(now) => {
                conflicts += 1;
                stored = now;
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s5_2_hundred_parallel_opens_across_two_replicas_open_once_and_adopt_the_rest() {
    let redis = RedisServer::start();
    let a = Arc::new(RedisStore::open(&redis.url(), "t").await.unwrap());
    let b = Arc::new(RedisStore::open(&redis.url(), "t").await.unwrap());
    let ada = Principal::authenticated("ada");
    let tasks: Vec<_> = (0..100)
        .map(|i| {
            let store = if i % 2 == 0 { a.clone() } else { b.clone() };
            let ada = ada.clone();
            tokio::spawn(async move {
                // The shape of `toolsets/open`'s step: open it if absent, else adopt it.
                commit(&store, &ada, |s| match s.open.entry(key("game", "g1")) {
                    std::collections::btree_map::Entry::Occupied(_) => false,
                    std::collections::btree_map::Entry::Vacant(slot) => {
                        slot.insert(open_state());
                        s.next_instance += 1;
                        true
                    }
                })
                .await
                .0
            })
        })
        .collect();
    let mut opened = 0;
    for t in tasks {
        opened += usize::from(t.await.unwrap());
    }
    assert_eq!(opened, 1, "exactly one open; the other 99 adopted");
    let state = b.load(&ada).await.unwrap().state;
    assert_eq!(state.open.len(), 1);
    assert_eq!(state.next_instance, 1, "no lost or doubled update");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s5_6_concurrent_counter_updates_from_two_replicas_lose_nothing() {
    let redis = RedisServer::start();
    let a = Arc::new(RedisStore::open(&redis.url(), "t").await.unwrap());
    let b = Arc::new(RedisStore::open(&redis.url(), "t").await.unwrap());
    let ada = Principal::authenticated("ada");
    let tasks: Vec<_> = (0..40)
        .map(|i| {
            let store = if i % 2 == 0 { a.clone() } else { b.clone() };
            let ada = ada.clone();
            tokio::spawn(async move {
                let mut conflicts = 0;
                for _ in 0..5 {
                    conflicts += commit(&store, &ada, |s| s.next_ended += 1).await.1;
                }
                conflicts
            })
        })
        .collect();
    let mut conflicts = 0;
    for t in tasks {
        conflicts += t.await.unwrap();
    }
    let stored = a.load(&ada).await.unwrap();
    assert_eq!(stored.state.next_ended, 200);
    assert_eq!(
        stored.version, 200,
        "one version per write that went through"
    );
    assert_eq!(
        a.writes() + b.writes(),
        200,
        "refused writes ({conflicts}) wrote nothing"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s5_6_open_on_a_seen_on_b_and_move_on_b_pushed_to_a_with_consecutive_revs() {
    let redis = RedisServer::start();
    let a = Replica::start(&redis.url(), "t").await;
    let b = Replica::start(&redis.url(), "t").await;
    let mut on_a = a.connect("ada").await;
    let mut on_b = b.connect("ada").await;

    let open = on_a
        .ask(
            "toolsets/open",
            json!({"toolset": "game", "instance": "g1"}),
        )
        .await;
    assert_eq!(open["_meta"]["mcpl/hints"]["rev"], json!(1));
    // The open reaches B as a hint change on B's own rev 1, stating the instance.
    let hints = on_b.next_hints().await;
    assert_eq!(hints["rev"], json!(1));
    assert_eq!(hints["toolsets"][0]["instance"], json!("g1"));
    assert_eq!(hints["toolsets"][0]["state"], json!("open"));
    let listed = on_b.ask("toolsets/list", json!({})).await;
    assert_eq!(listed["open"][0]["instance"], json!("g1"), "{listed}");
    assert_eq!(listed["_meta"]["mcpl/hints"]["rev"], json!(2));

    // A move through B: its result carries B's rev 3; A gets it on A's rev 2.
    let played = on_b
        .ask(
            "tools/call",
            json!({"name": "play", "arguments": {"move": "E5"},
            "_meta": {"mcpl/instance": "g1"}}),
        )
        .await;
    assert_eq!(played["_meta"]["mcpl/hints"]["rev"], json!(3), "{played}");
    let hints = on_a.next_hints().await;
    assert_eq!(hints["rev"], json!(2), "{hints}");
    assert_eq!(hints["tools"][0]["name"], json!("play"));
    assert_eq!(hints["tools"][0]["visible"], json!(false));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s5_3_ended_records_cross_replicas_with_their_wall_clock_expiry() {
    let redis = RedisServer::start();
    let a = RedisStore::open(&redis.url(), "t").await.unwrap();
    let b = RedisStore::open(&redis.url(), "t").await.unwrap();
    let ada = Principal::authenticated("ada");
    let expires = std::time::Instant::now() + std::time::Duration::from_secs(3600);
    commit(&a, &ada, |s| {
        s.next_ended += 1;
        s.ended = vec![mcpl_server::StoredEnd {
            record: serde_json::from_value(json!({"id": "e-0", "toolset": "game",
                "instance": "g1"}))
            .unwrap(),
            expires,
        }];
    })
    .await;
    let state = b.load(&ada).await.unwrap().state;
    assert_eq!(state.ended.len(), 1);
    assert_eq!(state.ended[0].record.id, "e-0");
    let off = state.ended[0]
        .expires
        .max(expires)
        .duration_since(state.ended[0].expires.min(expires));
    assert!(off < std::time::Duration::from_secs(1), "{off:?}");
    assert_eq!(state.next_ended, 1, "the id counter never goes back");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s5_6_redis_restart_loses_nothing_open() {
    let mut redis = RedisServer::start();
    let a = RedisStore::open(&redis.url(), "t").await.unwrap();
    let b = RedisStore::open(&redis.url(), "t").await.unwrap();
    let ada = Principal::authenticated("ada");
    commit(&a, &ada, |s| {
        s.open.insert(key("game", "g1"), open_state());
    })
    .await;
    redis.stop();
    // Unreachable: reads come from the replica's copy, and it says so.
    let copy = a.load(&ada).await.unwrap();
    assert!(copy.state.open.contains_key(&key("game", "g1")));
    assert!(!a.is_available());
    redis.restart();
    // The restarted Redis is empty (no persistence); the replica writes its copy back,
    // keeping its version, so writes computed from it go through.
    assert_eq!(a.restore().await.unwrap(), vec![ada.clone()]);
    assert!(a.is_available());
    let back = b.load(&ada).await.unwrap();
    assert!(back.state.open.contains_key(&key("game", "g1")));
    assert_eq!(back.version, copy.version);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn s5_2_hundred_parallel_toolsets_open_through_two_replicas_give_one_open() {
    let redis = RedisServer::start();
    let a = Replica::start(&redis.url(), "t").await;
    let b = Replica::start(&redis.url(), "t").await;
    let hosts = Arc::new([a.connect("ada").await, b.connect("ada").await]);
    let opens: Vec<_> = (0..100)
        .map(|i| {
            let hosts = hosts.clone();
            tokio::spawn(async move {
                let host = &hosts[i % 2];
                let params = json!({"toolset": "game", "instance": "g1"});
                loop {
                    let answer = host
                        .peer
                        .request_value(
                            "toolsets/open",
                            Some(params.clone()),
                            mcpl_rpc::RequestOptions::timeout(std::time::Duration::from_secs(10)),
                        )
                        .await;
                    match answer {
                        Ok(v) => return v.value["adopted"] == json!(true),
                        // §5.2: another open of it is still running; the error says retry.
                        Err(e) if e.to_string().contains("still being opened") => {
                            tokio::time::sleep(std::time::Duration::from_millis(2)).await;
                        }
                        Err(e) => panic!("open failed: {e}"),
                    }
                }
            })
        })
        .collect();
    let mut adopted = 0;
    for open in opens {
        adopted += usize::from(open.await.unwrap());
    }
    assert_eq!(adopted, 99, "exactly one open; the rest adopted it");
    let listed = hosts[1].ask("toolsets/list", json!({})).await;
    assert_eq!(listed["open"].as_array().map(Vec::len), Some(1), "{listed}");
}
