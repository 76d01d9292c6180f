//! WARC `revisit` records in a real crawl: trawl crawls synthweb's `traps` profile, whose
//! duplicates trap serves one body under many URLs (`/dup/...`) and whose session-id
//! trap serves the same content whatever the `?sid=`. The responses after the first
//! with a given payload must be `revisit` records (WARC 1.1, identical-payload-digest
//! profile) that refer to an earlier `response` record with the same payload digest;
//! the crawl log annotates them, `stats.json` counts them, and `warcio check` and
//! `warcio index` accept every file. Files are rotated small so that revisits also
//! refer across files. Takes a few seconds; needs synthweb built (`cargo test
//! --workspace`) and warcio.

#![allow(clippy::unwrap_used)]

mod crawl_support;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crawl_support::{
    crawl, crawl_log, read_warc_records, stats_json, warcio, warcio_check_dir, World,
};
use trawl::provenance::Digest;

use crawl_support::WarcRecord as Rec;

impl Rec {
    fn get(&self, name: &str) -> Option<&str> {
        self.field(name)
    }
}

fn warc_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = crawl_support::warc_files(dir);
    // Names are `trawl-{opened}-{serial}-{shard}`: sorting by the serial orders them
    // as written.
    files.sort_by_key(|p| {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        name.split('-').nth(2).unwrap().parse::<u32>().unwrap()
    });
    files
}

#[test]
fn duplicate_payloads_are_written_as_revisits_of_earlier_responses() {
    let tmp = tempfile::tempdir().unwrap();
    let budget = 40;
    let world = World {
        hosts: 8,
        profile: Some("traps"),
        pages_per_host: "5-10",
        out_degree: Some("3-6"),
        budget: Some(budget),
    };
    let sw = world.start(&tmp.path().join("web"), &[]);
    let out = tmp.path().join("crawl");
    crawl(&sw, &out, budget, 0, &["--warc-max-bytes", "100000"]);
    drop(sw);

    let files = warc_files(&out.join("warc"));
    assert!(files.len() > 1, "rotation expected, got {files:?}");
    let records = read_warc_records(&files);
    let by_id: HashMap<&str, usize> = records
        .iter()
        .enumerate()
        .map(|(i, r)| (r.get("WARC-Record-ID").unwrap(), i))
        .collect();

    let mut revisits = 0;
    let mut cross_file = 0;
    let mut dup_trap = 0;
    let mut robots = 0;
    let mut responses_by_digest: HashMap<&str, usize> = HashMap::new();
    for (i, r) in records.iter().enumerate() {
        assert_eq!(
            r.get("WARC-Block-Digest").unwrap(),
            Digest::of(&r.block).to_string()
        );
        match r.get("WARC-Type").unwrap() {
            "response" => {
                let status = &r.block[9..12];
                if status.starts_with(b"2") {
                    let digest = r.get("WARC-Payload-Digest").unwrap();
                    // Every 2xx payload after the first with its digest is a revisit:
                    // no two 2xx responses share one (the index holds them all here).
                    assert!(
                        responses_by_digest.insert(digest, i).is_none(),
                        "two full responses with payload {digest}: {}",
                        r.get("WARC-Target-URI").unwrap()
                    );
                }
            }
            "revisit" => {
                revisits += 1;
                let uri = r.get("WARC-Target-URI").unwrap();
                if uri.contains("/dup/") {
                    dup_trap += 1;
                }
                if uri.ends_with("/robots.txt") {
                    robots += 1;
                }
                assert_eq!(
                    r.get("WARC-Profile"),
                    Some("http://netpreserve.org/warc/1.1/revisit/identical-payload-digest")
                );
                assert_eq!(r.get("WARC-Truncated"), Some("length"));
                assert_eq!(
                    r.get("Content-Type"),
                    Some("application/http;msgtype=response")
                );
                assert!(r.get("WARC-IP-Address").is_some());
                assert!(r.get("WARC-Date").is_some());
                // The block is the HTTP response head only.
                assert!(r.block.starts_with(b"HTTP/1.1 2"), "{uri}");
                assert_eq!(
                    r.block.windows(4).position(|w| w == b"\r\n\r\n"),
                    Some(r.block.len() - 4),
                    "{uri}: block is not the head alone"
                );
                // It refers to an earlier response with the same payload digest.
                let refers = r.get("WARC-Refers-To").unwrap();
                let j = by_id[refers];
                assert!(j < i, "{uri} refers to a later record");
                let original = &records[j];
                assert_eq!(original.get("WARC-Type"), Some("response"));
                assert_eq!(
                    original.get("WARC-Payload-Digest"),
                    r.get("WARC-Payload-Digest")
                );
                assert_eq!(
                    original.get("WARC-Target-URI"),
                    r.get("WARC-Refers-To-Target-URI")
                );
                assert_eq!(original.get("WARC-Date"), r.get("WARC-Refers-To-Date"));
                if original.file != r.file {
                    cross_file += 1;
                }
                // Concurrent to its capture's request record.
                let request = &records[by_id[r.get("WARC-Concurrent-To").unwrap()]];
                assert_eq!(request.get("WARC-Type"), Some("request"));
                assert_eq!(request.get("WARC-Target-URI"), Some(uri));
                assert_eq!(request.get("WARC-Concurrent-To"), r.get("WARC-Record-ID"));
            }
            _ => {}
        }
    }
    eprintln!(
        "{} records in {} files, {revisits} revisits ({dup_trap} on the duplicates trap, \
         {robots} of robots.txt, {cross_file} referring to another file)",
        records.len(),
        files.len()
    );
    assert!(dup_trap >= 10, "{dup_trap} revisits on /dup/ URLs");
    assert!(cross_file > 0, "no revisit refers to another file");

    // The crawl log annotates exactly the revisits and points at them; stats count them.
    let log = crawl_log(&out);
    let annotated: Vec<_> = log
        .iter()
        .filter(|l| {
            l["annotations"]
                .as_array()
                .is_some_and(|a| a.iter().any(|t| t == "duplicate:digest"))
        })
        .collect();
    assert_eq!(annotated.len(), revisits);
    for line in &annotated {
        let file = line["warc"]["file"].as_str().unwrap();
        let f = files
            .iter()
            .position(|p| p.file_name().unwrap().to_string_lossy() == file)
            .unwrap();
        let offset = line["warc"]["offset"].as_u64().unwrap();
        // The log points at the revisit record itself.
        let at = records
            .iter()
            .find(|r| r.file == f && r.offset == offset)
            .unwrap();
        assert_eq!(at.get("WARC-Type"), Some("revisit"));
        assert_eq!(at.get("WARC-Target-URI"), line["url"].as_str());
        assert_eq!(
            at.get("WARC-Payload-Digest"),
            line["payload_digest"].as_str()
        );
    }
    let stats: serde_json::Value = stats_json(&out);
    assert_eq!(
        stats["warc_revisits"].as_u64(),
        Some(revisits as u64),
        "{stats}"
    );

    // warcio accepts every file and indexes the revisits.
    warcio_check_dir(&out.join("warc"));
    if let Some(warcio) = warcio() {
        let mut indexed = 0;
        for file in &files {
            let index = Command::new(&warcio)
                .args(["index", "-f", "warc-type,warc-refers-to,offset"])
                .arg(file)
                .output()
                .unwrap();
            assert!(
                index.status.success(),
                "warcio index {}: {}",
                file.display(),
                String::from_utf8_lossy(&index.stderr)
            );
            for line in String::from_utf8(index.stdout).unwrap().lines() {
                let entry: serde_json::Value = serde_json::from_str(line).unwrap();
                if entry["warc-type"] == "revisit" {
                    assert!(entry["warc-refers-to"].is_string());
                    indexed += 1;
                }
            }
        }
        assert_eq!(indexed, revisits);
    }
}
