//! The special links an ordinary page carries, one kind per slot: redirects (codes,
//! chains, a loop, cross-host), error and soft-404 pages, meta refresh, `~user`, wiki and
//! query pages, robots probes, frames and image maps, images and documents, `nofollow`,
//! non-HTTP and hidden links.

use crate::hash::Rng;
use crate::hosts::HostRole;
use crate::html::{Element, HiddenIn, LinkKind};

use super::builder::Builder;
use super::routes::{wiki_segment, Probe, PROBES, QUERY_K, SMALL_K, WIKI_K};
use super::Site;

impl Site {
    pub(super) fn special(&self, b: &mut Builder<'_>, rng: &mut Rng, s: usize, n_pages: u32) {
        let index = b.host;
        let j = rng.range(1, u64::from(n_pages - 1)) as u32;
        let k = rng.below(u64::from(SMALL_K)) as u32;
        match s {
            0 => {
                let code = *rng.pick(&[301, 302, 303, 307, 308]).unwrap_or(&301);
                b.link(
                    Element::A,
                    index,
                    &format!("/r/{code}/{j}"),
                    LinkKind::Follow,
                    "moved",
                );
            }
            1 => b.link(
                Element::A,
                index,
                &format!("/r/chain/{}/{j}", rng.range(2, 4)),
                LinkKind::Follow,
                "chain",
            ),
            2 => b.link(Element::A, index, "/r/loop/a", LinkKind::Follow, "loop"),
            3 => {
                let h = rng.below(u64::from(self.cfg.hosts)) as u32;
                let h = if self.role(h) == HostRole::Normal {
                    h
                } else {
                    0
                };
                b.link(
                    Element::A,
                    index,
                    &format!("/r/x/{h}"),
                    LinkKind::Follow,
                    "away",
                );
            }
            4 => {
                let code = *rng
                    .pick(&["404", "410", "500", "503", "429"])
                    .unwrap_or(&"404");
                b.link(
                    Element::A,
                    index,
                    &format!("/e/{code}/{k}"),
                    LinkKind::Follow,
                    "error",
                );
            }
            5 => b.link(
                Element::A,
                index,
                &format!("/soft404/{k}"),
                LinkKind::Follow,
                "gone",
            ),
            6 => b.link(
                Element::A,
                index,
                &format!("/m/{k}"),
                LinkKind::Follow,
                "refresh",
            ),
            7 => b.link(
                Element::A,
                index,
                &format!("/~u{k}/"),
                LinkKind::Follow,
                "tilde",
            ),
            8 => {
                let w = rng.below(u64::from(WIKI_K)) as u32;
                b.link(
                    Element::A,
                    index,
                    &format!("/wiki/{}", wiki_segment(w)),
                    LinkKind::Follow,
                    "wiki",
                );
            }
            9 => {
                let q = rng.below(u64::from(QUERY_K)) as u32;
                b.link(
                    Element::A,
                    index,
                    &format!("/q/{q}?a={q}&b=two"),
                    LinkKind::Follow,
                    "query",
                );
            }
            10 => {
                let p = *rng.pick(&PROBES).unwrap_or(&Probe::Private);
                b.link(Element::A, index, &p.path(k), LinkKind::Follow, "probe");
            }
            11 => b.link(
                Element::A,
                index,
                &format!("/fs/{}", k % 2),
                LinkKind::Follow,
                "frames",
            ),
            12 => b.link(
                Element::IFrame,
                index,
                &format!("/p/{j}"),
                LinkKind::Follow,
                "frame",
            ),
            13 => b.link(
                Element::Area,
                index,
                &format!("/p/{j}"),
                LinkKind::Follow,
                "area",
            ),
            14 => {
                let ext = *rng.pick(&["png", "jpg", "gif"]).unwrap_or(&"png");
                b.link(
                    Element::Img,
                    index,
                    &format!("/img/{}.{ext}", rng.below(4)),
                    LinkKind::Resource,
                    "pic",
                );
            }
            15 => b.link(
                Element::A,
                index,
                &format!("/doc/{}.pdf", k % 2),
                LinkKind::Resource,
                "pdf",
            ),
            16 => b.link(
                Element::A,
                index,
                &format!("/p/{j}"),
                LinkKind::NoFollowRel,
                "sponsored",
            ),
            17 => b.non_http(false),
            18 => b.non_http(true),
            19 => b.hidden(HiddenIn::Comment, k),
            20 => b.hidden(HiddenIn::Script, k),
            _ => b.hidden(HiddenIn::Style, k),
        }
    }
}
