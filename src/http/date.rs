//! HTTP-date parsing (RFC 9110 §5.6.7), for `Expires`, `Date` and `Retry-After`.
//!
//! Only the arithmetic the robots cache and `Retry-After` need: a date becomes seconds
//! since the Unix epoch, so `Expires - Date` gives a freshness lifetime without reading
//! the clock. It lives with the other header helpers (it moved here from `robots/`,
//! which still re-exports it, when the engine started reading `Retry-After` too).

#![deny(clippy::indexing_slicing)]

use crate::calendar::days_from_civil;

const MONTHS: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];

/// Parses the three HTTP-date forms — IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`),
/// RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime (`Sun Nov  6 08:49:37
/// 1994`) — into seconds since the Unix epoch. `None` for anything else.
pub fn parse_http_date(text: &str) -> Option<i64> {
    let mut month = None;
    let mut time = None;
    let mut numbers = Vec::with_capacity(2);
    for token in text.split([' ', ',', '-', '\t']).filter(|t| !t.is_empty()) {
        if token.contains(':') {
            time = Some(token);
        } else if token.bytes().all(|b| b.is_ascii_digit()) {
            numbers.push(token);
        } else if token.len() == 3 {
            let lower = token.to_ascii_lowercase();
            if let Some(i) = MONTHS.iter().position(|m| *m == lower) {
                month = Some(i64::try_from(i).ok()? + 1);
            } else if lower != "gmt" && lower != "utc" && !is_weekday(&lower) {
                return None;
            }
        } else if !is_weekday(&token.to_ascii_lowercase()) {
            return None;
        }
    }
    let month = month?;
    let [day, year] = numbers.as_slice() else {
        return None;
    };
    let day: i64 = day.parse().ok()?;
    let mut year: i64 = year.parse().ok()?;
    if year < 100 {
        // RFC 9110 §5.6.7: a two-digit year more than 50 years in the future is in
        // the past century; for dates near today that means 70..99 -> 19xx.
        year += if year >= 70 { 1900 } else { 2000 };
    }
    let mut hms = time?.split(':');
    let h: i64 = hms.next()?.parse().ok()?;
    let m: i64 = hms.next()?.parse().ok()?;
    let s: i64 = hms.next()?.parse().ok()?;
    if hms.next().is_some() || !(1..=31).contains(&day) || h > 23 || m > 59 || s > 60 {
        return None;
    }
    Some(days_from_civil(year, month, day) * 86_400 + h * 3600 + m * 60 + s)
}

fn is_weekday(lower: &str) -> bool {
    matches!(
        lower,
        "mon"
            | "tue"
            | "wed"
            | "thu"
            | "fri"
            | "sat"
            | "sun"
            | "monday"
            | "tuesday"
            | "wednesday"
            | "thursday"
            | "friday"
            | "saturday"
            | "sunday"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_forms_agree() {
        let want = Some(784_111_777);
        assert_eq!(parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"), want);
        assert_eq!(parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT"), want);
        assert_eq!(parse_http_date("Sun Nov  6 08:49:37 1994"), want);
        assert_eq!(parse_http_date("Thu, 01 Jan 1970 00:00:00 GMT"), Some(0));
    }

    #[test]
    fn garbage_is_none() {
        for s in [
            "0",
            "-1",
            "",
            "tomorrow",
            "Sun, 06 Foo 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994",
        ] {
            assert_eq!(parse_http_date(s), None, "{s}");
        }
    }
}
