//! Wall-clock text for `push/event` timestamps and ended records, without reading a clock.
//!
//! The core gets `now: Instant` from its driver. A [`WallClock`] anchors one `Instant` to one
//! `SystemTime`, chosen by whoever builds the server, so timestamps are deterministic in tests.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// An `Instant` paired with the wall-clock time it stands for.
#[derive(Debug, Clone, Copy)]
pub struct WallClock {
    at: Instant,
    wall: SystemTime,
}

impl WallClock {
    /// `at` stands for `wall`.
    pub fn new(at: Instant, wall: SystemTime) -> Self {
        WallClock { at, wall }
    }

    /// The wall-clock time `now` stands for.
    pub fn wall(&self, now: Instant) -> SystemTime {
        match now.checked_duration_since(self.at) {
            Some(d) => self.wall + d,
            None => self.wall - self.at.duration_since(now),
        }
    }

    /// `now` as ISO 8601 UTC text with millisecond precision, e.g. `2026-01-23T10:30:00.000Z`.
    pub fn iso8601(&self, now: Instant) -> String {
        iso8601(self.wall(now))
    }
}

/// `t` as ISO 8601 UTC text with millisecond precision (times before 1970 print as 1970).
pub fn iso8601(t: SystemTime) -> String {
    let since = t.duration_since(UNIX_EPOCH).unwrap_or(Duration::ZERO);
    let secs = since.as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        since.subsec_millis()
    )
}

/// Days since 1970-01-01 to a proleptic Gregorian date (the well-known era algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_known_dates() {
        assert_eq!(iso8601(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let t = UNIX_EPOCH + Duration::from_millis(1_769_164_200_123);
        assert_eq!(iso8601(t), "2026-01-23T10:30:00.123Z");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400); // 2000-02-29
        assert_eq!(iso8601(leap), "2000-02-29T00:00:00.000Z");
    }

    /// The date of `days` after 1970-01-01, counted the slow way: whole years, then months.
    fn date_by_counting(mut days: u64) -> (u64, u64, u64) {
        let leap = |y: u64| (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
        let mut year = 1970;
        loop {
            let len = if leap(year) { 366 } else { 365 };
            if days < len {
                break;
            }
            days -= len;
            year += 1;
        }
        let feb = if leap(year) { 29 } else { 28 };
        let mut month = 1;
        for len in [31, feb, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31] {
            if days < len {
                break;
            }
            days -= len;
            month += 1;
        }
        (year, month, days + 1)
    }

    proptest::proptest! {
        /// Every day from 1970 to beyond 2400 (century and 400-year leap rules included)
        /// prints as the date found by counting days.
        #[test]
        fn dates_agree_with_counting_days(days in 0u64..160_000, secs in 0u64..86_400) {
            let (y, m, d) = date_by_counting(days);
            let t = UNIX_EPOCH + Duration::from_secs(days * 86_400 + secs);
            let text = iso8601(t);
            proptest::prop_assert!(
                text.starts_with(&format!("{y:04}-{m:02}-{d:02}T")),
                "{text} is not {y:04}-{m:02}-{d:02}"
            );
        }
    }

    #[test]
    fn the_first_and_last_day_of_every_month_of_a_leap_and_a_common_year() {
        for (from, year) in [(10_957u64, 2000), (11_323, 2001)] {
            let mut days = from;
            let lens = if year == 2000 {
                [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
            } else {
                [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
            };
            for (i, len) in lens.into_iter().enumerate() {
                let first = iso8601(UNIX_EPOCH + Duration::from_secs(days * 86_400));
                let last =
                    iso8601(UNIX_EPOCH + Duration::from_secs((days + len - 1) * 86_400 + 86_399));
                assert_eq!(first, format!("{year}-{:02}-01T00:00:00.000Z", i + 1));
                assert_eq!(last, format!("{year}-{:02}-{len:02}T23:59:59.000Z", i + 1));
                days += len;
            }
        }
    }

    #[test]
    fn wall_clock_follows_the_instant() {
        let t0 = Instant::now();
        let c = WallClock::new(t0, UNIX_EPOCH + Duration::from_secs(60));
        assert_eq!(
            c.iso8601(t0 + Duration::from_secs(1)),
            "1970-01-01T00:01:01.000Z"
        );
    }
}
