//! Fuzz the one WARC reader: `trawl::warc::reader::fuzz_read` must never panic, and
//! checks that heads re-parse to themselves, that a record pushed in pieces reads as
//! one pushed whole, and that the records of a file (gzip members or plain) stand alone.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    trawl::warc::reader::fuzz_read(data);
});
