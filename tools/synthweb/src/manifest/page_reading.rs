//! How the manifest's crawler reads a page: which links it follows, the `nofollow`
//! directives, and the fingerprint that tells copies of a page apart.

use crate::hash::mix64;
use crate::html::{Element, LinkKind};

/// Whether trawl's default extractor takes and follows a link of this kind and element.
pub(super) fn is_followed(kind: LinkKind, element: Element) -> bool {
    match kind {
        LinkKind::Follow | LinkKind::Refresh => true,
        LinkKind::Resource => element != Element::Img,
        LinkKind::NoFollowRel | LinkKind::Hidden(_) | LinkKind::NonHttp => false,
    }
}

/// Whether a robots directive list (`<meta name=robots>` content or `X-Robots-Tag`)
/// forbids following links.
pub(super) fn says_nofollow(directives: &str) -> bool {
    directives.split(',').any(|d| {
        let d = d.trim();
        // `X-Robots-Tag: trawl: nofollow` style: the last `:`-part is the directive.
        let d = d.rsplit(':').next().unwrap_or(d).trim();
        d.eq_ignore_ascii_case("nofollow") || d.eq_ignore_ascii_case("none")
    })
}

/// trawl's duplicate-content reading (`trawl::html::fingerprint::page_fingerprint`,
/// reimplemented here so the manifest stays an independent model): the body with every
/// mention of the page's own directory, the directory without its final `/`, its parent
/// directory and the parent without its `/` (in that order of preference, the root `/`
/// never) replaced by a marker, except right after `<` (an end tag such as `</a>`). Pages
/// equal after this are copies: a self-listing directory at `/ls/sub/` and
/// `/ls/sub/alt/` is one page.
pub(super) fn abstract_own_locations<'a>(path: &str, body: &'a [u8]) -> std::borrow::Cow<'a, [u8]> {
    let path = path.as_bytes();
    let dir_end = path.iter().rposition(|&b| b == b'/').map_or(0, |i| i + 1);
    let dir = path.get(..dir_end).unwrap_or_default();
    let mut needles: Vec<&[u8]> = Vec::new();
    if dir.len() > 1 {
        let bare = dir.get(..dir.len() - 1).unwrap_or_default();
        needles.push(dir);
        needles.push(bare);
        let parent_end = bare.iter().rposition(|&b| b == b'/').map_or(0, |i| i + 1);
        let parent = bare.get(..parent_end).unwrap_or_default();
        if parent.len() > 1 {
            needles.push(parent);
            needles.push(parent.get(..parent.len() - 1).unwrap_or_default());
        }
    }
    if needles.is_empty() {
        return std::borrow::Cow::Borrowed(body);
    }
    let mut out = Vec::with_capacity(body.len());
    let mut i = 0;
    while let Some(&byte) = body.get(i) {
        if byte == b'/' && (i == 0 || body.get(i - 1) != Some(&b'<')) {
            let tail = body.get(i..).unwrap_or_default();
            if let Some(k) = needles.iter().position(|n| tail.starts_with(n)) {
                out.extend_from_slice(&[0, b"DdPp"[k]]);
                i += needles[k].len();
                continue;
            }
        }
        out.push(byte);
        i += 1;
    }
    std::borrow::Cow::Owned(out)
}

/// A 128-bit content fingerprint of a body, word at a time (the generator's byte-wise
/// hash is too slow for hundreds of thousands of pages). Two lanes with different
/// multipliers; the length is mixed in. A collision could only make
/// [`compute`](super::compute) report a spurious
/// [`ManifestError::Ambiguous`](super::ManifestError::Ambiguous), never a silent error:
/// equal fingerprints are checked to carry equal links.
pub(super) fn fingerprint(body: &[u8]) -> u128 {
    const K1: u64 = 0x9E37_79B9_7F4A_7C15;
    const K2: u64 = 0xC2B2_AE3D_27D4_EB4F;
    let (mut a, mut b) = (0x243F_6A88_85A3_08D3_u64, 0x1319_8A2E_0370_7344_u64);
    let mut words = body.chunks_exact(8);
    for word in &mut words {
        let mut w = [0u8; 8];
        w.copy_from_slice(word);
        let w = u64::from_le_bytes(w);
        a = (a ^ w).wrapping_mul(K1).rotate_left(29);
        b = (b ^ w).wrapping_mul(K2).rotate_left(31);
    }
    let mut tail = [0u8; 8];
    if let Some(t) = tail.get_mut(..words.remainder().len()) {
        t.copy_from_slice(words.remainder());
    }
    let tail = u64::from_le_bytes(tail) ^ (body.len() as u64).rotate_left(56);
    a = mix64(a ^ tail);
    b = mix64(b ^ tail.wrapping_mul(K1));
    (u128::from(a) << 64) | u128::from(b)
}
