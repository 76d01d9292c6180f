//! `<lastmod>`: a W3C datetime (a profile of ISO 8601), as sitemaps.org requires.

use crate::calendar::{days_from_civil, days_in_month};

/// A parsed `<lastmod>`: seconds since the Unix epoch, UTC.
///
/// Accepted forms (W3C "Date and Time Formats"): `YYYY`, `YYYY-MM`, `YYYY-MM-DD`,
/// `YYYY-MM-DDThh:mmTZD`, `YYYY-MM-DDThh:mm:ssTZD`, `YYYY-MM-DDThh:mm:ss.sTZD`, where
/// `TZD` is `Z` or `+hh:mm` / `-hh:mm`. A date without a time means its first second
/// (UTC). Anything else is not a lastmod (the entry is kept without one).
///
/// A lastmod names a period as long as its precision (a year, a month, a day, a
/// minute, a second): [`LastMod::until`] is its last second, what a re-crawl compares
/// with the previous fetch (a page fetched at 10:00 and edited at 15:00 the same day
/// still says that day: only a fetch after the day's end shows it unchanged).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LastMod {
    /// Seconds since 1970-01-01T00:00:00Z: the period's first second.
    pub secs: i64,
    /// The period's last second (`secs` for a time with seconds).
    pub until: i64,
}

impl LastMod {
    /// Parse a W3C datetime; `None` when `text` (trimmed) is not one.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        let t = text.trim().as_bytes();
        let num = |from: usize, len: usize| -> Option<i64> {
            let digits = t.get(from..from + len)?;
            if !digits.iter().all(u8::is_ascii_digit) {
                return None;
            }
            std::str::from_utf8(digits).ok()?.parse().ok()
        };
        let year = num(0, 4)?;
        let (month, day, rest) = match t.len() {
            4 => (1, 1, None),
            7 if t.get(4) == Some(&b'-') => (num(5, 2)?, 1, None),
            _ if t.len() >= 10 && t.get(4) == Some(&b'-') && t.get(7) == Some(&b'-') => {
                (num(5, 2)?, num(8, 2)?, t.get(10..))
            }
            _ => return None,
        };
        if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
            return None;
        }
        let mut secs = days_from_civil(year, month, day) * 86_400;
        let until = match rest.filter(|r| !r.is_empty()) {
            Some(rest) => {
                secs += time_of_day(rest)?;
                // `Thh:mm` names a minute; with `:ss` a second.
                if rest.get(6) == Some(&b':') {
                    secs
                } else {
                    secs + 59
                }
            }
            None => match t.len() {
                4 => days_from_civil(year + 1, 1, 1) * 86_400 - 1,
                7 if month == 12 => days_from_civil(year + 1, 1, 1) * 86_400 - 1,
                7 => days_from_civil(year, month + 1, 1) * 86_400 - 1,
                _ => secs + 86_399,
            },
        };
        Some(Self { secs, until })
    }
}

/// `Thh:mm[:ss[.s+]]TZD` to seconds, the zone offset applied.
fn time_of_day(t: &[u8]) -> Option<i64> {
    let num = |from: usize| -> Option<i64> {
        let d = t.get(from..from + 2)?;
        if !d.iter().all(u8::is_ascii_digit) {
            return None;
        }
        Some(i64::from(d.first()? - b'0') * 10 + i64::from(d.get(1)? - b'0'))
    };
    if t.first() != Some(&b'T') || t.get(3) != Some(&b':') {
        return None;
    }
    let (h, m) = (num(1)?, num(4)?);
    let mut at = 6;
    let mut s = 0;
    if t.get(at) == Some(&b':') {
        s = num(at + 1)?;
        at += 3;
        if t.get(at) == Some(&b'.') {
            at += 1;
            let digits = t
                .get(at..)?
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count();
            if digits == 0 {
                return None;
            }
            at += digits;
        }
    }
    if h > 23 || m > 59 || s > 60 {
        return None;
    }
    let offset = match t.get(at..)? {
        b"Z" => 0,
        [sign @ (b'+' | b'-'), ..] => {
            let zone = t.get(at..)?;
            if zone.len() != 6 || zone.get(3) != Some(&b':') {
                return None;
            }
            let (zh, zm) = (num(at + 1)?, num(at + 4)?);
            if zh > 23 || zm > 59 {
                return None;
            }
            let o = zh * 3600 + zm * 60;
            if *sign == b'+' {
                o
            } else {
                -o
            }
        }
        _ => return None,
    };
    Some(h * 3600 + m * 60 + s - offset)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The period a lastmod names ends at its last second.
    #[test]
    fn until_is_the_last_second_of_the_period() {
        let until = |t: &str| LastMod::parse(t).map(|l| l.until - l.secs);
        assert_eq!(until("2025-11-25T10:00:07Z"), Some(0));
        assert_eq!(until("2025-11-25T10:00:07.25+01:00"), Some(0));
        assert_eq!(until("2025-11-25T10:00Z"), Some(59));
        assert_eq!(until("2025-11-25"), Some(86_399));
        assert_eq!(until("2025-02"), Some(28 * 86_400 - 1));
        assert_eq!(until("2024-02"), Some(29 * 86_400 - 1));
        assert_eq!(until("2025-12"), Some(31 * 86_400 - 1));
        assert_eq!(until("2025"), Some(365 * 86_400 - 1));
    }

    #[test]
    fn w3c_datetimes() {
        for (text, secs) in [
            ("1970", Some(0)),
            ("1970-02", Some(31 * 86_400)),
            ("2025-07-01", Some(1_751_328_000)),
            (" 2025-07-01T00:00:00+00:00 ", Some(1_751_328_000)),
            ("2025-07-01T00:00Z", Some(1_751_328_000)),
            ("2025-07-01T02:00:00+02:00", Some(1_751_328_000)),
            ("2025-06-30T19:30:00-04:30", Some(1_751_328_000)),
            ("2025-07-01T00:00:00.123Z", Some(1_751_328_000)),
            ("2024-02-29", Some(1_709_164_800)),
            ("2023-02-29", None),
            ("2025-13-01", None),
            ("2025-07-01T24:00:00Z", None),
            ("2025-07-01T00:00:00", None),
            ("2025-07-01T00:00:00+0200", None),
            ("2025-07-01T00:00:00.Z", None),
            ("25-07-01", None),
            ("yesterday", None),
            ("", None),
            ("2025-07-01T", None),
        ] {
            assert_eq!(LastMod::parse(text).map(|l| l.secs), secs, "{text:?}");
        }
    }
}
