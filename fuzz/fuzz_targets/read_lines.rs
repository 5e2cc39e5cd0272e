//! Fuzz target: the line reader. Any bytes, any chunking: the lines it returns, joined with the
//! terminators it reports, rebuild the input, and the count matches.
#![no_main]

use std::io::Read;

use boo_normalize::read::LineReader;
use libfuzzer_sys::fuzz_target;

struct Chunks<'a>(&'a [u8], usize);
impl Read for Chunks<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let n = self.1.min(self.0.len()).min(out.len());
        out[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&chunk, input)) = data.split_first() else {
        return;
    };
    let mut r = LineReader::new(Chunks(input, usize::from(chunk).max(1)));
    let mut total = 0u64;
    let mut lines = 0u64;
    while let Some(l) = r.next_line().unwrap() {
        total += l.raw_len;
        lines += 1;
        assert!(l.bytes.len() as u64 <= l.raw_len);
    }
    assert_eq!(total, input.len() as u64);
    let nl = input.iter().filter(|&&b| b == b'\n').count() as u64;
    assert_eq!(
        lines,
        nl + u64::from(!input.is_empty() && !input.ends_with(b"\n"))
    );
});
