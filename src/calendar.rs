//! The proleptic Gregorian calendar as day counts since 1970-01-01: the one civil-date
//! routine behind HTTP dates (`http::date`), sitemap `<lastmod>`s (`sitemap::lastmod`)
//! and `WARC-Date`s (`provenance::date`), so none of them needs a calendar dependency.
//!
//! A leaf: it imports nothing from the crate. Pure integer arithmetic (Howard Hinnant's
//! `days_from_civil` and `civil_from_days`), exact for every date whose day count fits
//! in an `i64` with room to spare (any year a crawl meets, and far beyond).

/// Days from 1970-01-01 to the civil date (`month` 1 to 12, `day` from 1). A day past
/// the month's end counts on into the next month (`(2025, 2, 29)` is 2025-03-01); the
/// parsers that must refuse such dates check [`days_in_month`] first.
pub(crate) fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let yoe = year.rem_euclid(400);
    let mp = if month > 2 { month - 3 } else { month + 9 };
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil date `(year, month, day)` of a day count since 1970-01-01: the inverse of
/// [`days_from_civil`] for every valid date.
pub(crate) fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Whether `year` has a 29 February.
pub(crate) fn is_leap_year(year: i64) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

/// Days in `month` (1 to 12) of `year`; 31 for a month out of range.
pub(crate) fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if is_leap_year(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// The slow reference: whole years, then whole months, then days, counted one by
    /// one from 1970-01-01 (backwards for earlier years).
    fn naive_days(year: i64, month: i64, day: i64) -> i64 {
        let mut days = 0;
        if year >= 1970 {
            for y in 1970..year {
                days += if is_leap_year(y) { 366 } else { 365 };
            }
        } else {
            for y in year..1970 {
                days -= if is_leap_year(y) { 366 } else { 365 };
            }
        }
        for m in 1..month {
            days += days_in_month(year, m);
        }
        days + day - 1
    }

    #[test]
    fn known_dates() {
        for (date, days) in [
            ((1970, 1, 1), 0),
            ((1969, 12, 31), -1),
            ((2000, 2, 29), 11_016),
            ((2000, 3, 1), 11_017),
            ((1900, 3, 1), -25_508),
            ((2025, 7, 1), 20_270),
            ((1, 1, 1), -719_162),
        ] {
            assert_eq!(days_from_civil(date.0, date.1, date.2), days, "{date:?}");
            assert_eq!(civil_from_days(days), date, "{days}");
        }
        // A day past the month's end rolls over, as the HTTP-date parser relies on.
        assert_eq!(days_from_civil(2025, 2, 29), days_from_civil(2025, 3, 1));
        assert_eq!(days_in_month(2024, 2), 29);
        assert_eq!(days_in_month(2100, 2), 28);
        assert_eq!(days_in_month(2000, 2), 29);
        assert_eq!(days_in_month(2025, 11), 30);
    }

    proptest! {
        /// The fast formula agrees with counting days one by one, and inverts.
        #[test]
        fn matches_a_naive_day_count(year in -2_000i64..6_000, month in 1i64..=12, day_seed in 0i64..31) {
            let day = day_seed % days_in_month(year, month) + 1;
            let days = days_from_civil(year, month, day);
            prop_assert_eq!(days, naive_days(year, month, day));
            prop_assert_eq!(civil_from_days(days), (year, month, day));
        }

        /// Every day count is a valid date, and consecutive counts are consecutive days.
        #[test]
        fn day_counts_walk_the_calendar(days in -1_000_000i64..2_000_000) {
            let (y, m, d) = civil_from_days(days);
            prop_assert!((1..=12).contains(&m));
            prop_assert!((1..=days_in_month(y, m)).contains(&d));
            prop_assert_eq!(days_from_civil(y, m, d), days);
            let next = civil_from_days(days + 1);
            let expected = if d < days_in_month(y, m) {
                (y, m, d + 1)
            } else if m < 12 {
                (y, m + 1, 1)
            } else {
                (y + 1, 1, 1)
            };
            prop_assert_eq!(next, expected);
        }
    }
}
