//! Percentiles, timing helpers and a process's resident set.

use std::time::{Duration, Instant};

/// The `p`-th percentile (0..=100) of `samples` by nearest rank; `None` when empty.
pub fn percentile(samples: &[Duration], p: f64) -> Option<Duration> {
    if samples.is_empty() {
        return None;
    }
    let mut sorted = samples.to_vec();
    sorted.sort_unstable();
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

/// Runs `step` over `items` until they run out or `budget` has passed, and returns how many
/// ran and how long they took.
pub fn timed<T>(items: &[T], budget: Duration, mut step: impl FnMut(&T)) -> (usize, Duration) {
    let start = Instant::now();
    let mut done = 0;
    for item in items {
        step(item);
        done += 1;
        // Reading the clock every item would cost more than some steps measured here.
        if done % 256 == 0 && start.elapsed() > budget {
            break;
        }
    }
    (done, start.elapsed())
}

/// Items per second, guarding against a zero duration.
pub fn rate(count: usize, took: Duration) -> f64 {
    count as f64 / took.as_secs_f64().max(1e-9)
}

/// The resident set of process `pid` in bytes, from Linux's `/proc/PID/status`; `None` where
/// it cannot be read.
pub(crate) fn resident_set(pid: u32) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kb: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kb * 1024.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_take_the_nearest_rank() {
        let ms = |n| Duration::from_millis(n);
        let samples: Vec<Duration> = (1..=100).map(ms).collect();
        assert_eq!(percentile(&samples, 50.0), Some(ms(50)));
        assert_eq!(percentile(&samples, 99.0), Some(ms(99)));
        assert_eq!(percentile(&samples, 100.0), Some(ms(100)));
        assert_eq!(percentile(&[ms(7)], 99.0), Some(ms(7)));
        assert_eq!(percentile(&[], 50.0), None);
    }

    #[test]
    fn timed_stops_at_the_budget_or_the_end() {
        let items = vec![0u8; 1000];
        let (done, _) = timed(&items, Duration::from_secs(60), |_| {});
        assert_eq!(done, 1000);
        let (done, _) = timed(&items, Duration::ZERO, |_| {});
        assert_eq!(done, 256, "checks the budget every 256 items");
    }
}
