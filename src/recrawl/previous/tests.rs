use super::*;

fn prev(status: u16, body: &[u8]) -> IndexEntry {
    IndexEntry {
        url: "http://a.test/p/1".to_owned(),
        status,
        fetched_at_us: 1_751_328_000_500_000,
        validators: Validators {
            etag: Some("\"e1\"".to_owned()),
            last_modified: None,
        },
        payload_digest: Digest::of(body).to_string(),
        record_id: RecordId::new_v4().to_string(),
        warc_file: "x.warc.gz".to_owned(),
        warc_offset: 7,
        payload_bytes: body.len() as u64,
        hops: Some("L".to_owned()),
        via: Some("http://a.test/".to_owned()),
    }
}

fn synth(i: usize) -> IndexEntry {
    IndexEntry {
        url: format!("http://h{:06}.synth.test:40123/p/{i}", i % 1000),
        status: 200,
        fetched_at_us: 1_764_000_000_000_000 + i as i64,
        validators: Validators {
            etag: Some(format!("\"{i:016x}-br\"")),
            last_modified: Some("Fri, 21 Feb 2020 14:22:46 GMT".to_owned()),
        },
        payload_digest: "sha1:3DNNVLSLRQXZMT24WPIPEESIW24CFHAZ".to_owned(),
        record_id: format!("<urn:uuid:00000000-0000-4000-8000-{i:012}>"),
        warc_file: "trawl-20261125180451-00000-0.warc.gz".to_owned(),
        warc_offset: i as u64 * 1000,
        payload_bytes: 6000,
        hops: Some("LL".to_owned()),
        via: Some(format!(
            "http://h{:06}.synth.test:40123/p/{}",
            i % 1000,
            i / 2
        )),
    }
}

#[test]
fn judgements_and_their_revisits() {
    let p = prev(200, b"hello");
    let j = judge(Some(p.clone()), 304, Some(b""));
    assert_eq!(j.verdict, Verdict::NotModified);
    assert_eq!(j.annotation(), Some("not-modified"));
    assert_eq!(j.previous.as_ref(), Some(&p));
    let r = j.revisit.expect("a 304 is a revisit");
    assert_eq!(r.profile, RevisitProfile::ServerNotModified);
    assert_eq!(r.payload_digest, Digest::of(b"hello"));
    assert_eq!(
        r.record_id.map(|id| id.to_string()),
        Some(p.record_id.clone())
    );
    assert_eq!(r.date.unix_micros(), p.fetched_at_us);
    let j = judge(Some(p.clone()), 200, Some(b"hello"));
    assert_eq!(j.verdict, Verdict::Unchanged);
    assert_eq!(
        j.revisit.map(|r| r.profile),
        Some(RevisitProfile::IdenticalPayload)
    );
    let j = judge(Some(p.clone()), 200, Some(b"hello!"));
    assert_eq!((j.verdict, j.revisit.is_none()), (Verdict::Changed, true));
    assert_eq!(judge(Some(p), 410, None).annotation(), Some("gone"));
    assert_eq!(judge(None, 200, Some(b"x")).annotation(), Some("new"));
    assert_eq!(judge(None, 404, None).annotation(), None);
}

/// A 304's entry keeps the earlier capture's id, date and digest (what the next
/// revisit refers to) but points at the revisit record written now, with this
/// crawl's hop path and referrer; a full capture's entry is its own; a skipped
/// URL's is the previous one with this crawl's hop path and referrer.
#[test]
fn a_carried_forward_entry_points_at_the_new_revisit_record() {
    let p = prev(200, b"hello");
    let head = ResponseHead::parse(b"HTTP/1.1 304 Not Modified\r\nETag: \"e2\"\r\n\r\n").unwrap();
    let j = judge(Some(p.clone()), 304, Some(b""));
    let date = WarcDate::from_unix_micros(1_800_000_000_000_000);
    let queued = |hops: &str, via: Option<&str>| QueuedUrl {
        url: p.url.clone(),
        via: via.map(str::to_owned),
        hops: hops.to_owned(),
        attempts: 0,
    };
    let via = Some("http://b.test/sitemap.xml");
    let q = queued("LM", via);
    let facts = IndexFacts::of(&p.url, &q, &head, date, 0, j.previous.as_ref(), Some(&j));
    let e = facts.entry(
        "<urn:uuid:new>".to_owned(),
        "sha1:NEW".to_owned(),
        "c2.warc.gz".to_owned(),
        4242,
    );
    assert_eq!(
        (
            e.record_id.as_str(),
            e.fetched_at_us,
            e.payload_digest.as_str()
        ),
        (
            p.record_id.as_str(),
            p.fetched_at_us,
            p.payload_digest.as_str()
        )
    );
    assert_eq!((e.warc_file.as_str(), e.warc_offset), ("c2.warc.gz", 4242));
    assert_eq!(e.validators.etag.as_deref(), Some("\"e2\""));
    assert_eq!(e.hops.as_deref(), Some("LM"));
    assert_eq!(e.via.as_deref(), via);
    assert_eq!(e.payload_bytes, p.payload_bytes);
    let head = ResponseHead::parse(b"HTTP/1.1 200 OK\r\n\r\n").unwrap();
    let j = judge(Some(p.clone()), 200, Some(b"changed"));
    let q = queued("L", None);
    let facts = IndexFacts::of(&p.url, &q, &head, date, 7, j.previous.as_ref(), Some(&j));
    let e = facts.entry(
        "<urn:uuid:new>".to_owned(),
        "sha1:NEW".to_owned(),
        "c2.warc.gz".to_owned(),
        9,
    );
    assert_eq!(
        (
            e.record_id.as_str(),
            e.fetched_at_us,
            e.payload_bytes,
            e.hops.as_deref()
        ),
        ("<urn:uuid:new>", date.unix_micros(), 7, Some("L"))
    );
    // A seed (no referrer): none kept, not the previous one; an empty one is none.
    assert_eq!(e.via, None);
    let facts = IndexFacts::of(&p.url, &queued("", Some("")), &head, date, 7, None, None);
    assert_eq!(
        facts
            .entry(String::new(), String::new(), String::new(), 0)
            .via,
        None
    );
    let e = IndexFacts::unfetched(p.clone(), &queued("SS", Some("http://b.test/robots.txt")))
        .without_capture()
        .expect("an unfetched entry");
    assert_eq!(
        IndexEntry {
            hops: Some("SS".to_owned()),
            via: Some("http://b.test/robots.txt".to_owned()),
            ..p
        },
        e
    );
}

#[test]
fn counters_add_snapshot_and_restore() {
    let c = RecrawlCounters::default();
    let p = prev(200, b"hello");
    c.record(Some(&p), Verdict::NotModified);
    c.record(Some(&p), Verdict::NotModified);
    c.record(Some(&p), Verdict::Gone);
    c.record(None, Verdict::New);
    let s = c.snapshot();
    assert_eq!(
        (s.not_modified, s.gone, s.new, s.bytes_saved),
        (2, 1, 1, 10)
    );
    let d = RecrawlCounters::default();
    d.restore(&s);
    assert_eq!(d.snapshot(), s);
}

#[test]
fn previous_entries_are_looked_up_and_the_latest_wins() {
    let mut b = prev(200, b"a");
    b.url = "http://b.test/".to_owned();
    let mut again = prev(304, b"b");
    again.warc_offset = 99;
    let previous = Previous::from_entries([b.clone(), prev(200, b"b"), again.clone()]).unwrap();
    assert_eq!(previous.len(), 2);
    assert_eq!(previous.get("http://b.test/"), Some(b.clone()));
    assert_eq!(previous.get("http://a.test/p/1"), Some(again.clone()));
    assert!(previous.get("http://c.test/").is_none());
    let urls: Vec<String> = previous
        .entries()
        .unwrap()
        .map(|e| e.unwrap().url)
        .collect();
    assert_eq!(
        urls,
        ["http://b.test/", "http://a.test/p/1", "http://a.test/p/1"]
    );
    // What a re-crawl queues: each URL once, at its latest record, with its fields.
    let latest: Vec<IndexEntry> = previous
        .latest_entries()
        .unwrap()
        .map(|e| e.unwrap())
        .collect();
    assert_eq!(latest, [b.clone(), again.clone()]);
    // Collisions: every URL on one hash, some written twice.
    let mut twice: Vec<IndexEntry> = (0..10).map(synth).collect();
    twice.extend((0..10).filter(|i| i % 2 == 0).map(|i| IndexEntry {
        status: 304,
        ..synth(i)
    }));
    let colliding = Previous::from_entries_with(twice, |_| 7).unwrap();
    let latest: Vec<(String, u16)> = colliding
        .latest_entries()
        .unwrap()
        .map(|e| e.map(|e| (e.url, e.status)).unwrap())
        .collect();
    assert_eq!(latest.len(), 10);
    assert!(latest.iter().all(|(u, status)| *status
        == if u.ends_with(|c: char| c.to_digit(10).is_some_and(|d| d % 2 == 0)) {
            304
        } else {
            200
        }));
    let mut previous = previous;
    let hosts: Vec<String> = previous
        .take_host_urls()
        .iter()
        .map(|u| u.host_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(hosts, ["a.test", "b.test"]);
}

/// Every URL hashing to the same value: lookups read the records back and compare
/// URLs, and the latest record of each URL wins.
#[test]
fn hash_collisions_are_told_apart_by_the_url() {
    let mut entries: Vec<IndexEntry> = (0..40).map(synth).collect();
    let later: Vec<IndexEntry> = (0..40)
        .filter(|i| i % 3 == 0)
        .map(|i| IndexEntry {
            status: 304,
            ..synth(i)
        })
        .collect();
    entries.extend(later);
    let previous = Previous::from_entries_with(entries, |_| 7).unwrap();
    assert_eq!(previous.len(), 40);
    for i in 0..40 {
        let e = previous.get(&synth(i).url).expect("found");
        assert_eq!(e.url, synth(i).url);
        assert_eq!(e.status, if i % 3 == 0 { 304 } else { 200 }, "{i}");
    }
    assert!(previous
        .get("http://h000001.synth.test:40123/p/41")
        .is_none());
    // Two hashes, half the URLs each.
    let previous = Previous::from_entries_with((0..40).map(synth), |u| u.len() as u64 % 2).unwrap();
    assert!((0..40).all(|i| previous.get(&synth(i).url) == Some(synth(i))));
}

/// A version-1 index (the build before) loads: lookups work, entries have no hop
/// path; a version-2 file on disk is read back with `pread`.
#[test]
fn previous_loads_both_versions_from_disk() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = super::super::index::legacy::header().to_vec();
    for i in 0..5 {
        bytes.extend_from_slice(&super::super::index::legacy::encode(&synth(i)).unwrap());
    }
    std::fs::write(dir.path().join(INDEX_FILE), &bytes).unwrap();
    let previous = Previous::load(dir.path()).unwrap();
    assert_eq!(previous.version(), IndexVersion::V1);
    assert_eq!(
        previous.get(&synth(3).url),
        Some(IndexEntry {
            hops: None,
            via: None,
            ..synth(3)
        })
    );
    std::fs::remove_file(dir.path().join(INDEX_FILE)).unwrap();
    let mut w = IndexWriter::create(&dir.path().join(INDEX_FILE)).unwrap();
    for i in 0..5 {
        w.append(&synth(i)).unwrap();
    }
    w.sync().unwrap();
    let previous = Previous::load(dir.path()).unwrap();
    assert_eq!(previous.version(), IndexVersion::V2);
    assert_eq!(previous.len(), 5);
    assert_eq!(previous.get(&synth(4).url), Some(synth(4)));
    assert_eq!(previous.warc_dir(), dir.path().join("warc"));
}

/// The table holds 16 bytes per URL, whatever the URL (the entries stay on disk).
#[test]
fn previous_table_takes_16_bytes_per_url() {
    const N: usize = 100_000;
    let previous = Previous::from_entries((0..N).map(synth)).unwrap();
    assert_eq!(previous.len(), N);
    let per_url = previous.table_bytes() as f64 / N as f64;
    assert!(per_url <= 16.0, "{per_url} bytes per URL");
    assert_eq!(previous.get(&synth(12_345).url), Some(synth(12_345)));
}

/// A resume cuts the index back to the length its checkpoint recorded: entries
/// appended after the cut (and flushed before a kill -9) describe WARC records the
/// resume cut off, so they go; the writer then appends after the cut.
#[test]
fn a_resume_cuts_the_index_back_to_the_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = open_index(dir.path(), false, None).unwrap();
    for i in 0..3 {
        w.append(&synth(i)).unwrap();
    }
    let checkpointed = w.sync().unwrap();
    for i in 3..6 {
        w.append(&synth(i)).unwrap();
    }
    let later = w.sync().unwrap();
    assert!(later > checkpointed);
    drop(w);
    let mut w = open_index(dir.path(), true, Some(checkpointed)).unwrap();
    assert_eq!(w.entries(), 3);
    w.append(&synth(9)).unwrap();
    w.sync().unwrap();
    let previous = Previous::load(dir.path()).unwrap();
    let urls: Vec<String> = previous
        .latest_entries()
        .unwrap()
        .map(|e| e.unwrap().url)
        .collect();
    let want: Vec<String> = [0, 1, 2, 9].iter().map(|&i| synth(i).url).collect();
    assert_eq!(urls, want);
    // A checkpoint of an older build recorded no length: nothing is cut.
    drop(w);
    let w = open_index(dir.path(), true, None).unwrap();
    assert_eq!(w.entries(), 4);
}
