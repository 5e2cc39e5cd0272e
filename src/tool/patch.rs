//! The files a patch text names: the headers of the `*** Begin Patch` format (Codex's and Copilot
//! CLI's `apply_patch`): `*** Add File: P`, `*** Update File: P`, `*** Delete File: P` and an
//! update's `*** Move to: P`, as byte ranges of the text (so a path borrows from the input).

/// The headers that name a file, in the patch format.
const HEADERS: &[&str] = &[
    "*** Add File: ",
    "*** Update File: ",
    "*** Delete File: ",
    "*** Move to: ",
];

/// The byte ranges of the paths `text`'s headers name, in order, each once (a file updated then
/// moved gives both names). A header with an empty path names nothing.
pub fn paths(text: &str) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    let mut start = 0;
    for line in text.split_inclusive('\n') {
        let at = start;
        start += line.len();
        let Some(h) = HEADERS.iter().find(|h| line.starts_with(*h)) else {
            continue;
        };
        let rest = &line[h.len()..];
        let path = rest.trim_end_matches(['\n', '\r']).trim();
        if path.is_empty() {
            continue;
        }
        let from = at + h.len() + (rest.len() - rest.trim_start().len());
        let range = (from, from + path.len());
        if !out.iter().any(|r| text[r.0..r.1] == *path) {
            out.push(range);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::paths;

    fn named(text: &str) -> Vec<&str> {
        paths(text).into_iter().map(|(a, b)| &text[a..b]).collect()
    }

    #[test]
    fn every_header_names_its_file() {
        let p = "*** Begin Patch\n*** Add File: hello.txt\n+hello\n*** Update File: src/a.rs\n*** Move to: src/b.rs\n@@\n-x\n+y\n*** Delete File: old.txt\n*** End Patch\n";
        assert_eq!(named(p), ["hello.txt", "src/a.rs", "src/b.rs", "old.txt"]);
    }

    #[test]
    fn crlf_spaces_repeats_and_lookalikes() {
        let p = "*** Begin Patch\r\n*** Update File:  /w/a b.txt \r\n@@\n+*** Add File: not-a-header\n*** Update File: /w/a b.txt\n*** Add File: \n*** End Patch";
        assert_eq!(named(p), ["/w/a b.txt"]);
        assert!(named("no patch here").is_empty());
        assert!(named("").is_empty());
    }
}
