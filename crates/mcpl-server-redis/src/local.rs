//! A throwaway `redis-server` child on a free loopback port, for tests and benchmarks that
//! need a real Redis and must not share one.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// Why a [`LocalRedis`] did not start.
#[derive(Debug, thiserror::Error)]
pub enum LocalRedisError {
    /// `redis-server` is not on `PATH`.
    #[error("`redis-server` is not installed (the Debian package `redis-server` has it)")]
    NotInstalled,
    /// It could not be run, or never answered as the process started.
    #[error("redis-server did not start: {0}")]
    Failed(String),
}

/// A `redis-server` process on 127.0.0.1 with no persistence, killed on drop.
#[derive(Debug)]
pub struct LocalRedis {
    child: Option<Child>,
    port: u16,
}

/// How many free ports [`LocalRedis::start`] tries before it gives up.
const PORT_TRIES: usize = 5;

impl LocalRedis {
    /// Starts one on a free port and returns once that very process answers there.
    ///
    /// A port found free can be taken before redis binds it (by another test's server, or as
    /// the local end of an outgoing connection): redis then exits, and the next try takes a
    /// new port. A server answering on the port is only accepted when its process id is the
    /// child's, so a test never talks to another test's Redis.
    pub fn start() -> Result<Self, LocalRedisError> {
        let mut last = String::new();
        for _ in 0..PORT_TRIES {
            let mut redis = LocalRedis {
                child: None,
                port: free_port()?,
            };
            match redis.launch() {
                Ok(()) => return Ok(redis),
                Err(LocalRedisError::Failed(why)) => last = why,
                Err(e) => return Err(e),
            }
        }
        Err(LocalRedisError::Failed(format!(
            "{PORT_TRIES} ports tried; the last: {last}"
        )))
    }

    /// Its port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Its URL, for `RedisStore::open` and `Fanout`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// Stops it; its data is gone (no persistence).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts it again on the same port (empty, as after a crash without persistence).
    pub fn restart(&mut self) -> Result<(), LocalRedisError> {
        self.stop();
        self.launch()
    }

    fn launch(&mut self) -> Result<(), LocalRedisError> {
        let spawned = Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        let mut child = match spawned {
            Ok(child) => child,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(LocalRedisError::NotInstalled);
            }
            Err(e) => return Err(LocalRedisError::Failed(e.to_string())),
        };
        for _ in 0..250 {
            if !matches!(child.try_wait(), Ok(None)) {
                return Err(LocalRedisError::Failed(format!(
                    "it exited at once on port {} (taken?)",
                    self.port
                )));
            }
            if answering_pid(self.port) == Some(child.id()) {
                self.child = Some(child);
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
        Err(LocalRedisError::Failed(format!(
            "not answering on port {} after 5 s",
            self.port
        )))
    }
}

impl Drop for LocalRedis {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A loopback port free at the time of asking.
fn free_port() -> Result<u16, LocalRedisError> {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| LocalRedisError::Failed(format!("no free loopback port: {e}")))
}

/// The process id of the Redis answering on `port`, read from `INFO server`.
fn answering_pid(port: u16) -> Option<u32> {
    let client = redis::Client::open(format!("redis://127.0.0.1:{port}/")).ok()?;
    let mut conn = client
        .get_connection_with_timeout(Duration::from_secs(1))
        .ok()?;
    let info: redis::InfoDict = redis::cmd("INFO").arg("server").query(&mut conn).ok()?;
    info.get("process_id")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_local_servers_get_two_ports_and_each_answers_as_itself() {
        let a = LocalRedis::start().expect("redis-server (scripts/test installs it)");
        let b = LocalRedis::start().expect("redis-server");
        assert_ne!(a.port(), b.port());
        let pid = |r: &LocalRedis| r.child.as_ref().map(Child::id);
        assert_eq!(answering_pid(a.port()), pid(&a));
        assert_eq!(answering_pid(b.port()), pid(&b));
    }

    #[test]
    fn a_stopped_server_answers_no_more_and_a_restart_answers_on_the_same_port() {
        let mut r = LocalRedis::start().expect("redis-server");
        let port = r.port();
        r.stop();
        assert_eq!(answering_pid(port), None);
        r.restart().expect("restarts");
        assert_eq!(r.port(), port);
        assert!(answering_pid(port).is_some());
    }
}
