//! A torn last record cut at random offsets, a file cut back to a checkpoint, and files
//! left by a writer killed with SIGKILL, which `recover` makes valid.

use std::fs;
use std::path::Path;
use std::process::Command;

use trawl::warc::{recover, repair, scan, WarcError, WarcWriter};

use crate::reading::{member_starts, members, split, warc_files};
use crate::samples::{config, sample_capture};
use crate::warcio::warcio_check;

#[test]
fn scan_and_repair_cut_a_torn_last_record_at_random_offsets() {
    let dir = tempfile::tempdir().unwrap();
    let mut writer = WarcWriter::new(config(dir.path())).unwrap();
    for i in 0..12 {
        writer.write_capture(&sample_capture(i)).unwrap();
    }
    writer.close().unwrap();
    let original = warc_files(dir.path()).remove(0);
    let data = fs::read(&original).unwrap();
    let mut boundaries = member_starts(&data);
    let full = scan(&original).unwrap();
    assert_eq!(full.valid_len, data.len() as u64);
    assert_eq!(full.records, boundaries.len() as u64);
    assert!(!full.is_torn());
    boundaries.push(data.len() as u64);

    let torn_dir = dir.path().join("torn");
    fs::create_dir(&torn_dir).unwrap();
    let mut rng = fastrand::Rng::with_seed(7);
    let last_start = boundaries[boundaries.len() - 2];
    let mut repaired = Vec::new();
    for case in 0..40u64 {
        // Most cuts inside the last member, the rest anywhere.
        let cut = if case < 25 {
            rng.u64(last_start + 1..data.len() as u64)
        } else {
            rng.u64(1..data.len() as u64)
        };
        let path = torn_dir.join(format!("cut-{case}.warc.gz"));
        fs::write(&path, &data[..cut as usize]).unwrap();
        let expected = *boundaries.iter().filter(|&&b| b <= cut).max().unwrap();
        let report = scan(&path).unwrap();
        assert_eq!(report.valid_len, expected, "cut at {cut}");
        assert_eq!(report.is_torn(), expected < cut);
        let fixed = repair(&path, None).unwrap();
        assert_eq!(fixed.new_len, expected);
        assert_eq!(fs::metadata(&path).unwrap().len(), expected);
        // What remains is whole records only.
        for (_, record) in members(&path) {
            split(&record);
        }
        assert!(!scan(&path).unwrap().is_torn());
        if expected > 0 {
            repaired.push(path);
        }
    }
    // Garbage after the last member (not gzip at all) is cut too.
    let path = torn_dir.join("garbage.warc.gz");
    let mut garbage = data.clone();
    garbage.extend_from_slice(b"this is not gzip");
    fs::write(&path, &garbage).unwrap();
    assert_eq!(repair(&path, None).unwrap().new_len, data.len() as u64);
    repaired.push(path);
    warcio_check(&repaired);
}

#[test]
fn repair_to_a_checkpoint_offset_and_recover_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("warc");
    let mut writer = WarcWriter::new(config(&out)).unwrap();
    for i in 0..5 {
        writer.write_capture(&sample_capture(i)).unwrap();
    }
    let checkpoint = writer.sync().unwrap().unwrap();
    for i in 5..9 {
        writer.write_capture(&sample_capture(i)).unwrap();
    }
    // They are staged: write them (as a full stage would), then "kill -9": copy the
    // .open file as it is now, torn in its last member.
    writer.sync().unwrap();
    let open = checkpoint.locate(&out).unwrap();
    assert!(open.to_str().unwrap().ends_with(".warc.gz.open"));
    let mut crashed = fs::read(&open).unwrap();
    let complete_len = crashed.len();
    crashed.truncate(complete_len - 17);
    writer.close().unwrap();
    let crash_dir = dir.path().join("crash");
    fs::create_dir(&crash_dir).unwrap();
    let crashed_path = crash_dir.join(format!("{}.open", checkpoint.file_name));
    fs::write(&crashed_path, &crashed).unwrap();

    // Bad checkpoints are refused.
    let beyond = repair(&crashed_path, Some(crashed.len() as u64 + 1));
    assert!(
        matches!(beyond, Err(WarcError::BadCheckpoint { .. })),
        "{beyond:?}"
    );
    let inside = repair(&crashed_path, Some(checkpoint.offset - 5));
    assert!(
        matches!(inside, Err(WarcError::BadCheckpoint { .. })),
        "{inside:?}"
    );

    assert_eq!(recover(&dir.path().join("never-written")).unwrap(), vec![]);
    // recover() scans, cuts the torn tail and renames.
    let warcinfo_only = crash_dir.join("trawl-20260101000000-00007-0.warc.gz.open");
    fs::write(&warcinfo_only, &crashed[..20]).unwrap();
    let recovered = recover(&crash_dir).unwrap();
    assert_eq!(recovered.len(), 2);
    let kept = recovered.iter().find_map(|r| r.path.clone()).unwrap();
    assert_eq!(kept, crash_dir.join(&checkpoint.file_name));
    assert!(
        !warcinfo_only.exists(),
        "a file without a whole record is removed"
    );
    let report = recovered.iter().find(|r| r.path.is_some()).unwrap().repair;
    assert!(report.new_len < crashed.len() as u64);
    assert!(report.new_len >= checkpoint.offset);
    warcio_check(std::slice::from_ref(&kept));

    // Cutting back to the checkpoint drops the records written after it.
    let at_checkpoint = repair(&kept, Some(checkpoint.offset)).unwrap();
    assert_eq!(at_checkpoint.new_len, checkpoint.offset);
    assert_eq!(scan(&kept).unwrap().valid_len, checkpoint.offset);
    // warcinfo, then captures 0-2 (request, response, metadata), 3 (no metadata) and
    // 4 (no request).
    assert_eq!(scan(&kept).unwrap().records, 1 + 3 + 3 + 3 + 2 + 2);
    warcio_check(&[kept]);
}

/// Child mode of the crash test: write captures until killed (at most 20 s).
const CRASH_CHILD_ENV: &str = "TRAWL_WARC_CRASH_CHILD";

#[test]
fn killed_writer_leaves_files_that_recover_makes_valid() {
    if let Some(dir) = std::env::var_os(CRASH_CHILD_ENV) {
        let mut cfg = config(Path::new(&dir));
        cfg.max_file_bytes = 32 * 1024;
        let mut writer = WarcWriter::new(cfg).unwrap();
        let start = std::time::Instant::now();
        let mut i = 0;
        while start.elapsed() < std::time::Duration::from_secs(20) {
            writer.write_capture(&sample_capture(i)).unwrap();
            i += 1;
        }
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut rng = fastrand::Rng::with_seed(11);
    let mut recovered_open_files = 0;
    for _round in 0..4 {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                // The test's path in this binary: the child runs it alone.
                "repair::killed_writer_leaves_files_that_recover_makes_valid",
                "--exact",
                "--test-threads=1",
            ])
            .env(CRASH_CHILD_ENV, dir.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // Wait until the child is writing (a loaded machine may take a while to start
        // it), then kill it at a random moment.
        let before = fs::read_dir(dir.path()).unwrap().count();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
        while fs::read_dir(dir.path()).unwrap().count() <= before
            && std::time::Instant::now() < deadline
        {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        std::thread::sleep(std::time::Duration::from_millis(rng.u64(50..400)));
        child.kill().unwrap(); // SIGKILL: no destructor, no rename, no flush
        child.wait().unwrap();
        let recovered = recover(dir.path()).unwrap();
        recovered_open_files += recovered.len();
        for file in &recovered {
            if let Some(path) = &file.path {
                assert!(!scan(path).unwrap().is_torn());
            }
        }
    }
    // A kill that lands between closing one rotated file and opening the next leaves
    // no `.open` file, so not every round has one to recover; most do.
    assert!(
        recovered_open_files >= 1,
        "no kill left an .open file to recover"
    );
    let files = warc_files(dir.path());
    assert!(files.len() >= 4, "{files:?}");
    for file in &files {
        let report = scan(file).unwrap();
        assert!(!report.is_torn(), "{file:?}");
        assert!(report.records >= 1);
    }
    // Serial numbers never collide across restarts.
    let mut serials: Vec<_> = files
        .iter()
        .map(|f| {
            let name = f.file_name().unwrap().to_str().unwrap();
            trawl::warc::writer::parse_serial(name, "trawl", 0).unwrap()
        })
        .collect();
    let count = serials.len();
    serials.dedup();
    assert_eq!(serials.len(), count);
    warcio_check(&files);
}
