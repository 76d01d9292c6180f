//! Byte counts for people: `512 B`, `3.0 MiB`, `1.50 GiB`. The one formatter behind the
//! progress line (`engine::observe::monitor`), `trawl plan` and `trawl inspect`; and what an
//! allocation of some bytes costs ([`heap_chunk`]), for RAM budgets.
//!
//! A leaf: it imports nothing from the crate.

/// Bytes a heap allocation of `len` bytes occupies in a typical malloc (glibc: an
/// 8-byte header, 16-byte granularity, 32 bytes at least); 0 for no allocation. The
/// one estimate behind every RAM charge (frontier entries, robots rules).
pub fn heap_chunk(len: usize) -> usize {
    if len == 0 {
        0
    } else {
        (len + 8).next_multiple_of(16).max(32)
    }
}

/// Binary units, each 1024 times the one before.
const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];

/// `bytes` in the largest binary unit that keeps the number at or above 1, with
/// `decimals` digits after the point; whole bytes below 1 KiB (`512 B`).
pub fn human_bytes(bytes: f64, decimals: usize) -> String {
    let mut value = bytes;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    let name = UNITS.get(unit).copied().unwrap_or("B");
    if unit == 0 {
        format!("{value:.0} {name}")
    } else {
        format!("{value:.decimals$} {name}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_and_decimals() {
        for (bytes, decimals, text) in [
            (0.0, 1, "0 B"),
            (512.0, 1, "512 B"),
            (512.0, 2, "512 B"),
            (1023.0, 1, "1023 B"),
            (1024.0, 1, "1.0 KiB"),
            (1536.0, 2, "1.50 KiB"),
            (3.0 * 1024.0 * 1024.0, 1, "3.0 MiB"),
            (1024.0 * 1024.0 * 1024.0 * 3.0, 2, "3.00 GiB"),
            (5.0 * (1u64 << 40) as f64, 1, "5.0 TiB"),
            (2048.0 * (1u64 << 40) as f64, 1, "2.0 PiB"),
            ((1u64 << 62) as f64, 0, "4096 PiB"),
        ] {
            assert_eq!(human_bytes(bytes, decimals), text, "{bytes} {decimals}");
        }
    }
}
