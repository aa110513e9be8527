//! Shared app documents beside the principal state: optimistic transactions across replicas
//! that lose no update, bad stored values refused by key, and an unreachable Redis reported
//! as an error rather than waited on.

mod common;

use common::RedisServer;
use mcpl_server_redis::{Document, Error, RedisStore};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

/// An app's state: a counter and a log of who wrote.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
struct Tally {
    count: u64,
    by: BTreeMap<String, u64>,
}

async fn open(redis: &RedisServer) -> RedisStore {
    RedisStore::open(&redis.url(), "t")
        .await
        .expect("redis reachable")
}

fn raw(redis: &RedisServer) -> redis::Connection {
    redis::Client::open(redis.url())
        .unwrap()
        .get_connection()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doc_concurrent_updates_from_two_replicas_lose_no_update() {
    let redis = RedisServer::start();
    let a = Arc::new(open(&redis).await);
    let b = Arc::new(open(&redis).await);
    let tasks: Vec<_> = (0..4)
        .map(|i| {
            let store = if i % 2 == 0 { a.clone() } else { b.clone() };
            tokio::spawn(async move {
                // Each task has its own handle on the document, as each replica would.
                let doc = Document::<Tally>::open(&store, "games");
                for _ in 0..50 {
                    doc.update(|t| {
                        t.count += 1;
                        *t.by.entry(format!("w{i}")).or_default() += 1;
                    })
                    .await
                    .unwrap();
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    let tally = Document::<Tally>::open(&b, "games").get().await.unwrap();
    assert_eq!(tally.count, 200, "no increment lost: {tally:?}");
    assert!(tally.by.values().all(|&n| n == 50), "{tally:?}");
}

#[tokio::test]
async fn doc_update_returns_the_kept_runs_value_and_writes_only_changes() {
    let redis = RedisServer::start();
    let store = Arc::new(open(&redis).await);
    let doc = Document::<Tally>::open(&store, "games");
    assert_eq!(doc.key(), "t:doc:games");
    assert_eq!(
        doc.get().await.unwrap(),
        Tally::default(),
        "absent: the default"
    );
    // A read-only update writes nothing, so the key is still absent.
    let seen = doc.update(|t| t.count).await.unwrap();
    assert_eq!(seen, 0);
    let exists: bool = redis::cmd("EXISTS")
        .arg("t:doc:games")
        .query(&mut raw(&redis))
        .unwrap();
    assert!(!exists, "an unchanged value is not written");
    let after = doc
        .update(|t| {
            t.count += 2;
            t.count
        })
        .await
        .unwrap();
    assert_eq!(after, 2);
    // Another replica's handle sees it, and the stored form is plain JSON.
    let other = Arc::new(open(&redis).await);
    assert_eq!(
        Document::<Tally>::open(&other, "games")
            .get()
            .await
            .unwrap()
            .count,
        2
    );
    let text: String = redis::cmd("GET")
        .arg("t:doc:games")
        .query(&mut raw(&redis))
        .unwrap();
    assert_eq!(text, r#"{"count":2,"by":{}}"#);
}

#[tokio::test]
async fn doc_a_stored_value_that_does_not_parse_is_an_error_naming_the_key_and_is_kept() {
    let redis = RedisServer::start();
    let store = Arc::new(open(&redis).await);
    let mut c = raw(&redis);
    let _: () = redis::cmd("SET")
        .arg("t:doc:games")
        .arg("{not json")
        .query(&mut c)
        .unwrap();
    let doc = Document::<Tally>::open(&store, "games");
    let mut ran = false;
    let err = doc
        .update(|t| {
            ran = true;
            t.count += 1;
        })
        .await;
    let err = err.expect_err("a bad stored value is refused");
    assert!(matches!(err, Error::Document { .. }), "{err:?}");
    let text = err.to_string();
    assert!(text.contains("t:doc:games"), "{text}");
    assert!(text.contains("does not parse"), "{text}");
    assert!(!ran, "the closure never saw a made-up value");
    assert!(doc.get().await.is_err());
    let kept: String = redis::cmd("GET").arg("t:doc:games").query(&mut c).unwrap();
    assert_eq!(kept, "{not json", "the bad value is not replaced");
    // The connection is still good for other documents.
    let fine = Document::<Tally>::open(&store, "other");
    fine.update(|t| t.count = 7).await.unwrap();
    assert_eq!(fine.get().await.unwrap().count, 7);
    assert!(store.is_available(), "a bad value is not an outage");
}

#[tokio::test]
async fn doc_unreachable_redis_is_an_error_and_a_restarted_redis_gets_the_last_copy_back() {
    let mut redis = RedisServer::start();
    let store = Arc::new(open(&redis).await);
    let doc = Document::<Tally>::open(&store, "games");
    doc.update(|t| t.count = 1).await.unwrap();
    redis.stop();
    let err = doc
        .update(|t| t.count += 1)
        .await
        .expect_err("no redis, no update");
    assert!(matches!(err, Error::Unavailable(_)), "{err:?}");
    assert!(doc.get().await.is_err());
    assert!(!store.is_available(), "the store hears of it");
    redis.restart();
    // A restarted Redis without persistence is empty; reading does not write back...
    assert_eq!(doc.get().await.unwrap().count, 1, "the copy here is read");
    let mut fresh = raw(&redis);
    let written: bool = redis::Commands::exists(&mut fresh, doc.key()).unwrap();
    assert!(!written, "reading wrote nothing back");
    // ...but the next update starts from this replica's copy and writes it back.
    doc.update(|t| t.count += 1).await.unwrap();
    assert_eq!(doc.get().await.unwrap().count, 2, "nothing was lost");
    let other = Arc::new(open(&redis).await);
    assert_eq!(
        Document::<Tally>::open(&other, "games")
            .get()
            .await
            .unwrap()
            .count,
        2
    );
    assert!(store.is_available());
}
