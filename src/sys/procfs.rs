//! What Linux tells through `/proc`: this process's resident memory, the machine's RAM,
//! a thread's CPU time, one mapping's resident bytes. Read as text, no `unsafe`; each
//! figure is `None` where `/proc` is missing or says something else. The parsing is
//! sans-IO ([`kib_field`]) so it is tested on fixed text.

use std::fs;

/// Resident memory of this process, from `/proc/self/status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessMemory {
    /// `VmRSS`: resident now.
    pub rss_bytes: u64,
    /// `VmHWM`: the most resident so far.
    pub peak_rss_bytes: u64,
}

/// This process's resident memory now and at its peak.
pub fn process_memory() -> Option<ProcessMemory> {
    let status = fs::read_to_string("/proc/self/status").ok()?;
    Some(ProcessMemory {
        rss_bytes: kib_field(&status, "VmRSS")?,
        peak_rss_bytes: kib_field(&status, "VmHWM")?,
    })
}

/// The machine's RAM (`MemTotal` of `/proc/meminfo`).
pub fn physical_ram_bytes() -> Option<u64> {
    kib_field(&fs::read_to_string("/proc/meminfo").ok()?, "MemTotal")
}

/// CPU time the calling thread has run, in nanoseconds (the first figure of
/// `/proc/thread-self/schedstat`).
pub fn thread_cpu_ns() -> Option<u64> {
    fs::read_to_string("/proc/thread-self/schedstat")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Bytes resident of the mapping that starts at address `start`: its `Rss` in
/// `/proc/self/smaps` (file-backed or anonymous, huge pages included).
pub(crate) fn mapping_rss_bytes(start: usize) -> Option<u64> {
    smaps_rss_bytes(&fs::read_to_string("/proc/self/smaps").ok()?, start)
}

/// The summed `Rss` of the mappings that start at `starts`, from one read of
/// `/proc/self/smaps` (a start with no mapping counts 0). The file is built by walking
/// every mapping's page tables, about a millisecond for a crawler of 200 MiB: the
/// memory figures, refreshed every second with `--metrics-addr`, read it once for all
/// the presence bits, not once a mapping.
pub(crate) fn mappings_rss_bytes(starts: &[usize]) -> Option<u64> {
    Some(smaps_rss_sum(
        &fs::read_to_string("/proc/self/smaps").ok()?,
        starts,
    ))
}

/// The summed `Rss` of the mappings at `starts` in the text of an `smaps` file.
fn smaps_rss_sum(smaps: &str, starts: &[usize]) -> u64 {
    starts
        .iter()
        .map(|&s| smaps_rss_bytes(smaps, s).unwrap_or(0))
        .sum()
}

/// The `Rss` of the mapping at `start` in the text of an `smaps` file.
fn smaps_rss_bytes(smaps: &str, start: usize) -> Option<u64> {
    let mut inside = false;
    for line in smaps.lines() {
        let first = line.split_whitespace().next().unwrap_or_default();
        if let Some((lo, hi)) = first.split_once('-') {
            if let (Ok(lo), Ok(_)) = (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
            {
                inside = lo == start;
                continue;
            }
        }
        if inside && line.starts_with("Rss:") {
            return kib_field(line, "Rss");
        }
    }
    None
}

/// The value of the first `NAME:   123 kB` line of `text`, in bytes.
pub fn kib_field(text: &str, name: &str) -> Option<u64> {
    let value = text.lines().find_map(|line| {
        line.strip_prefix(name)
            .and_then(|rest| rest.strip_prefix(':'))
    })?;
    let kib: u64 = value.trim().trim_end_matches("kB").trim().parse().ok()?;
    kib.checked_mul(1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kib_fields_of_status_and_meminfo_text() {
        let status = "Name:\ttrawl\nVmHWM:\t  20480 kB\nVmRSS:\t   10240 kB\nThreads:\t4\n";
        assert_eq!(kib_field(status, "VmRSS"), Some(10 << 20));
        assert_eq!(kib_field(status, "VmHWM"), Some(20 << 20));
        assert_eq!(kib_field(status, "Threads"), Some(4 * 1024));
        assert_eq!(kib_field(status, "VmSwap"), None);
        assert_eq!(kib_field(status, "Name"), None);
        assert_eq!(kib_field("VmRSSx: 1 kB", "VmRSS"), None);
        assert_eq!(
            kib_field("MemTotal: 99999999999999999999 kB", "MemTotal"),
            None
        );
    }

    #[test]
    fn the_rss_of_one_mapping() {
        let smaps =
            "7f0000000000-7f0000200000 rw-p 00000000 00:00 0\nSize: 2048 kB\nRss: 1024 kB\n\
                     7f0000200000-7f0000400000 rw-p 00000000 00:00 0\nSize: 2048 kB\nRss: 8 kB\n";
        assert_eq!(smaps_rss_bytes(smaps, 0x7f00_0000_0000), Some(1 << 20));
        assert_eq!(smaps_rss_bytes(smaps, 0x7f00_0020_0000), Some(8192));
        assert_eq!(smaps_rss_bytes(smaps, 0x1000), None);
        let both = [0x7f00_0000_0000, 0x7f00_0020_0000, 0x1000];
        assert_eq!(smaps_rss_sum(smaps, &both), (1 << 20) + 8192);
        assert_eq!(smaps_rss_sum(smaps, &[]), 0);
    }

    /// This process, on Linux: figures that are there and agree with each other.
    #[test]
    fn this_process_and_machine() {
        let memory = process_memory().unwrap();
        assert!(memory.rss_bytes > 0 && memory.rss_bytes <= memory.peak_rss_bytes);
        assert!(physical_ram_bytes().unwrap() >= memory.peak_rss_bytes);
        assert!(thread_cpu_ns().is_some());
    }
}
