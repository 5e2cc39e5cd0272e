//! Small writers the event builders share: members promoted from a source object, and JSON
//! containers whose items are written one by one.

use crate::json::{Out, Val, get};

/// `v` at a dotted path.
fn at_path<'t, 'i>(v: Val<'t, 'i>, path: &str) -> Option<Val<'t, 'i>> {
    let mut cur = v;
    for part in path.split('.') {
        cur = get(cur, part)?;
    }
    Some(cur)
}

/// Write `"field":value` for each `(field, path)`, the value at `path` in `v` (dotted paths reach
/// into objects; `null` when it is missing).
pub fn promote(o: &mut Out, v: Val<'_, '_>, fields: &[(&str, &str)]) {
    for (field, path) in fields {
        o.key(field);
        o.opt_value(at_path(v, path));
    }
}

/// Write `open`, each item with `each` (commas between), then `close`.
pub fn joined<T>(
    o: &mut Out,
    (open, close): (&[u8], &[u8]),
    items: impl IntoIterator<Item = T>,
    mut each: impl FnMut(&mut Out, T),
) {
    o.raw(open);
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            o.raw(b",");
        }
        each(o, item);
    }
    o.raw(close);
}
