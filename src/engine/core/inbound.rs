//! Links another farm node found for this shard's hosts: they enter the
//! core here and pass the one admission a shard's own links pass ([`Core::admit`]:
//! the filters with the sitemap exemption from refused extensions, the handler's
//! hook, then the frontier). A sitemap file among them brings its robots.txt grant,
//! recorded first, as one node records the grant of a `Sitemap:` line or an index's
//! child before it tests the URL: a sitemap already read without that permission is
//! read again.

use super::{Action, Core, Now};
use crate::frontier::QueuedUrl;
use crate::routing::InboundLink;
use crate::sitemap::Granted;

impl Core {
    /// In a farm: takes the links another node owns out of `links` into an
    /// [`Action::Farm`], untested, with their grant; the owner tests and admits them
    /// ([`Core::on_inbound`]).
    pub(super) fn split_for_farm(
        &self,
        links: &mut Vec<(String, crate::provenance::Hop)>,
        via: &str,
        hops: &str,
        grant: &[String],
        out: &mut Vec<Action>,
    ) {
        let Some(farm) = &self.shared.farm_routes else {
            return;
        };
        if links.iter().all(|(url, _)| farm.owns(url)) {
            return;
        }
        let (own, foreign): (Vec<_>, Vec<_>) = links.drain(..).partition(|(url, _)| farm.owns(url));
        *links = own;
        self.shared.outstanding.add(1);
        out.push(Action::Farm(Box::new(super::ToFarm {
            links: foreign,
            via: via.to_owned(),
            hops: hops.to_owned(),
            grant: grant.to_vec(),
        })));
    }

    /// Links received from the farm: grants recorded, one pass over the presence bits,
    /// the new ones admitted. The bus counted each link outstanding while it travelled
    /// to this shard; that count ends here, after the admitted ones are counted anew.
    pub fn on_inbound(&mut self, links: Vec<InboundLink>, now: Now, out: &mut Vec<Action>) {
        let travelled = links.len() as u64;
        let memory = &self.shared.memory.sitemaps;
        let granted: Vec<Option<Granted>> = links
            .iter()
            .map(|l| (!l.grant.is_empty()).then(|| memory.grant(l.url.as_str(), &l.grant)))
            .collect();
        let mut seen = std::mem::take(&mut self.seen_scratch);
        seen.clear();
        seen.resize(links.len(), false);
        {
            let keys: Vec<&[u8]> = links.iter().map(|l| l.url.as_str().as_bytes()).collect();
            self.shared.memory.seen.test_and_set_batch(&keys, &mut seen);
        }
        let mut known = 0u64;
        for ((link, &is_known), granted) in links.into_iter().zip(seen.iter()).zip(granted) {
            if !is_known {
                self.admit(link.url, link.via.as_deref(), link.hops, now, out);
                continue;
            }
            known += 1;
            if granted == Some(Granted::AfterRead) {
                // Read before this permission reached it: read it again, past the
                // presence bits and the filters it passed when it was first queued.
                let item = QueuedUrl {
                    url: link.url.into(),
                    via: link.via,
                    hops: link.hops,
                    attempts: 0,
                };
                self.shared.outstanding.add(1);
                self.route(link.host, item, now, out);
            }
        }
        self.seen_scratch = seen;
        if let Some(farm) = &self.shared.farm_routes {
            farm.count_known(known);
        }
        self.shared.outstanding.sub(travelled);
    }
}
