//! Reading a file line by line under [`MAX_LINE_BYTES`], counting
//! lines for error reports, and the URL sanity check the readers share.

use std::io::{self, BufRead};

use super::error::{FileKind, FormatError};
use super::MAX_LINE_BYTES;

/// Whether `text` looks like an absolute http(s) URL with no whitespace: the check the
/// readers apply (full parsing is the crawler's job, not the file format's).
pub(super) fn is_plausible_url(text: &str) -> bool {
    let lower = text
        .get(..8)
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    (lower.starts_with("http://") || lower.starts_with("https://"))
        && text.len() > lower.find("//").map_or(0, |i| i + 2)
        && !text.chars().any(char::is_whitespace)
}

/// Bounded line reader shared by the formats: yields `(line_number, text)` with the line
/// terminator removed, refusing lines over [`MAX_LINE_BYTES`].
#[derive(Debug)]
pub(super) struct LineReader<R> {
    input: R,
    file: FileKind,
    line: u64,
    buf: Vec<u8>,
    done: bool,
}

impl<R: BufRead> LineReader<R> {
    pub(super) fn new(input: R, file: FileKind) -> Self {
        Self {
            input,
            file,
            line: 0,
            buf: Vec::new(),
            done: false,
        }
    }

    pub(super) fn next_line(&mut self) -> Option<Result<(u64, String), FormatError>> {
        if self.done {
            return None;
        }
        self.buf.clear();
        self.line += 1;
        let limit = u64::try_from(MAX_LINE_BYTES).unwrap_or(u64::MAX) + 1;
        let read = io::Read::take(&mut self.input, limit).read_until(b'\n', &mut self.buf);
        match read {
            Err(source) => {
                self.done = true;
                Some(Err(FormatError::Io {
                    file: self.file,
                    source,
                }))
            }
            Ok(0) => {
                self.done = true;
                None
            }
            Ok(_) => {
                if self.buf.last() == Some(&b'\n') {
                    self.buf.pop();
                    if self.buf.last() == Some(&b'\r') {
                        self.buf.pop();
                    }
                } else if self.buf.len() > MAX_LINE_BYTES {
                    self.done = true;
                    return Some(Err(FormatError::BadLine {
                        file: self.file,
                        line: self.line,
                    }));
                }
                match String::from_utf8(std::mem::take(&mut self.buf)) {
                    Ok(text) => Some(Ok((self.line, text))),
                    Err(_) => {
                        self.done = true;
                        Some(Err(FormatError::BadLine {
                            file: self.file,
                            line: self.line,
                        }))
                    }
                }
            }
        }
    }
}
