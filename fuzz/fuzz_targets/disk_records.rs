#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    trawl::disk::fuzz_records(data);
    trawl::checkpoint::tallies::fuzz_row(data);
});
