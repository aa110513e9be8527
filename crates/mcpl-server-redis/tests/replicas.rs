//! Two replicas on one real Redis: shared principal state, atomic opens, cross-replica
//! fan-out on each connection's own revs (RFC-014 §5.6, §6.1).

mod common;

use common::{RedisServer, Replica};
use mcpl_server::{OpenKey, OpenState, Principal, PrincipalStore, with_state};
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

#[test]
fn s5_2_hundred_parallel_opens_across_two_replicas_open_once_and_adopt_the_rest() {
    let redis = RedisServer::start();
    let a = Arc::new(RedisStore::open(&redis.url(), "t").unwrap());
    let b = Arc::new(RedisStore::open(&redis.url(), "t").unwrap());
    let ada = Principal::authenticated("ada");
    let threads: Vec<_> = (0..100)
        .map(|i| {
            let store = if i % 2 == 0 { a.clone() } else { b.clone() };
            let ada = ada.clone();
            std::thread::spawn(move || {
                // The shape of `toolsets/open`'s step: open it if absent, else adopt it.
                with_state(&*store, &ada, |s| match s.open.entry(key("game", "g1")) {
                    std::collections::btree_map::Entry::Occupied(_) => false,
                    std::collections::btree_map::Entry::Vacant(slot) => {
                        slot.insert(open_state());
                        s.next_instance += 1;
                        true
                    }
                })
            })
        })
        .collect();
    let opened = threads
        .into_iter()
        .map(|t| t.join().unwrap())
        .filter(|&opened| opened)
        .count();
    assert_eq!(opened, 1, "exactly one open; the other 99 adopted");
    let state = b.get(&ada).unwrap();
    assert_eq!(state.open.len(), 1);
    assert_eq!(state.next_instance, 1, "no lost or doubled update");
}

#[test]
fn s5_6_concurrent_counter_updates_from_two_replicas_lose_nothing() {
    let redis = RedisServer::start();
    let a = Arc::new(RedisStore::open(&redis.url(), "t").unwrap());
    let b = Arc::new(RedisStore::open(&redis.url(), "t").unwrap());
    let ada = Principal::authenticated("ada");
    let threads: Vec<_> = (0..40)
        .map(|i| {
            let store = if i % 2 == 0 { a.clone() } else { b.clone() };
            let ada = ada.clone();
            std::thread::spawn(move || {
                for _ in 0..5 {
                    with_state(&*store, &ada, |s| s.next_ended += 1);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(a.get(&ada).unwrap().next_ended, 200);
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

#[test]
fn s5_3_ended_records_expire_by_redis_key_ttl() {
    let redis = RedisServer::start();
    let a = RedisStore::open(&redis.url(), "t").unwrap();
    let ada = Principal::authenticated("ada");
    let expires = std::time::Instant::now() + std::time::Duration::from_secs(3600);
    with_state(&a, &ada, |s| {
        s.next_ended += 1;
        s.ended = vec![mcpl_server::StoredEnd {
            record: serde_json::from_value(json!({"id": "1", "toolset": "game",
                "instance": "g1"}))
            .unwrap(),
            expires,
        }];
    });
    let mut c = a.client().get_connection().unwrap();
    let ttl: i64 = redis::cmd("PTTL").arg("t:end:1:ada").query(&mut c).unwrap();
    assert!(ttl > 3_500_000 && ttl <= 3_600_000, "ttl {ttl}");
    // Redis drops it when its key expires: the next read no longer lists it.
    let _: () = redis::cmd("PEXPIRE")
        .arg("t:end:1:ada")
        .arg(1)
        .query(&mut c)
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let state = a.get(&ada).unwrap();
    assert!(state.ended.is_empty());
    assert_eq!(state.next_ended, 1, "the id counter never goes back");
}

#[test]
fn s5_6_redis_restart_loses_nothing_open() {
    let mut redis = RedisServer::start();
    let a = RedisStore::open(&redis.url(), "t").unwrap();
    let b = RedisStore::open(&redis.url(), "t").unwrap();
    let ada = Principal::authenticated("ada");
    with_state(&a, &ada, |s| {
        s.open.insert(key("game", "g1"), open_state());
    });
    redis.stop();
    // Unreachable: reads come from the replica's copy, and it says so.
    assert!(a.get(&ada).unwrap().open.contains_key(&key("game", "g1")));
    assert!(!a.is_available());
    redis.restart();
    // The restarted Redis is empty (no persistence); the replica writes its copy back.
    assert_eq!(a.restore().unwrap(), vec![ada.clone()]);
    assert!(a.is_available());
    assert!(b.get(&ada).unwrap().open.contains_key(&key("game", "g1")));
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
