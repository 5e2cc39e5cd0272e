//! Fuzz target: `audit verify` over arbitrary bytes never panics, and a valid log with one byte
//! changed never verifies.
#![no_main]

use boo_normalize::audit::verify::verify;
use boo_normalize::normalize::{EndInfo, NormalizeOptions, Normalizer};
use boo_normalize::pipeline::Pipeline;
use boo_normalize::sink::audit::Audit;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = verify(data);
    // Also: a real log of this input, with one byte flipped, must fail.
    if data.len() < 3 {
        return;
    }
    let (at, flip, input) = (data[0] as usize, data[1] | 1, &data[2..]);
    let mut log = Vec::new();
    {
        let mut p = Pipeline::new(
            Normalizer::new(NormalizeOptions::default()),
            vec![Box::new(Audit::new(&mut log, "fuzz", [b'0'; 64]))],
        );
        p.run(input, None).unwrap();
        p.finish(&EndInfo::eof()).unwrap();
    }
    assert!(verify(&log[..]).is_ok());
    let i = at * 7919 % log.len();
    log[i] ^= flip;
    assert!(
        verify(&log[..]).is_err(),
        "byte {i} changed and the log still verifies"
    );
});
