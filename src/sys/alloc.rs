//! mimalloc's options, set through its C API. The binary's global allocator is
//! mimalloc (`src/main.rs`); in a process that does not allocate with it (an embedder,
//! the library's tests) these calls only change a table nobody reads.
#![allow(
    unsafe_code,
    reason = "mimalloc's option getter and setter are C functions; the OS seam (src/sys), see docs/safety.md"
)]

/// mimalloc's `purge_delay` option: index 15 of its `mi_option_e` (mimalloc v2, the
/// version `libmimalloc-sys` builds by default; `mi_option_reset_delay` is an alias).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Makes mimalloc return freed memory to the OS at once instead of 10 ms later. A crawl
/// frees pages of thousands of links at a high rate; with the delay, memory freed in
/// the last 10 ms was still resident at any instant, and the memory test's peak RSS
/// less presence bits moved between 247 and 284 MiB from run to run against a 256 MiB
/// budget; with no delay it is 208-220 MiB (`tests/crawl_memory.rs`,
/// docs/benchmarks.md "Frontier memory"). It costs CPU (the freed memory is faulted in
/// again when reused), so `trawl crawl` asks for it only under a `--memory` budget
/// below the default 512M (`options::crawl`).
pub fn purge_freed_memory_promptly() {
    // SAFETY: `mi_option_set` stores an integer in mimalloc's option table; it may be
    // called at any time from any thread, and 0 is a valid `purge_delay` (immediate).
    unsafe {
        libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 0);
    }
}

/// mimalloc's `purge_delay` now, in milliseconds (10 unless changed).
pub fn purge_delay_ms() -> std::ffi::c_long {
    // SAFETY: `mi_option_get` reads an integer from mimalloc's option table; it may be
    // called at any time from any thread.
    unsafe { libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Covers both calls: the option set is the option read back.
    #[test]
    fn freed_memory_is_purged_without_delay() {
        purge_freed_memory_promptly();
        assert_eq!(purge_delay_ms(), 0);
    }
}
