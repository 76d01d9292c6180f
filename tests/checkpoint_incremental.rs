//! Incremental checkpoints of the presence bits (`docs/seen.md`, "Incremental
//! checkpoints"): the presence log round-trips bit for bit, a torn tail past the
//! committed length is ignored and cut, damage inside it is refused with a clear
//! error, compaction starts a new file, an abandoned write is redone; and a real
//! crawler killed with SIGKILL *inside* a checkpoint's log write resumes to full
//! coverage (`TRAWL_TEST_CHECKPOINT_PAUSE_MS` holds the write open halfway).
#![allow(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] fns; a failure is a test failure"
)]

mod crawl_support;

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crawl_support::{
    assert_covers_manifest, crawl_args, crawl_log, fetched_urls, stats_json, trawl_bin,
    warcio_check_dir, World,
};
use trawl::seen::{Backing, ErrorKind, LogRef, SeenConfig, SeenSet, PAUSE_ENV};

fn key(i: u64) -> [u8; 8] {
    i.to_le_bytes()
}

/// A fresh set of `capacity` keys at 1e-4 with the given backing.
fn set_in(dir: &Path, name: &str, capacity: u64, backing: Backing) -> SeenSet {
    let config = SeenConfig {
        backing,
        ..SeenConfig::new(capacity, 1e-4)
    };
    SeenSet::create_with(dir.join(name), &config).unwrap()
}

/// One simulated checkpoint: a fresh directory `cp-EPOCH`, the log written into it,
/// confirmed. Returns the log's reference and what was written.
fn checkpoint(
    set: &SeenSet,
    root: &Path,
    epoch: u64,
    prev: Option<&LogRef>,
) -> (LogRef, trawl::seen::LogWrite) {
    let dir = root.join(format!("cp-{epoch:06}"));
    fs::create_dir_all(&dir).unwrap();
    let pending = set.checkpoint_log(&dir, "seen.plog", prev, epoch).unwrap();
    let write = pending.write;
    pending.confirm();
    (
        LogRef {
            path: dir.join("seen.plog"),
            committed_bytes: write.committed_bytes,
        },
        write,
    )
}

/// Every key in `0..n` answers present in `b`, and `b` answers like `a` on keys never
/// inserted (the same false positives: the same bits).
fn same_answers(a: &SeenSet, b: &SeenSet, n: u64) {
    for i in 0..n {
        assert!(b.contains(&key(i)), "key {i} lost");
    }
    for i in (1u64 << 40)..(1u64 << 40) + 200_000 {
        assert_eq!(
            a.contains(&key(i)),
            b.contains(&key(i)),
            "bits differ at probe {i}"
        );
    }
}

#[test]
fn round_trip_over_epochs_for_both_backings() {
    for backing in [Backing::Memory, Backing::Mapped] {
        let tmp = tempfile::tempdir().unwrap();
        let set = set_in(tmp.path(), "live", 1_000_000, backing);
        let mut prev: Option<LogRef> = None;
        let mut n = 0;
        let mut writes = Vec::new();
        for epoch in 1..=5u64 {
            for _ in 0..3_000 {
                set.test_and_set(&key(n));
                n += 1;
            }
            let (r, w) = checkpoint(&set, tmp.path(), epoch, prev.as_ref());
            writes.push(w);
            prev = Some(r);
        }
        // Epoch 1 is a full record; the later ones append deltas to the same inode.
        assert!(writes[0].compacted);
        assert!(writes[1..].iter().all(|w| !w.compacted), "{writes:?}");
        let a = fs::metadata(tmp.path().join("cp-000001/seen.plog"))
            .unwrap()
            .ino();
        let b = fs::metadata(tmp.path().join("cp-000005/seen.plog"))
            .unwrap()
            .ino();
        assert_eq!(a, b, "deltas must append to the hard-linked log");
        // A delta holds the changed blocks only: far less than the 1.9 MB bit region.
        let bits = set.stats().bits / 8;
        for w in &writes[1..] {
            assert!(w.written_bytes < bits / 4, "{w:?} vs {bits}");
            // 72 bytes of record head and checksum, 64 per block, 16 per run of blocks.
            assert!(w.written_bytes >= 72 + 16 + w.blocks * 64, "{w:?}");
            assert!(w.written_bytes <= 72 + w.blocks * 80, "{w:?}");
        }
        let r = prev.unwrap();
        let (stats, summary) = SeenSet::verify_log(&r).unwrap();
        assert_eq!(summary.records, 5);
        assert_eq!(stats.inserted, set.stats().inserted);
        let restored =
            SeenSet::restore_log(&r, tmp.path().join("restored"), backing, None).unwrap();
        assert_eq!(restored.stats().inserted, set.stats().inserted);
        assert_eq!(restored.stats().set_bits, set.stats().set_bits);
        same_answers(&set, &restored, n);
        // The restored set checkpoints on from the same log.
        restored.test_and_set(&key(n));
        let (r2, w2) = checkpoint(&restored, tmp.path(), 6, Some(&r));
        assert!(!w2.compacted);
        assert_eq!(SeenSet::verify_log(&r2).unwrap().1.records, 6);
    }
}

#[test]
fn torn_tail_past_the_committed_length_is_ignored_then_cut() {
    let tmp = tempfile::tempdir().unwrap();
    let set = set_in(tmp.path(), "live", 100_000, Backing::Memory);
    for i in 0..1000 {
        set.test_and_set(&key(i));
    }
    let (r1, _) = checkpoint(&set, tmp.path(), 1, None);
    for i in 1000..2000 {
        set.test_and_set(&key(i));
    }
    let (r2, _) = checkpoint(&set, tmp.path(), 2, Some(&r1));
    // A crash in the middle of epoch 3's append: half a record past the committed
    // length of epoch 2.
    let full = fs::read(&r2.path).unwrap();
    let torn: Vec<u8> = full[r1.committed_bytes as usize..r2.committed_bytes as usize]
        .iter()
        .take(300)
        .copied()
        .collect();
    let f = fs::OpenOptions::new().append(true).open(&r2.path).unwrap();
    std::io::Write::write_all(&mut &f, &torn).unwrap();
    drop(f);
    assert!(fs::metadata(&r2.path).unwrap().len() > r2.committed_bytes);
    let restored =
        SeenSet::restore_log(&r2, tmp.path().join("restored"), Backing::Memory, None).unwrap();
    same_answers(&set, &restored, 2000);
    // The next append cuts the torn bytes first and stays readable.
    for i in 2000..2500 {
        restored.test_and_set(&key(i));
    }
    let (r3, w3) = checkpoint(&restored, tmp.path(), 3, Some(&r2));
    assert_eq!(r3.committed_bytes, r2.committed_bytes + w3.written_bytes);
    assert_eq!(fs::metadata(&r3.path).unwrap().len(), r3.committed_bytes);
    let again = SeenSet::restore_log(&r3, tmp.path().join("again"), Backing::Memory, None).unwrap();
    same_answers(&restored, &again, 2500);
    // And the older checkpoint still reads up to its own committed length.
    assert_eq!(SeenSet::verify_log(&r1).unwrap().1.records, 1);
}

#[test]
fn damage_inside_the_committed_length_is_refused_clearly() {
    let tmp = tempfile::tempdir().unwrap();
    let set = set_in(tmp.path(), "live", 100_000, Backing::Memory);
    for i in 0..1000 {
        set.test_and_set(&key(i));
    }
    let (r1, _) = checkpoint(&set, tmp.path(), 1, None);
    for i in 1000..1100 {
        set.test_and_set(&key(i));
    }
    let (r2, _) = checkpoint(&set, tmp.path(), 2, Some(&r1));
    let good = fs::read(&r2.path).unwrap();
    // Every byte of the delta record, flipped in turn, is detected and named.
    let delta = r1.committed_bytes as usize..r2.committed_bytes as usize;
    for at in delta.clone().step_by(7).chain([delta.end - 1]) {
        let mut bad = good.clone();
        bad[at] ^= 0x20;
        fs::write(&r2.path, &bad).unwrap();
        let e = SeenSet::verify_log(&r2).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::LogDamaged, "byte {at}: {e}");
        let msg = e.to_string();
        assert!(
            msg.contains("presence log is damaged") && msg.contains("seen.plog"),
            "{msg}"
        );
        assert!(msg.contains(&format!("at byte {}", delta.start)), "{msg}");
        let e = SeenSet::restore_log(&r2, tmp.path().join("x"), Backing::Memory, None).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::LogDamaged);
    }
    // A damaged header, a file shorter than its committed length, a committed length
    // inside a record.
    let mut bad = good.clone();
    bad[100] ^= 1;
    fs::write(&r2.path, &bad).unwrap();
    assert_eq!(
        SeenSet::verify_log(&r2).unwrap_err().kind(),
        ErrorKind::HeaderChecksum
    );
    fs::write(&r2.path, &good[..good.len() - 10]).unwrap();
    let e = SeenSet::verify_log(&r2).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Truncated, "{e}");
    fs::write(&r2.path, &good).unwrap();
    let inside = LogRef {
        committed_bytes: r2.committed_bytes - 5,
        ..r2.clone()
    };
    let e = SeenSet::verify_log(&inside).unwrap_err();
    assert!(e.to_string().contains("ends inside a record"), "{e}");
    // A URL log is not a fingerprint log.
    let e = trawl::seen::ContentSeen::restore_log(&r2, tmp.path().join("fp"), Backing::Memory)
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::WrongPurpose);
    SeenSet::verify_log(&r2).unwrap();
}

#[test]
fn compaction_starts_a_new_log_with_one_full_record() {
    let tmp = tempfile::tempdir().unwrap();
    // Small set, many keys per epoch: the deltas (each block rewritten whole) soon
    // outgrow the full record plus the 4 MiB floor.
    let set = set_in(tmp.path(), "live", 400_000, Backing::Memory);
    let mut prev: Option<LogRef> = None;
    let mut n = 0;
    let mut compactions = Vec::new();
    for epoch in 1..=40u64 {
        for _ in 0..10_000 {
            set.test_and_set(&key(n));
            n += 1;
        }
        let (r, w) = checkpoint(&set, tmp.path(), epoch, prev.as_ref());
        if w.compacted {
            compactions.push(epoch);
            assert_eq!(SeenSet::verify_log(&r).unwrap().1.records, 1);
            if let Some(p) = &prev {
                assert_ne!(
                    fs::metadata(&p.path).unwrap().ino(),
                    fs::metadata(&r.path).unwrap().ino(),
                    "a compaction writes a new file, never the old checkpoint's"
                );
            }
        }
        prev = Some(r);
    }
    assert!(
        compactions.len() >= 2 && compactions[0] == 1,
        "{compactions:?}"
    );
    let r = prev.unwrap();
    let (_, summary) = SeenSet::verify_log(&r).unwrap();
    // Log size stays within about twice the full record.
    assert!(
        r.committed_bytes <= 2 * summary.base_bytes + (5 << 20),
        "{} vs base {}",
        r.committed_bytes,
        summary.base_bytes
    );
    let restored =
        SeenSet::restore_log(&r, tmp.path().join("restored"), Backing::Mapped, None).unwrap();
    same_answers(&set, &restored, n);
}

#[test]
fn an_unconfirmed_write_is_redone_by_the_next_checkpoint() {
    let tmp = tempfile::tempdir().unwrap();
    let set = set_in(tmp.path(), "live", 100_000, Backing::Memory);
    set.test_and_set(&key(0));
    let (r1, _) = checkpoint(&set, tmp.path(), 1, None);
    for i in 1..500 {
        set.test_and_set(&key(i));
    }
    // Epoch 2 is written but never committed (a shard failed): dropped.
    let dir = tmp.path().join("tmp-000002");
    fs::create_dir_all(&dir).unwrap();
    drop(set.checkpoint_log(&dir, "seen.plog", Some(&r1), 2).unwrap());
    // Epoch 2 again, from the committed epoch 1: must carry keys 1..500.
    let (r2, _) = checkpoint(&set, tmp.path(), 2, Some(&r1));
    let restored =
        SeenSet::restore_log(&r2, tmp.path().join("restored"), Backing::Memory, None).unwrap();
    same_answers(&set, &restored, 500);
}

#[test]
fn cost_follows_the_keys_not_the_capacity() {
    // A 1e8-URL set (hundreds of MB of bits) with a thousand keys: checkpoints write
    // kilobytes and the restored set's resident bits are a few pages per key.
    let tmp = tempfile::tempdir().unwrap();
    let set = set_in(tmp.path(), "live", 100_000_000, Backing::Mapped);
    for i in 0..1000 {
        set.test_and_set(&key(i));
    }
    let (r1, w1) = checkpoint(&set, tmp.path(), 1, None);
    assert!(w1.written_bytes < 200_000, "{w1:?}");
    for i in 1000..1100 {
        set.test_and_set(&key(i));
    }
    let (r2, w2) = checkpoint(&set, tmp.path(), 2, Some(&r1));
    assert!(w2.written_bytes < 10_000, "{w2:?}");
    let restored =
        SeenSet::restore_log(&r2, tmp.path().join("restored"), Backing::Mapped, None).unwrap();
    let resident = restored.resident_bytes().unwrap();
    assert!(
        resident <= 1100 * 8192,
        "{resident} bytes resident for 1100 keys"
    );
    assert!(set.resident_bytes().unwrap() < set.stats().bits / 8 / 4);
    same_answers(&set, &restored, 1100);
}

// ---- a real crawler, killed inside a checkpoint write ----

/// The `tmp-*` checkpoint directory being written, if its log write has started.
fn checkpoint_in_progress(out: &Path) -> Option<PathBuf> {
    let cp = out.join("checkpoint");
    fs::read_dir(cp)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("tmp-"))
                && p.join("seen.plog").exists()
        })
}

#[test]
fn kill_9_inside_a_checkpoint_write_resumes_to_full_coverage() {
    let tmp = tempfile::tempdir().unwrap();
    let budget = 200;
    let delay_ms = 150;
    let world = World {
        hosts: 12,
        profile: Some("default"),
        pages_per_host: "20-40",
        out_degree: Some("5-15"),
        budget: Some(budget),
    };
    let mut sw = world.start(&tmp.path().join("web"), &[]);
    let out = tmp.path().join("crawl");
    let mut args = crawl_args(&out, budget, delay_ms);
    args.extend(["--checkpoint-secs".to_owned(), "1".to_owned()]);
    let mut kills_inside = 0;
    for run in 0..4 {
        let mut cmd = Command::new(trawl_bin());
        cmd.current_dir(&sw.dir)
            .args(&args)
            .env(PAUSE_ENV, "800")
            .stderr(Stdio::null());
        if run > 0 {
            cmd.arg("--resume");
        }
        let mut child = cmd.spawn().unwrap();
        // Wait for a checkpoint past the first to be mid-write (the pause holds it
        // open for 0.8 s halfway through a record), then kill.
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut killed = false;
        while Instant::now() < deadline {
            if child.try_wait().unwrap().is_some() {
                break;
            }
            if out.join("checkpoint/CURRENT").exists() {
                if let Some(dir) = checkpoint_in_progress(&out) {
                    std::thread::sleep(Duration::from_millis(300));
                    if dir.exists() {
                        child.kill().unwrap(); // SIGKILL
                        killed = true;
                        break;
                    }
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        child.wait().unwrap();
        if !killed {
            break;
        }
        kills_inside += 1;
        // The committed checkpoint verifies whole although its log has a torn tail.
        let inspect = Command::new(trawl_bin())
            .args(["inspect", "--no-log"])
            .arg(&out)
            .output()
            .unwrap();
        assert!(
            inspect.status.success(),
            "inspect after kill {run}: {}{}",
            String::from_utf8_lossy(&inspect.stdout),
            String::from_utf8_lossy(&inspect.stderr)
        );
    }
    eprintln!("checkpoint_incremental: {kills_inside} kills landed inside a checkpoint write");
    assert!(
        kills_inside >= 2,
        "only {kills_inside} kills landed inside a checkpoint write"
    );

    let status = Command::new(trawl_bin())
        .current_dir(&sw.dir)
        .args(&args)
        .arg("--resume")
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "final run failed: {status}");
    sw.stop();
    let fetched = fetched_urls(&crawl_log(&out));
    assert_covers_manifest(&sw, &fetched, &format!("after {kills_inside} kills"));
    let stats = stats_json(&out);
    assert_eq!(stats["finish"], "exhausted", "{stats}");
    assert!(
        stats["checkpoint_total_bytes"].as_u64().unwrap() > 0,
        "{stats}"
    );
    assert!(
        stats["presence_bits_resident_bytes"].as_u64().unwrap() > 0,
        "{stats}"
    );
    assert!(
        stats["rss_less_presence_bits_bytes"].as_u64().unwrap() > 0,
        "{stats}"
    );
    warcio_check_dir(&out.join("warc"));
}
