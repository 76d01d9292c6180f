//! The seeds file: one seed URL a line.

use std::io::{self, BufRead, Write};

use super::error::{FileKind, FormatError};
use super::line_reader::{is_plausible_url, LineReader};

/// Write a seeds file, one absolute URL per line.
///
/// # Errors
/// Returns the writer's I/O error.
pub fn write_seeds<'a, W: Write>(
    mut out: W,
    seeds: impl IntoIterator<Item = &'a str>,
) -> io::Result<()> {
    for seed in seeds {
        writeln!(out, "{seed}")?;
    }
    Ok(())
}

/// Read a seeds file. Blank lines and lines starting with `#` are skipped; each other
/// line, trimmed, must be an absolute `http://` or `https://` URL without whitespace.
///
/// # Errors
/// The first I/O error or malformed line.
pub fn read_seeds<R: BufRead>(input: R) -> Result<Vec<String>, FormatError> {
    let mut lines = LineReader::new(input, FileKind::Seeds);
    let mut seeds = Vec::new();
    while let Some(next) = lines.next_line() {
        let (line, text) = next?;
        let text = text.trim();
        if text.is_empty() || text.starts_with('#') {
            continue;
        }
        if !is_plausible_url(text) {
            return Err(FormatError::Syntax {
                file: FileKind::Seeds,
                line,
                reason: "expected an absolute http(s) URL",
            });
        }
        seeds.push(text.to_owned());
    }
    Ok(seeds)
}
