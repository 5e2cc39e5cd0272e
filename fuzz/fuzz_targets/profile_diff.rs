//! Fuzz target: profile and diff over arbitrary bytes. No panic; a profile diffs clean against
//! itself and survives its own JSON document; merging two profiles does not depend on order.
#![no_main]

use boo_normalize::profile::Profile;
use boo_normalize::profile::diff::diff;
use boo_normalize::profile::infer::Profiler;
use libfuzzer_sys::fuzz_target;

fn profile(bytes: &[u8]) -> Profile {
    let mut p = Profiler::new();
    p.add_bytes(bytes, None);
    p.finish()
}

fuzz_target!(|data: &[u8]| {
    let whole = profile(data);
    assert!(diff(&whole, &whole).is_empty());
    let text = whole.to_json();
    let back = Profile::from_json(&text).expect("own document parses");
    assert_eq!(back.to_json(), text);
    // Two streams (split at the first newline): merging is independent of order.
    if let Some(cut) = data.iter().position(|&b| b == b'\n') {
        let (x, y) = (profile(&data[..=cut]), profile(&data[cut + 1..]));
        let mut xy = x.clone();
        xy.merge(&y);
        xy.finalize();
        let mut yx = y.clone();
        yx.merge(&x);
        yx.finalize();
        assert_eq!(xy.to_json(), yx.to_json());
    }
});
