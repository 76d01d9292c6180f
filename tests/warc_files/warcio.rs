//! `warcio check`, `warcio index` and `warcio extract` over the files the tests write.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::crawl_support::warcio;

/// Runs `warcio check -v` over `files` and asserts it passes and that every record with
/// a digest had it verified.
pub fn warcio_check(files: &[PathBuf]) {
    let Some(warcio) = warcio() else { return };
    if files.is_empty() {
        return;
    }
    let out = Command::new(&warcio)
        .arg("check")
        .arg("-v")
        .args(files)
        .output()
        .expect("run warcio");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "warcio check failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    assert!(!stdout.contains("failed"), "{stdout}");
    assert!(
        !stdout.contains("not checked\n") || stdout.contains("(revisit)"),
        "{stdout}"
    );
    assert!(stdout.contains("digest pass"), "{stdout}");
}

/// `warcio index` output (one JSON line per record), or `None` without warcio.
pub fn warcio_index(file: &Path) -> Option<Vec<serde_json::Value>> {
    let warcio = warcio()?;
    let out = Command::new(&warcio)
        .arg("index")
        .arg("-f")
        .arg("warc-type,warc-target-uri,offset,length,http:status")
        .arg(file)
        .output()
        .expect("run warcio");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect(),
    )
}

/// The payload warcio (and so pywb) replays for the record at `offset`, after transfer
/// and content decoding; `None` without warcio.
pub fn warcio_payload(file: &Path, offset: u64) -> Option<Vec<u8>> {
    let warcio = warcio()?;
    let out = Command::new(&warcio)
        .arg("extract")
        .arg("--payload")
        .arg(file)
        .arg(offset.to_string())
        .output()
        .expect("run warcio");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(out.stdout)
}
