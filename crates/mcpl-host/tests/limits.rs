//! The recovery rate limit (`ControllerConfig::max_recoveries_per_minute`): a run past it is
//! deferred with a clear effect, never dropped, and hints keep applying meanwhile.

mod common;

use std::time::Duration;

use common::*;
use mcpl_host::controller::{Effect, RecoveryReason};

#[test]
fn limits_recovery_runs_per_minute_defer_the_next_run_and_lose_nothing() {
    let server = arcade();
    let mut cfg = config(&server);
    cfg.max_recoveries_per_minute = 3;
    let mut p = Pair::with_config(server, cfg); // run 1: the connect read
    let start = p.now;
    p.open_game("g1");
    for _ in 0..2 {
        p.host.resync(p.now); // runs 2 and 3
        p.run();
    }
    assert_eq!(p.recoveries(), 3);
    p.clear();

    // The fourth run in the same minute is deferred, with a clear effect.
    p.host.resync(p.now);
    p.run();
    assert!(
        p.sent.is_empty(),
        "nothing re-read yet: {:?}",
        p.sent_methods()
    );
    assert_eq!(
        p.effects,
        vec![Effect::RecoveryLimited {
            reason: RecoveryReason::Requested,
            until: start + Duration::from_secs(60),
        }]
    );
    assert_eq!(p.host.poll_timeout(), Some(start + Duration::from_secs(60)));

    // Hints keep applying while the run waits.
    p.server.borrow_mut().set_visible("play", Some("g1"), false);
    p.run();
    assert!(!p.items().is_empty(), "the change applied");
    assert_eq!(p.picture(), truth(&p.server.borrow()));

    // At the end of the window the run happens by itself.
    p.clear();
    p.advance(Duration::from_secs(59));
    assert!(p.sent.is_empty());
    p.advance(Duration::from_secs(1));
    assert_eq!(p.sent_methods(), ["tools/list", "toolsets/list"]);
    assert_eq!(p.recoveries(), 1);
    assert_eq!(p.picture(), truth(&p.server.borrow()));
}
