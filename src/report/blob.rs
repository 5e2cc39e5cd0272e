//! Full bodies kept beside their previews. Bodies are appended to chunks of about 256 KB, each
//! chunk deflated (zlib, `miniz_oxide`; together they compress far better than one by one),
//! base64-encoded and written into an inert `<script type="application/x-boo-body">` element;
//! the page inflates a chunk on demand with the browser's `DecompressionStream("deflate")` and
//! cuts the body out by its byte range. Chunks are compressed on all cores.

use base64::Engine as _;

/// Uncompressed bytes per chunk.
const CHUNK: usize = 256 * 1024;
/// zlib level: 6 (the default) costs about twice the time of 1 and saves a fifth.
const LEVEL: u8 = 6;

/// Bodies added so far.
#[derive(Debug, Default)]
pub struct Blobs {
    chunks: Vec<Vec<u8>>,
    /// Bytes before compression.
    pub raw_bytes: usize,
}

impl Blobs {
    /// Store `text`; returns its reference for a `data-blob` attribute: `CHUNK:OFFSET:LENGTH`
    /// (bytes of the inflated chunk).
    pub fn add(&mut self, text: &str) -> String {
        if self.chunks.last().is_none_or(|c| c.len() >= CHUNK) {
            self.chunks
                .push(Vec::with_capacity(CHUNK + text.len().min(CHUNK)));
        }
        let i = self.chunks.len() - 1;
        let c = &mut self.chunks[i];
        let at = c.len();
        c.extend_from_slice(text.as_bytes());
        self.raw_bytes += text.len();
        format!("{i}:{at}:{}", text.len())
    }

    /// Write every chunk element into `out` (base64 holds no `<`, so it cannot end the element).
    pub fn write(&self, out: &mut String) {
        for (i, b) in self.encode().iter().enumerate() {
            out.push_str(&format!(
                "<script type=\"application/x-boo-body\" id=\"c{i}\">"
            ));
            out.push_str(b);
            out.push_str("</script>\n");
        }
    }

    /// Every chunk compressed and encoded, in order, on as many threads as there are cores.
    fn encode(&self) -> Vec<String> {
        let threads = std::thread::available_parallelism()
            .map_or(1, usize::from)
            .max(1);
        let per = self.chunks.len().div_ceil(threads).max(1);
        std::thread::scope(|s| {
            let handles: Vec<_> = self
                .chunks
                .chunks(per)
                .map(|group| s.spawn(move || group.iter().map(|c| encode(c)).collect::<Vec<_>>()))
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().expect("compression thread"))
                .collect()
        })
    }
}

fn encode(chunk: &[u8]) -> String {
    let z = miniz_oxide::deflate::compress_to_vec_zlib(chunk, LEVEL);
    base64::engine::general_purpose::STANDARD.encode(z)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let mut b = Blobs::default();
        assert_eq!(b.add("hello hello hello"), "0:0:17");
        assert_eq!(b.add("é"), "0:17:2");
        let mut s = String::new();
        b.write(&mut s);
        let data = s.split('>').nth(1).unwrap().split('<').next().unwrap();
        let z = base64::engine::general_purpose::STANDARD
            .decode(data)
            .unwrap();
        let back = miniz_oxide::inflate::decompress_to_vec_zlib(&z).unwrap();
        assert_eq!(back, "hello hello helloé".as_bytes());
    }

    #[test]
    fn chunks_fill_up() {
        let mut b = Blobs::default();
        let big = "x".repeat(CHUNK);
        assert_eq!(b.add(&big), format!("0:0:{CHUNK}"));
        assert_eq!(b.add("y"), "1:0:1");
        let mut s = String::new();
        b.write(&mut s);
        assert_eq!(s.matches("<script").count(), 2);
    }
}
