//! The batch file format of `trawl add` (sans-IO): a header line, then one absolute
//! http(s) URL per line; and the check every URL handed to a running crawl passes
//! first, whoever hands it (`trawl add`, `trawl ctl add`, the control API, the library's
//! `CrawlHandle::add`).

use super::DropError;

/// First line of every batch file.
pub const BATCH_HEADER: &str = "# trawl add v1";
/// Longest URL line accepted, in bytes.
pub const MAX_URL_BYTES: usize = 8_192;
/// Most rejected lines kept as examples per batch (all are counted).
pub const MAX_REJECTED_EXAMPLES: usize = 100;

/// A line of a batch that is not a URL the crawl can take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RejectedLine {
    /// 1-based line number.
    pub line: u64,
    /// Why.
    pub reason: &'static str,
}

/// The URLs of one batch file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Batch {
    /// File name inside the drop directory.
    pub name: String,
    /// Absolute http(s) URLs in file order, as written (the engine canonicalizes and
    /// scopes them like any link).
    pub urls: Vec<String>,
    /// Lines refused, the first [`MAX_REJECTED_EXAMPLES`].
    pub rejected: Vec<RejectedLine>,
    /// Lines refused, all of them.
    pub rejected_count: u64,
}

/// Parse one line as an absolute http(s) URL.
///
/// # Errors
/// The reason a line is refused.
pub fn check_url(line: &str) -> Result<(), &'static str> {
    if line.len() > MAX_URL_BYTES {
        return Err("longer than 8192 bytes");
    }
    match ::url::Url::parse(line) {
        Ok(u) if matches!(u.scheme(), "http" | "https") && u.host().is_some() => Ok(()),
        Ok(_) => Err("not an http or https URL"),
        Err(_) => Err("not an absolute URL"),
    }
}

/// Parse a batch file's bytes (sans-IO): the header line, then one URL per line; blank
/// lines and lines starting with `#` are skipped; other lines that are not absolute
/// http(s) URLs are refused with their line number.
///
/// # Errors
/// [`DropError::NotABatch`] when the header is missing (`name` names the file).
pub fn parse_batch(name: &str, bytes: &[u8]) -> Result<Batch, DropError> {
    let text = String::from_utf8_lossy(bytes);
    let mut lines = text.lines();
    if lines.next().map(str::trim_end) != Some(BATCH_HEADER) {
        return Err(DropError::NotABatch {
            name: name.to_owned(),
        });
    }
    let mut batch = Batch {
        name: name.to_owned(),
        urls: Vec::new(),
        rejected: Vec::new(),
        rejected_count: 0,
    };
    for (i, line) in lines.enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        match check_url(line) {
            Ok(()) => batch.urls.push(line.to_owned()),
            Err(reason) => {
                batch.rejected_count += 1;
                if batch.rejected.len() < MAX_REJECTED_EXAMPLES {
                    batch.rejected.push(RejectedLine {
                        line: i as u64 + 2,
                        reason,
                    });
                }
            }
        }
    }
    Ok(batch)
}

/// The text of a batch file holding `urls` (already checked with [`check_url`]).
pub fn render_batch(urls: &[String]) -> String {
    let mut text = String::with_capacity(urls.iter().map(|u| u.len() + 1).sum::<usize>() + 16);
    text.push_str(BATCH_HEADER);
    text.push('\n');
    for u in urls {
        text.push_str(u);
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn urls(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn parse_batch_lines() {
        let text = format!(
            "{BATCH_HEADER}\nhttp://a.example/1\n\n# note\n  https://b.example/x?y=1  \n\
             ftp://c.example/\n/relative\nmailto:x@y\nhttp://a.example/2"
        );
        let b = parse_batch("n.urls", text.as_bytes()).unwrap();
        assert_eq!(
            b.urls,
            urls(&[
                "http://a.example/1",
                "https://b.example/x?y=1",
                "http://a.example/2"
            ])
        );
        assert_eq!(b.rejected_count, 3);
        assert_eq!(
            b.rejected,
            [
                RejectedLine {
                    line: 6,
                    reason: "not an http or https URL"
                },
                RejectedLine {
                    line: 7,
                    reason: "not an absolute URL"
                },
                RejectedLine {
                    line: 8,
                    reason: "not an http or https URL"
                },
            ]
        );
        assert!(matches!(
            parse_batch("x.urls", b"http://a.example/\n"),
            Err(DropError::NotABatch { .. })
        ));
        assert!(matches!(
            parse_batch("x.urls", b""),
            Err(DropError::NotABatch { .. })
        ));
    }

    #[test]
    fn a_rendered_batch_parses_back() {
        let list = urls(&["http://a.example/1", "https://b.example/x?y=1"]);
        let b = parse_batch("n.urls", render_batch(&list).as_bytes()).unwrap();
        assert_eq!(b.urls, list);
        assert_eq!(b.rejected_count, 0);
    }
}
