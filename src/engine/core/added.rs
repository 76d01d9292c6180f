//! URLs added while the crawl runs (`trawl add`, `trawl ctl add`, the control API,
//! `CrawlHandle::add`: all through the drop directory, `crate::add`): the coordinator
//! sends each to the shard that owns its host (`engine/adds.rs`), and they enter the
//! core here. They pass the one admission a page's links pass ([`Core::admit`]): one
//! pass over the presence bits (a URL already seen is dropped, as a duplicate link
//! is), then the scope and filters, the handler's `accept_link` hook (asked with an
//! empty referrer), the counters and the frontier; robots.txt and politeness follow as
//! for any URL. An added URL has no page and no hop: a refusal is a `filtered`
//! crawl-log line annotated `added`.

use url::Url;

use crate::crawllog::{LogRecord, Outcome};

use super::page::Candidate;
use super::{Action, Core, Now};

impl Core {
    /// URLs added to the running crawl, for this shard's hosts, as written (the drop
    /// directory checked them as absolute http(s) URLs): canonicalized, tested against
    /// the presence bits in one pass, and the new ones admitted. The coordinator
    /// counted each outstanding while it travelled here; that count ends here, after
    /// the admitted ones are counted anew.
    pub fn on_added(&mut self, urls: Vec<String>, now: Now, out: &mut Vec<Action>) {
        let travelled = urls.len() as u64;
        let mut canonical: Vec<Url> = Vec::with_capacity(urls.len());
        for raw in urls {
            match crate::url::canonicalize_absolute(&raw) {
                Ok(url) => canonical.push(url),
                Err(_) => {
                    let mut rec = LogRecord::new(now.wall, raw, Outcome::Filtered);
                    rec.annotations.push("filter:unparsable".to_owned());
                    rec.annotations.push("added".to_owned());
                    out.push(Action::Log(Box::new(rec)));
                }
            }
        }
        let mut seen = std::mem::take(&mut self.seen_scratch);
        seen.clear();
        seen.resize(canonical.len(), false);
        {
            let keys: Vec<&[u8]> = canonical.iter().map(|u| u.as_str().as_bytes()).collect();
            self.shared.memory.seen.test_and_set_batch(&keys, &mut seen);
        }
        let fresh: Vec<(Candidate, String)> = canonical
            .into_iter()
            .zip(seen.iter())
            .filter(|(_, &known)| !known)
            .map(|(url, _)| (Candidate::Parsed(url), String::new()))
            .collect();
        self.seen_scratch = seen;
        self.admit_batch(None, fresh, now, out);
        self.shared.outstanding.sub(travelled);
    }
}
