//! Canonicalizer on arbitrary `base\nhref` bytes: `trawl::url::fuzz_canonicalize` must
//! never panic, and canonical URLs must be fixed points.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    trawl::url::fuzz_canonicalize(data);
});
