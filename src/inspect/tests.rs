use super::*;
use crate::checkpoint::tallies::{self, TallyRow};
use crate::checkpoint::Positions;
use crate::checkpoint::{commit, prepare, Counters, MANIFEST_VERSION};
use crate::frontier::{QueuedUrl, SegmentWriter};

/// A checkpoint of `shards` shards with `urls[i]` URLs on shard i, written the way
/// the engine writes one.
/// A robots file with two hosts: one with parsed rules, one unreachable, one of them
/// in the disk tier.
fn write_robots(path: &Path, shard: usize) {
    use crate::robots::dump::write_file;
    use crate::robots::persist::Clock;
    use crate::robots::{PolicyConfig, RobotsCache, RobotsResponse};
    use crate::routing::HostKey;
    let now = std::time::Instant::now();
    // A budget for one host or so: the other goes to the disk tier, whose log the
    // checkpoint keeps beside the file.
    let mut cache = RobotsCache::new(PolicyConfig::new("trawl"), 600);
    for (host, status, body) in [
        (
            format!("r{shard}.test"),
            200,
            &b"user-agent: *\ndisallow: /x\nallow: /x/y$\n"[..],
        ),
        (format!("down{shard}.test"), 503, &b""[..]),
    ] {
        let url = url::Url::parse(&format!("http://{host}/")).unwrap();
        cache.poll_fetch(&url, now).unwrap();
        let r = RobotsResponse {
            status,
            headers: &[],
            body,
        };
        cache
            .on_response(&HostKey::of(&url).unwrap(), now, &r)
            .unwrap();
    }
    write_file(path, &mut cache, Clock::now()).unwrap();
}

fn write_checkpoint(root: &Path, epoch: u64, urls: &[u64]) -> PathBuf {
    let tmp = prepare(root, epoch).unwrap();
    let mut total = 0;
    for (i, n) in urls.iter().enumerate() {
        let mut w = SegmentWriter::create(&tmp.join(format!("frontier-{i:04}.seg"))).unwrap();
        for j in 0..*n {
            let host = format!("h{}.test", j % 3);
            let item = QueuedUrl {
                url: format!("http://{host}/{i}/{j}"),
                via: Some(format!("http://{host}/")),
                hops: "L".repeat((j % 4) as usize),
                attempts: u8::from(j == 1),
            };
            w.append(&host, &item).unwrap();
        }
        w.sync().unwrap();
        total += n;
        let row = |host: String, pages, consecutive_failures, parked| TallyRow {
            host,
            pages,
            consecutive_failures,
            parked,
        };
        tallies::write_file(
            &tmp.join(tallies::file_name(i)),
            [
                row(format!("h{i}.test"), 5, 0, false),
                row(format!("bad{i}.test"), 1, 9, true),
            ],
        )
        .unwrap();
        write_robots(&tmp.join(format!("robots-{i:04}.bin")), i);
    }
    let seen = SeenSet::create(root.join("live-seen"), 10_000, 1e-3).unwrap();
    for j in 0..100u32 {
        seen.test_and_set(&j.to_le_bytes());
    }
    seen.snapshot_to(tmp.join(SEEN_BITS)).unwrap();
    let fps = SeenSet::create(root.join("live-fp"), 1_000, 1e-3).unwrap();
    fps.snapshot_to(tmp.join(FINGERPRINT_BITS)).unwrap();
    drop((seen, fps));
    let _ = fs::remove_file(root.join("live-seen"));
    let _ = fs::remove_file(root.join("live-fp"));
    let manifest = Manifest {
        version: MANIFEST_VERSION,
        epoch,
        unix_time: 1_763_820_000,
        shards: urls.len(),
        seeds: vec!["http://h0.test/".into()],
        counters: Counters {
            pages: 7,
            ..Counters::default()
        },
        positions: Positions::default(),
        queued_urls: total,
        config: None,
        presence: None,
        files: Some(list_files(&tmp, urls.len(), &OTHER_FILES).unwrap()),
    };
    commit(root, &tmp, &manifest).unwrap()
}

/// Rewrites the manifest of `dir` as a build before the file list wrote it.
fn forget_file_list(dir: &Path) {
    let mut manifest = read_manifest(dir).unwrap();
    manifest.files = None;
    fs::write(
        dir.join(MANIFEST),
        serde_json::to_vec_pretty(&manifest).unwrap(),
    )
    .unwrap();
}

#[test]
fn a_sound_checkpoint_is_described_and_verified() {
    let out = tempfile::tempdir().unwrap();
    let root = out.path().join("checkpoint");
    write_checkpoint(&root, 3, &[10, 4]);
    fs::write(out.path().join("crawl.log.jsonl"), b"").unwrap();
    let cp = Checkpoint::open(out.path()).unwrap();
    assert!(cp.is_current());
    assert_eq!(cp.out_dir(), Some(out.path()));
    let d = cp.describe(&DescribeOptions::default());
    assert!(d.verification.ok, "{:?}", d.verification);
    assert_eq!(d.name, "cp-000003");
    assert_eq!(d.taken_at, "2025-11-22T14:00:00Z");
    assert_eq!(d.frontier.urls, 14);
    assert_eq!(d.frontier.shards[0].urls, 10);
    assert_eq!(d.frontier.shards[1].urls, 4);
    assert_eq!(d.frontier.hosts, 3);
    assert_eq!(
        d.frontier.top_hosts[0],
        HostCount {
            host: "h0.test".into(),
            urls: 4 + 2
        }
    );
    assert_eq!(d.frontier.seeds_queued, 3 + 1);
    assert_eq!(d.frontier.retrying, 2);
    assert_eq!(d.frontier.max_hops, 3);
    assert_eq!(d.tallies.hosts, 4);
    assert_eq!(d.tallies.pages, 12);
    assert_eq!(d.tallies.parked, 2);
    assert_eq!(d.robots.files, 2);
    assert_eq!(d.robots.hosts, 4);
    assert!(d.robots.tier_files >= 1, "{:?}", d.robots);
    assert!(d.robots.tier_records >= 1 && d.robots.tier_bytes > 0);
    assert_eq!(d.robots.ready, 2);
    assert_eq!(d.robots.parsed, 2);
    assert_eq!(d.robots.rules, 4);
    assert_eq!(d.robots.unreachable, 2);
    assert_eq!(d.robots.expired, 0);
    assert_eq!(d.robots.damaged, 0);
    assert!(
        d.verification.warnings.is_empty(),
        "{:?}",
        d.verification.warnings
    );
    let seen = d.seen.unwrap();
    assert_eq!(seen.inserted, 100);
    assert!(seen.fill_ratio > 0.0 && seen.expected_fp > 0.0);
    // The same answer from the checkpoint/ and cp- directories.
    let via_root = Checkpoint::open(&root)
        .unwrap()
        .describe(&DescribeOptions::default());
    assert_eq!(via_root.frontier.urls, 14);
    let via_dir = Checkpoint::open(&root.join("cp-000003")).unwrap();
    assert!(via_dir.is_current());
}

#[test]
fn every_flipped_segment_byte_past_the_header_is_reported_with_its_file() {
    let out = tempfile::tempdir().unwrap();
    let root = out.path().join("checkpoint");
    let dir = write_checkpoint(&root, 1, &[3]);
    let seg = dir.join("frontier-0000.seg");
    let good = fs::read(&seg).unwrap();
    for i in 0..good.len() {
        let mut bad = good.clone();
        bad[i] ^= 0x40;
        fs::write(&seg, &bad).unwrap();
        let d = Checkpoint::open(&root)
            .unwrap()
            .describe(&DescribeOptions::default());
        assert!(!d.verification.ok, "flip at byte {i} not detected");
        assert!(
            d.verification.errors.iter().any(|p| p.file == seg),
            "flip at {i}: {:?}",
            d.verification.errors
        );
    }
    // A torn tail: truncated, with the offset of the torn record.
    fs::write(&seg, &good[..good.len() - 2]).unwrap();
    let d = Checkpoint::open(&root)
        .unwrap()
        .describe(&DescribeOptions::default());
    let p = d
        .verification
        .errors
        .iter()
        .find(|p| p.file == seg)
        .unwrap();
    assert!(p.message.contains("truncated"), "{p}");
    assert!(p.offset.is_some_and(|o| o >= 12), "{p}");
}

#[test]
fn damaged_robots_files_are_errors_and_missing_ones_warnings() {
    let out = tempfile::tempdir().unwrap();
    let root = out.path().join("checkpoint");
    let dir = write_checkpoint(&root, 1, &[3, 3]);
    let file = dir.join("robots-0001.bin");
    let mut bytes = fs::read(&file).unwrap();
    let at = bytes.len() - 20; // inside the last entry
    bytes[at] ^= 0x40;
    fs::write(&file, &bytes).unwrap();
    fs::remove_file(dir.join("robots-0000.bin")).unwrap();
    let d = Checkpoint::open(&dir)
        .unwrap()
        .describe(&DescribeOptions::default());
    assert!(!d.verification.ok);
    assert!(d
        .verification
        .errors
        .iter()
        .any(|e| e.file == file && e.offset.is_some() && e.message.contains("checksum")));
    assert!(d
        .verification
        .warnings
        .iter()
        .any(|w| w.file.ends_with("robots-0000.bin") && w.message.contains("missing")));
    assert_eq!(d.robots.files, 1);
    assert_eq!(d.robots.hosts, 1);
    assert_eq!(d.robots.damaged, 1);
    // Truncated: an error too.
    fs::write(&file, &bytes[..bytes.len() / 2]).unwrap();
    let d = Checkpoint::open(&dir)
        .unwrap()
        .describe(&DescribeOptions::default());
    assert!(d
        .verification
        .errors
        .iter()
        .any(|e| e.file == file && e.message.contains("truncated")));
}

#[test]
fn missing_files_and_count_mismatches_are_errors() {
    let out = tempfile::tempdir().unwrap();
    let root = out.path().join("checkpoint");
    let dir = write_checkpoint(&root, 1, &[2, 2]);
    fs::remove_file(dir.join("frontier-0001.seg")).unwrap();
    fs::remove_file(dir.join(FINGERPRINT_BITS)).unwrap();
    let mut bad_tallies = fs::read(dir.join("tallies-0000.bin")).unwrap();
    let last = bad_tallies.len() - 3;
    bad_tallies[last] ^= 1;
    fs::write(dir.join("tallies-0000.bin"), &bad_tallies).unwrap();
    fs::remove_file(dir.join("tallies-0001.bin")).unwrap();
    fs::write(dir.join("tallies-0001.tsv"), b"only-a-host\n").unwrap();
    fs::write(dir.join("frontier-0009.seg"), b"stray").unwrap();
    let d = Checkpoint::open(&root)
        .unwrap()
        .describe(&DescribeOptions::default());
    let errs: Vec<String> = d
        .verification
        .errors
        .iter()
        .map(|p| p.to_string())
        .collect();
    assert!(!d.verification.ok);
    assert!(
        errs.iter()
            .any(|e| e.contains("frontier-0001.seg") && e.contains("missing")),
        "{errs:?}"
    );
    assert!(
        errs.iter().any(|e| e.contains(FINGERPRINT_BITS)),
        "{errs:?}"
    );
    assert!(
        errs.iter()
            .any(|e| e.contains("tallies-0000.bin") && e.contains("checksum mismatch")),
        "{errs:?}"
    );
    assert!(
        errs.iter()
            .any(|e| e.contains("tallies-0001.tsv") && e.contains("line 1")),
        "{errs:?}"
    );
    assert!(
        errs.iter()
            .any(|e| e.contains("records 4 queued URLs") && e.contains("hold 2")),
        "{errs:?}"
    );
    assert!(d
        .verification
        .warnings
        .iter()
        .any(|p| p.file.ends_with("frontier-0009.seg")));
}

#[test]
fn an_implausible_shard_count_is_an_error_not_a_long_loop() {
    let out = tempfile::tempdir().unwrap();
    let root = out.path().join("checkpoint");
    let dir = write_checkpoint(&root, 1, &[1]);
    let path = dir.join(MANIFEST);
    let mut m: serde_json::Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
    m["shards"] = serde_json::json!(u64::MAX);
    fs::write(&path, serde_json::to_vec(&m).unwrap()).unwrap();
    let d = Checkpoint::open(&root)
        .unwrap()
        .describe(&DescribeOptions::default());
    assert!(!d.verification.ok);
    assert!(d
        .verification
        .errors
        .iter()
        .any(|p| p.message.contains("plausible")));
    assert_eq!(d.frontier.shards.len(), MAX_SHARDS);
}

#[test]
fn flipped_presence_bits_are_errors() {
    let out = tempfile::tempdir().unwrap();
    let root = out.path().join("checkpoint");
    let dir = write_checkpoint(&root, 1, &[1]);
    let path = dir.join(SEEN_BITS);
    let mut bytes = fs::read(&path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    fs::write(&path, &bytes).unwrap();
    let d = Checkpoint::open(&root)
        .unwrap()
        .describe(&DescribeOptions::default());
    assert!(d.seen.is_none());
    assert!(d.verification.errors.iter().any(|p| p.file == path));
}

#[test]
fn not_a_checkpoint_and_garbled_manifests_are_typed_errors() {
    let dir = tempfile::tempdir().unwrap();
    assert!(matches!(
        Checkpoint::open(dir.path()),
        Err(CheckpointError::NotACheckpoint(_))
    ));
    assert!(matches!(
        Checkpoint::open(&dir.path().join("absent")),
        Err(CheckpointError::NotACheckpoint(_))
    ));
    let root = dir.path().join("checkpoint");
    fs::create_dir(&root).unwrap();
    assert!(matches!(
        Checkpoint::open(dir.path()),
        Err(CheckpointError::NoCheckpoint(_))
    ));
    let cp = write_checkpoint(&root, 2, &[1]);
    fs::write(cp.join(MANIFEST), b"{\"version\": 1, \"epoch\": ").unwrap();
    assert!(matches!(
        Checkpoint::open(dir.path()),
        Err(CheckpointError::BadManifest { .. })
    ));
    fs::write(cp.join(MANIFEST), [0xff, 0xfe, 0x00]).unwrap();
    assert!(matches!(
        Checkpoint::open(&cp),
        Err(CheckpointError::BadManifest { .. })
    ));
}

#[test]
fn stray_directories_are_listed_by_kind() {
    let out = tempfile::tempdir().unwrap();
    let root = out.path().join("checkpoint");
    write_checkpoint(&root, 4, &[1]);
    fs::create_dir(root.join("tmp-000005")).unwrap();
    let d = Checkpoint::open(&root)
        .unwrap()
        .describe(&DescribeOptions::default());
    let kinds: Vec<_> = d
        .entries
        .iter()
        .map(|e| (e.name.as_str(), e.kind))
        .collect();
    assert_eq!(
        kinds,
        [
            ("cp-000004", CheckpointEntryKind::Current),
            ("tmp-000005", CheckpointEntryKind::Unfinished)
        ]
    );
}

/// Checkpoints of builds before the binary tallies hold `tallies-NNNN.tsv`: they
/// still verify, with the same figures.
#[test]
fn tallies_of_older_builds_still_verify() {
    let out = tempfile::tempdir().unwrap();
    let root = out.path().join("checkpoint");
    let dir = write_checkpoint(&root, 1, &[2, 2]);
    forget_file_list(&dir);
    for i in 0..2 {
        fs::remove_file(dir.join(tallies::file_name(i))).unwrap();
        fs::write(
            dir.join(tallies::legacy_file_name(i)),
            format!("h{i}.test\t5\t0\t0\nbad{i}.test\t1\t9\t1\n"),
        )
        .unwrap();
    }
    let d = Checkpoint::open(&root)
        .unwrap()
        .describe(&DescribeOptions::default());
    assert!(d.verification.ok, "{:?}", d.verification.errors);
    assert!(
        d.verification.warnings.is_empty(),
        "{:?}",
        d.verification.warnings
    );
    assert_eq!(
        (
            d.tallies.hosts,
            d.tallies.pages,
            d.tallies.parked,
            d.tallies.failing
        ),
        (4, 12, 2, 2)
    );
}

/// The manifest lists every file with its kind: the describer learns a farm's and the
/// operator's files from it, verifies the outbox it lists, reports a listed file that
/// is gone, and warns of a file the list does not hold.
#[test]
fn the_manifest_lists_the_files_and_their_kinds() {
    let out = tempfile::tempdir().unwrap();
    let root = out.path().join("checkpoint");
    let tmp = prepare(&root, 1).unwrap();
    fs::write(tmp.join(crate::farm::SETTINGS_FILE), b"{}").unwrap();
    fs::write(tmp.join(crate::control::RULES_FILE), b"{}").unwrap();
    fs::write(tmp.join("stray.txt"), b"x").unwrap();
    let files = list_files(&tmp, 1, &OTHER_FILES).unwrap();
    let kinds: Vec<_> = files.iter().map(|f| (f.name.as_str(), f.kind)).collect();
    assert_eq!(
        kinds,
        [
            (crate::farm::SETTINGS_FILE, FileKind::FarmSettings),
            (crate::control::RULES_FILE, FileKind::OperatorRules),
        ]
    );
    fs::remove_dir_all(&tmp).unwrap();

    let dir = write_checkpoint(&root, 2, &[1]);
    let listed = read_manifest(&dir).unwrap().files.unwrap();
    let names: Vec<_> = listed.iter().map(|f| (f.name.as_str(), f.kind)).collect();
    assert_eq!(
        names,
        [
            (FINGERPRINT_BITS, FileKind::FingerprintBits),
            ("frontier-0000.seg", FileKind::Frontier),
            ("robots-0000-tier-000001.log", FileKind::RobotsTier),
            ("robots-0000.bin", FileKind::Robots),
            (SEEN_BITS, FileKind::SeenBits),
            ("tallies-0000.bin", FileKind::Tallies),
        ]
    );
    // A farm's files, as the crawl lists them: a damaged outbox is an error, a listed
    // settings file that is gone is one too, a file the list lacks is a warning.
    let mut manifest = read_manifest(&dir).unwrap();
    let mut files = listed;
    for (name, kind) in OTHER_FILES.iter().take(2) {
        files.push(CheckpointFile {
            name: (*name).to_owned(),
            kind: *kind,
        });
    }
    manifest.files = Some(files);
    fs::write(dir.join(MANIFEST), serde_json::to_vec(&manifest).unwrap()).unwrap();
    fs::write(dir.join(crate::farm::OUTBOX_FILE), b"not an outbox").unwrap();
    fs::write(dir.join("stray.txt"), b"x").unwrap();
    let d = Checkpoint::open(&root)
        .unwrap()
        .describe(&DescribeOptions::default());
    let errors: Vec<_> = d
        .verification
        .errors
        .iter()
        .map(|p| {
            (
                p.file.file_name().unwrap().to_string_lossy().into_owned(),
                p.message.as_str(),
            )
        })
        .collect();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(
        errors.iter().any(|(f, _)| f == crate::farm::OUTBOX_FILE),
        "{errors:?}"
    );
    assert!(
        errors.contains(&(
            crate::farm::SETTINGS_FILE.to_owned(),
            "missing: the manifest lists it"
        )),
        "{errors:?}"
    );
    let warnings: Vec<_> = d
        .verification
        .warnings
        .iter()
        .map(|p| p.to_string())
        .collect();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("stray.txt") && warnings[0].contains("not listed in the manifest")
    );
}

/// A manifest of a build before the file list: the known names stand in, so a farm's
/// and the operator's files are part of the checkpoint and anything else is foreign.
#[test]
fn a_manifest_without_a_file_list_falls_back_to_the_known_names() {
    let out = tempfile::tempdir().unwrap();
    let root = out.path().join("checkpoint");
    let dir = write_checkpoint(&root, 1, &[2]);
    forget_file_list(&dir);
    fs::write(dir.join(crate::farm::SETTINGS_FILE), b"{}").unwrap();
    fs::write(dir.join(crate::control::RULES_FILE), b"{}").unwrap();
    fs::write(dir.join("frontier-0001.seg"), b"x").unwrap();
    let d = Checkpoint::open(&root)
        .unwrap()
        .describe(&DescribeOptions::default());
    assert!(d.verification.ok, "{:?}", d.verification.errors);
    let warnings: Vec<_> = d
        .verification
        .warnings
        .iter()
        .map(|p| p.to_string())
        .collect();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("frontier-0001.seg")
            && warnings[0].contains("not part of a checkpoint of 1 shard(s)")
    );
    // A damaged outbox is still verified.
    fs::write(dir.join(crate::farm::OUTBOX_FILE), b"not an outbox").unwrap();
    let d = Checkpoint::open(&root)
        .unwrap()
        .describe(&DescribeOptions::default());
    assert_eq!(
        d.verification.errors.len(),
        1,
        "{:?}",
        d.verification.errors
    );
    assert!(d.verification.errors[0]
        .file
        .ends_with(crate::farm::OUTBOX_FILE));
}
