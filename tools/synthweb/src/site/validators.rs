//! Validators and conditional requests: a representation's ETag and Last-Modified,
//! and the `304 Not Modified` they earn.

use crate::changes::{self, Change};
use crate::coding;
use crate::hash::{hash_bytes, hash_words};

use super::response::{Conditions, Framing, Response};
use super::Site;

impl Site {
    pub(super) fn validators(&self, r: &mut Response, index: u32, path: &str) {
        let h = hash_bytes(hash_words(&[self.cfg.seed, u64::from(index)]), &r.body);
        r.headers.push(("ETag", format!("\"{h:016x}\"")));
        let secs = self.last_modified_secs(index, path);
        r.headers
            .push(("Last-Modified", coding::format_http_date(secs)));
    }

    /// Last-Modified of `path` on host `index`, in seconds since the epoch: between
    /// 2020-01-01 and about 2025-06 in generation 0; later for a changed or new page.
    #[must_use]
    pub fn last_modified_secs(&self, index: u32, path: &str) -> i64 {
        if matches!(
            self.change_at(index, path),
            Some(Change::Changed | Change::New)
        ) {
            return changes::changed_last_modified_secs(&self.cfg, index, path);
        }
        let lm_h = hash_bytes(self.cfg.seed ^ u64::from(index), path.as_bytes());
        1_577_836_800 + (lm_h % (2_000 * 86_400)) as i64
    }

    /// The `<lastmod>` of the sitemap files themselves.
    #[must_use]
    pub fn file_lastmod(&self) -> i64 {
        if changes::active(&self.cfg) {
            changes::changed_last_modified_secs(&self.cfg, 0, crate::sitemaps::INDEX)
        } else {
            // 2025-06-30T00:00:00Z
            1_751_241_600
        }
    }

    /// A `304 Not Modified` for `resp` if the conditions say the client's copy is current
    /// (If-None-Match takes precedence over If-Modified-Since, RFC 9110 13.2.2).
    #[must_use]
    pub fn not_modified(resp: &Response, cond: Conditions<'_>) -> Option<Response> {
        if resp.status != 200 || resp.hostile.is_some() {
            return None;
        }
        let etag = resp.header("ETag")?;
        let hit = if let Some(inm) = cond.if_none_match {
            coding::none_match_hits(inm, etag)
        } else if let Some(ims) = cond.if_modified_since {
            let lm = resp
                .header("Last-Modified")
                .and_then(coding::parse_http_date);
            match (coding::parse_http_date(ims), lm) {
                (Some(since), Some(lm)) => lm <= since,
                _ => false,
            }
        } else {
            false
        };
        hit.then(|| {
            let headers = resp
                .headers
                .iter()
                .filter(|(n, _)| matches!(*n, "ETag" | "Last-Modified" | "Vary"))
                .cloned()
                .collect();
            Response {
                status: 304,
                headers,
                body: Vec::new(),
                framing: Framing::ContentLength,
                hostile: None,
            }
        })
    }
}
