//! UTC timestamps for `WARC-Date` and file names, without a calendar dependency.
//!
//! WARC 1.1 takes a W3C-DTF date in UTC and allows precision finer than a
//! second; trawl writes microseconds (`2026-11-22T11:05:01.123456Z`) so that the records
//! of one exchange and a later revisit order correctly. File names use the 14-digit
//! form (`20261122110501`) that Heritrix and wget use.

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::calendar::{civil_from_days, days_from_civil};

/// A UTC instant with microsecond precision, as written in `WARC-Date`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct WarcDate {
    unix_micros: i64,
}

impl WarcDate {
    /// The current time from the system clock (a clock before 1970 reads as 1970).
    pub fn now() -> Self {
        Self::from_system_time(SystemTime::now())
    }

    /// Converts a `SystemTime`, truncating to microseconds.
    pub fn from_system_time(time: SystemTime) -> Self {
        let since = time.duration_since(UNIX_EPOCH).unwrap_or(Duration::ZERO);
        let micros = i64::try_from(since.as_micros()).unwrap_or(i64::MAX);
        Self {
            unix_micros: micros,
        }
    }

    /// A date from microseconds since the Unix epoch (negative values are clamped to the
    /// epoch: WARC dates before 1970 never occur in a crawl).
    pub fn from_unix_micros(unix_micros: i64) -> Self {
        Self {
            unix_micros: unix_micros.max(0),
        }
    }

    /// Microseconds since the Unix epoch.
    pub const fn unix_micros(&self) -> i64 {
        self.unix_micros
    }

    /// The `YYYYMMDDhhmmss` form used in WARC file names and CDX timestamps.
    pub fn compact(&self) -> String {
        let c = self.civil();
        format!(
            "{:04}{:02}{:02}{:02}{:02}{:02}",
            c.year, c.month, c.day, c.hour, c.minute, c.second
        )
    }

    fn civil(&self) -> Civil {
        let secs = self.unix_micros.div_euclid(1_000_000);
        let micros = self.unix_micros.rem_euclid(1_000_000);
        let days = secs.div_euclid(86_400);
        let of_day = secs.rem_euclid(86_400);
        let (year, month, day) = civil_from_days(days);
        Civil {
            year,
            month,
            day,
            hour: of_day / 3600,
            minute: of_day % 3600 / 60,
            second: of_day % 60,
            micros,
        }
    }
}

impl fmt::Display for WarcDate {
    /// The `WARC-Date` text: `YYYY-MM-DDThh:mm:ss.ffffffZ`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = self.civil();
        if (0..=9999).contains(&c.year) {
            // Every crawl's case, digit by digit into a fixed template: the `write!`
            // below costs ~2,500 instructions a date, and every crawl log line and WARC
            // record writes one.
            let mut text = *b"0000-00-00T00:00:00.000000Z";
            for (at, width, value) in [
                (0, 4, c.year),
                (5, 2, c.month),
                (8, 2, c.day),
                (11, 2, c.hour),
                (14, 2, c.minute),
                (17, 2, c.second),
                (20, 6, c.micros),
            ] {
                put_digits(text.get_mut(at..at + width).unwrap_or_default(), value);
            }
            // The template and the digits are ASCII.
            return f.write_str(std::str::from_utf8(&text).unwrap_or_default());
        }
        write!(
            f,
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}Z",
            c.year, c.month, c.day, c.hour, c.minute, c.second, c.micros
        )
    }
}

/// Writes `value`'s last `slot.len()` decimal digits into `slot`, zero-padded.
fn put_digits(slot: &mut [u8], mut value: i64) {
    for byte in slot.iter_mut().rev() {
        // `value` is non-negative here (a civil field), so the digit is 0-9.
        *byte = b'0' + u8::try_from(value.rem_euclid(10)).unwrap_or(0);
        value /= 10;
    }
}

/// A `WARC-Date` text that is not `YYYY-MM-DDThh:mm:ss[.fraction]Z`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("date is not YYYY-MM-DDThh:mm:ss[.f]Z in UTC")]
pub struct DateParseError;

impl std::str::FromStr for WarcDate {
    type Err = DateParseError;

    /// Reads the W3C-DTF form WARC uses (UTC, `Z`), with 0 to 9 fraction digits.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bytes = text.as_bytes();
        let (main, rest) = (bytes.get(..19).ok_or(DateParseError)?, bytes.get(19..));
        let num = |range: std::ops::Range<usize>| -> Result<i64, DateParseError> {
            let digits = main.get(range).ok_or(DateParseError)?;
            if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
                return Err(DateParseError);
            }
            Ok(digits
                .iter()
                .fold(0, |acc, &d| acc * 10 + i64::from(d - b'0')))
        };
        let seps = [(4, b'-'), (7, b'-'), (10, b'T'), (13, b':'), (16, b':')];
        if seps.iter().any(|&(at, sep)| main.get(at) != Some(&sep)) {
            return Err(DateParseError);
        }
        let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
        let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
        if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 {
            return Err(DateParseError);
        }
        if second > 60 {
            return Err(DateParseError);
        }
        let micros = match rest.unwrap_or_default() {
            [b'Z'] => 0,
            [b'.', fraction @ .., b'Z']
                if (1..=9).contains(&fraction.len()) && fraction.iter().all(u8::is_ascii_digit) =>
            {
                fraction
                    .iter()
                    .chain(std::iter::repeat(&b'0'))
                    .take(6)
                    .fold(0, |acc, &d| acc * 10 + i64::from(d - b'0'))
            }
            _ => return Err(DateParseError),
        };
        let days = days_from_civil(year, month, day);
        if civil_from_days(days) != (year, month, day) {
            return Err(DateParseError);
        }
        let secs = days * 86_400 + hour * 3600 + minute * 60 + second;
        Ok(Self::from_unix_micros(secs * 1_000_000 + micros))
    }
}

impl serde::Serialize for WarcDate {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for WarcDate {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

struct Civil {
    year: i64,
    month: i64,
    day: i64,
    hour: i64,
    minute: i64,
    second: i64,
    micros: i64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_known_instants() {
        let table = [
            (0, "1970-01-01T00:00:00.000000Z", "19700101000000"),
            (
                951_782_400_000_001,
                "2000-02-29T00:00:00.000001Z",
                "20000229000000",
            ),
            (
                1_790_075_101_123_456,
                "2026-09-22T11:05:01.123456Z",
                "20260922110501",
            ),
            (
                4_107_542_399_999_999,
                "2100-02-28T23:59:59.999999Z",
                "21000228235959",
            ),
        ];
        for (micros, text, compact) in table {
            let date = WarcDate::from_unix_micros(micros);
            assert_eq!(date.to_string(), text);
            assert_eq!(date.compact(), compact);
            assert_eq!(text.parse::<WarcDate>(), Ok(date));
        }
    }

    #[test]
    fn parses_other_precisions_and_rejects_garbage() {
        let base = WarcDate::from_unix_micros(1_790_075_101_000_000);
        assert_eq!("2026-09-22T11:05:01Z".parse(), Ok(base));
        let plus = WarcDate::from_unix_micros(1_790_075_101_300_000);
        assert_eq!("2026-09-22T11:05:01.3Z".parse(), Ok(plus));
        assert_eq!("2026-09-22T11:05:01.300000999Z".parse(), Ok(plus));
        for bad in [
            "",
            "2026-09-22",
            "2026-09-22T11:05:01",
            "2026-09-22T11:05:01+00:00",
            "2026-02-30T11:05:01Z",
            "2026-13-01T11:05:01Z",
            "2026-09-22T24:05:01Z",
            "2026-09-22T11:05:01.Z",
            "2026-09-22T11:05:01.1234567890Z",
            "2026-09-22 11:05:01Z",
            "+026-09-22T11:05:01Z",
            "2026-09-22T11:05:01ZZ",
            "2026-09-22T11:05:01.١Z",
        ] {
            assert_eq!(bad.parse::<WarcDate>(), Err(DateParseError), "{bad:?}");
        }
    }

    #[test]
    fn fast_text_matches_the_format_string() {
        let slow = |d: WarcDate| {
            let c = d.civil();
            format!(
                "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}Z",
                c.year, c.month, c.day, c.hour, c.minute, c.second, c.micros
            )
        };
        let mut micros: i64 = 0;
        for step in 0..20_000i64 {
            let d = WarcDate::from_unix_micros(micros);
            assert_eq!(d.to_string(), slow(d));
            micros = micros.wrapping_add(step * 7_919_113_337 + 1);
        }
        // Past year 9999 the format string's wider year applies.
        let far = WarcDate::from_unix_micros(i64::MAX);
        assert_eq!(far.to_string(), slow(far));
        let last = WarcDate::from_unix_micros(253_402_300_799_999_999);
        assert_eq!(last.to_string(), "9999-12-31T23:59:59.999999Z");
    }

    #[test]
    fn clamps_before_epoch() {
        assert_eq!(WarcDate::from_unix_micros(-5).unix_micros(), 0);
        let early = UNIX_EPOCH - Duration::from_secs(10);
        assert_eq!(WarcDate::from_system_time(early).unix_micros(), 0);
    }

    #[test]
    fn every_day_of_four_centuries_round_trips() {
        // Against a naive day-by-day walk of the calendar.
        let mut year = 1970;
        let mut month = 1;
        let mut day = 1;
        for days in 0..146_097 {
            assert_eq!(civil_from_days(days), (year, month, day), "day {days}");
            assert_eq!(days_from_civil(year, month, day), days);
            let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
            let len = match month {
                2 if leap => 29,
                2 => 28,
                4 | 6 | 9 | 11 => 30,
                _ => 31,
            };
            day += 1;
            if day > len {
                day = 1;
                month += 1;
                if month > 12 {
                    month = 1;
                    year += 1;
                }
            }
        }
    }
}
