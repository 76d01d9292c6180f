//! Core tests: links received from other farm nodes pass the one admission
//! ([`Core::admit`]) after their grant is recorded (`inbound.rs`).

use super::*;
use crate::provenance::Hop;
use crate::routing::InboundLink;

fn received(url: &str, via: Option<&str>, hops: &str, grant: &[&str]) -> InboundLink {
    let url = Url::parse(url).expect("url");
    InboundLink {
        host: host_key(&url).expect("host"),
        url,
        via: via.map(str::to_owned),
        hops: hops.to_owned(),
        grant: grant.iter().map(|g| (*g).to_owned()).collect(),
    }
}

/// Hands `links` to the core as the bus does: counted outstanding on the way.
fn receive(h: &mut Harness, links: Vec<InboundLink>) -> Vec<Action> {
    h.shared.outstanding.add(links.len() as u64);
    let mut out = Vec::new();
    h.core.on_inbound(links, h.t0, &mut out);
    out
}

#[test]
fn received_links_pass_the_admission_of_a_shards_own() {
    let mut h = harness(&["http://a.test/"]);
    let out = receive(
        &mut h,
        vec![
            // A gzipped sitemap another node's robots.txt named: exempt from the
            // refused extensions on its sitemap hop, and granted that host.
            received(
                "http://a.test/chain-0.xml.gz",
                Some("http://b.test/robots.txt"),
                "S",
                &["http://b.test"],
            ),
            // A `.gz` link of a page: refused, logged with its referrer and hops.
            received("http://a.test/file.gz", Some("http://b.test/p"), "LL", &[]),
            // Known already (the seed): dropped.
            received("http://a.test/", Some("http://b.test/p"), "LL", &[]),
            // Handed to the sending node by `trawl add`: a seed.
            received("http://a.test/added", None, "", &[]),
        ],
    );
    let logged = logs(&out);
    assert_eq!(logged.len(), 1, "{out:?}");
    assert_eq!(logged[0].url, "http://a.test/file.gz");
    assert_eq!(logged[0].outcome, Outcome::Filtered);
    assert_eq!(logged[0].via.as_deref(), Some("http://b.test/p"));
    assert_eq!(logged[0].annotations, ["filter:blocked_extension"]);
    let mut queued = h.checkpointed();
    queued.sort();
    assert_eq!(
        queued,
        [
            "http://a.test/",
            "http://a.test/added",
            "http://a.test/chain-0.xml.gz"
        ]
    );
    // The seed and the two admitted: what travelled is counted no more.
    assert_eq!(h.outstanding(), 3);
    assert_eq!(
        h.shared
            .memory
            .sitemaps
            .origins("http://a.test/chain-0.xml.gz"),
        Some(vec!["http://b.test".to_owned()])
    );
}

#[test]
fn a_received_seed_refused_by_a_filter_is_logged_as_added() {
    let mut h = harness(&["http://a.test/"]);
    let out = receive(&mut h, vec![received("http://a.test/x.zip", None, "", &[])]);
    let logged = logs(&out);
    assert_eq!(logged.len(), 1, "{out:?}");
    assert_eq!(logged[0].via, None);
    assert_eq!(logged[0].annotations, ["filter:blocked_extension", "added"]);
    assert_eq!(h.outstanding(), 1);
}

#[test]
fn a_grant_received_after_the_read_reads_the_sitemap_again() {
    let mut h = harness(&["http://a.test/"]);
    let sitemap = "http://a.test/sitemap.xml";
    let first = received(
        sitemap,
        Some("http://b.test/robots.txt"),
        "S",
        &["http://b.test"],
    );
    assert!(logs(&receive(&mut h, vec![first])).is_empty());
    // Read (with b.test's permission), then c.test's robots.txt names it too, from
    // another node: known, but read again with both.
    assert_eq!(
        h.shared.memory.sitemaps.read(sitemap),
        Some(vec!["http://b.test".to_owned()])
    );
    let later = received(
        sitemap,
        Some("http://c.test/robots.txt"),
        "S",
        &["http://c.test"],
    );
    let out = receive(&mut h, vec![later.clone()]);
    assert!(out.is_empty(), "{out:?}");
    let queued: Vec<String> = h.checkpointed();
    assert_eq!(
        queued.iter().filter(|u| *u == sitemap).count(),
        2,
        "{queued:?}"
    );
    assert_eq!(h.outstanding(), 3);
    let mut origins = h.shared.memory.sitemaps.origins(sitemap).expect("grant");
    origins.sort();
    assert_eq!(origins, ["http://b.test", "http://c.test"]);
    // The same grant once more changes nothing: known, not read again.
    receive(&mut h, vec![later]);
    assert_eq!(h.outstanding(), 3);
}

/// A farm node that owns the hosts named.
struct Owns(Vec<&'static str>);

impl crate::routing::FarmRoutes for Owns {
    fn owns(&self, url: &str) -> bool {
        self.0.iter().any(|h| url.starts_with(h))
    }
    fn count_known(&self, _: u64) {}
}

/// A re-crawl's `304`: the links read back from the previous capture of a sitemap
/// index go to their owners as a fetched index's do, listed sitemap files with the
/// index's grant, and only this node's own are admitted here.
#[test]
fn links_read_back_for_a_304_go_to_their_farm_owners() {
    let mut h = harness_with(
        &["http://a.test/"],
        |c| {
            c.filter.scope = Scope::Any;
            c.farm = Some(Arc::new(Owns(vec!["http://a.test"])));
        },
        |_| {},
    );
    let index = QueuedUrl {
        url: "http://a.test/sitemap-index.xml".to_owned(),
        via: Some("http://a.test/robots.txt".to_owned()),
        hops: "S".to_owned(),
        attempts: 0,
    };
    let links = vec![
        ("http://b.test/sitemap-1.xml".to_owned(), Hop::Manifest),
        ("http://a.test/sitemap-2.xml".to_owned(), Hop::Manifest),
        ("http://b.test/page".to_owned(), Hop::Link),
    ];
    let before = h.shared.outstanding.get();
    let mut out = Vec::new();
    h.core.on_previous_links(&index, &links, h.t0, &mut out);
    let sent: Vec<&super::super::ToFarm> = out
        .iter()
        .filter_map(|a| match a {
            Action::Farm(to) => Some(&**to),
            _ => None,
        })
        .collect();
    assert_eq!(sent.len(), 2, "{out:?}");
    assert_eq!(
        sent[0].links,
        [("http://b.test/sitemap-1.xml".to_owned(), Hop::Manifest)]
    );
    assert!(
        !sent[0].grant.is_empty(),
        "the listed sitemap carries the index's grant"
    );
    assert_eq!(
        sent[1].links,
        [("http://b.test/page".to_owned(), Hop::Link)]
    );
    assert!(sent[1].grant.is_empty());
    assert!(sent.iter().all(|s| s.via == index.url && s.hops == "S"));
    // Two batches wait outstanding until the driver hands them over; the own sitemap
    // is queued here.
    let queued = h.checkpointed();
    assert!(
        queued.iter().any(|u| u == "http://a.test/sitemap-2.xml"),
        "{queued:?}"
    );
    assert!(
        queued.iter().all(|u| !u.starts_with("http://b.test")),
        "{queued:?}"
    );
    assert_eq!(h.shared.outstanding.get(), before + 2 + 1);
}
