//! Splicing hollowed string literals (see `crate::json::Hole`) back into a line's events.

use super::blob::write_summary;
use crate::envelope::Events;
use crate::json::{Out, Splice};

/// What goes into one splice.
enum Piece<'l> {
    /// The literal's content (its quotes are already in the buffer).
    Content(&'l [u8]),
    /// The quoted literal (a base64 candidate that did not decode).
    Quoted(&'l [u8]),
    /// A blob summary.
    Summary(Vec<u8>),
}

impl Piece<'_> {
    fn len(&self) -> usize {
        match self {
            Piece::Content(b) => b.len(),
            Piece::Quoted(b) => b.len() + 2,
            Piece::Summary(b) => b.len(),
        }
    }

    fn write_to(&self, dst: &mut [u8]) {
        match self {
            Piece::Content(b) => dst.copy_from_slice(b),
            Piece::Quoted(b) => {
                let n = dst.len();
                dst[0] = b'"';
                dst[1..n - 1].copy_from_slice(b);
                dst[n - 1] = b'"';
            }
            Piece::Summary(b) => dst.copy_from_slice(b),
        }
    }
}

/// Put the content of every recorded splice from `line` into the events of `ev` (see
/// [`Events::insert`]).
pub(super) fn fill_holes(ev: &mut Events, line: &[u8], scratch: &mut Vec<u8>) {
    let splices: Vec<Splice> = ev.out.take_splices();
    if splices.is_empty() {
        return;
    }
    let pieces: Vec<Piece<'_>> = splices
        .iter()
        .map(|sp| {
            let raw = &line[sp.raw.clone()];
            match &sp.blob {
                None => Piece::Content(raw),
                Some(media_type) => {
                    let mut o = Out::default();
                    if write_summary(raw, media_type.as_deref(), &mut o, scratch) {
                        Piece::Summary(o.buf)
                    } else {
                        Piece::Quoted(raw)
                    }
                }
            }
        })
        .collect();
    let places: Vec<usize> = splices.iter().map(|sp| sp.at).collect();
    let lens: Vec<usize> = pieces.iter().map(Piece::len).collect();
    ev.insert(&places, &lens, |i, dst| pieces[i].write_to(dst));
}
