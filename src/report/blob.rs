//! Full bodies kept beside their previews: each deflated (zlib, `miniz_oxide`), base64-encoded
//! and written into an inert `<script type="application/x-boo-body">` element, which the page
//! inflates on demand with the browser's `DecompressionStream("deflate")`.

use base64::Engine as _;

/// Bodies added so far, in order; the id of each is `b` and its index.
#[derive(Debug, Default)]
pub struct Blobs {
    encoded: Vec<String>,
    /// Bytes before compression.
    pub raw_bytes: usize,
}

impl Blobs {
    /// Store `text` and return its element id.
    pub fn add(&mut self, text: &str) -> String {
        self.raw_bytes += text.len();
        let z = miniz_oxide::deflate::compress_to_vec_zlib(text.as_bytes(), 6);
        self.encoded
            .push(base64::engine::general_purpose::STANDARD.encode(z));
        format!("b{}", self.encoded.len() - 1)
    }

    /// Write every body element into `out` (base64 holds no `<`, so it cannot end the element).
    pub fn write(&self, out: &mut String) {
        for (i, b) in self.encoded.iter().enumerate() {
            out.push_str(&format!(
                "<script type=\"application/x-boo-body\" id=\"b{i}\">"
            ));
            out.push_str(b);
            out.push_str("</script>\n");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let mut b = Blobs::default();
        assert_eq!(b.add("hello hello hello"), "b0");
        let mut s = String::new();
        b.write(&mut s);
        let data = s.split('>').nth(1).unwrap().split('<').next().unwrap();
        let z = base64::engine::general_purpose::STANDARD
            .decode(data)
            .unwrap();
        let back = miniz_oxide::inflate::decompress_to_vec_zlib(&z).unwrap();
        assert_eq!(back, b"hello hello hello");
    }
}
