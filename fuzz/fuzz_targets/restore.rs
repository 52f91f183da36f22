#![no_main]
//! See rust/xstreams-fuzz: `xstreams_fuzz::restore`.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| xstreams_fuzz::restore(data));
