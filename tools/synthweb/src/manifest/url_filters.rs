//! The URL filters: paths whose segments repeat like a trap's are never fetched.

use std::collections::HashMap;

/// More occurrences of one path segment than this make a URL a trap.
pub const MAX_SEGMENT_REPEATS: usize = 3;

/// trawl's repetition filter on the path of a request-target: one segment more than
/// [`MAX_SEGMENT_REPEATS`] times anywhere in the path, or a run of 2 or 3 segments
/// repeated 3 times in a row (`/a/b/a/b/a/b/`, `/x/y/z/x/y/z/x/y/z`). Empty segments are
/// ignored.
pub fn is_repetitive(path_q: &str) -> bool {
    let path = path_q.split('?').next().unwrap_or(path_q);
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for segment in &segments {
        let n = counts.entry(segment).or_default();
        *n += 1;
        if *n > MAX_SEGMENT_REPEATS {
            return true;
        }
    }
    (2..=3).any(|period| {
        segments.windows(3 * period).any(|w| {
            let (a, rest) = w.split_at(period);
            let (b, c) = rest.split_at(period);
            a == b && b == c
        })
    })
}
