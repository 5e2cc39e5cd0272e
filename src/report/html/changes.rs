//! The "Changes" section: every Edit, MultiEdit, Write and NotebookEdit, grouped per file in
//! the order the files were first touched, each with its diff, counts and a link to its call.

use super::super::diff;
use super::thread::W;
use crate::view::num;

/// One call's edits of a file: the call's index and its diffs.
type Edit = (usize, Vec<diff::Diff>);

impl W<'_> {
    /// The section (nothing when the run edited no file).
    pub fn changes(&mut self) {
        let run = self.run;
        let mut files: Vec<(String, Vec<Edit>)> = Vec::new();
        for (i, c) in run.calls.iter().enumerate() {
            let Some((path, diffs)) = diff::edits(&c.name, &c.input) else {
                continue;
            };
            match files.iter_mut().find(|(p, _)| *p == path) {
                Some((_, v)) => v.push((i, diffs)),
                None => files.push((path, vec![(i, diffs)])),
            }
        }
        if files.is_empty() {
            return;
        }
        self.raw(&format!(
            "<section id=\"changes\"><h2>Changes <span class=\"dim\">{} files</span></h2>\n",
            files.len()
        ));
        for (path, edits) in &files {
            let added: usize = edits.iter().flat_map(|e| &e.1).map(|d| d.added).sum();
            let removed: usize = edits.iter().flat_map(|e| &e.1).map(|d| d.removed).sum();
            let failed = edits.iter().filter(|e| run.calls[e.0].failed()).count();
            self.raw("<details class=\"file\"");
            self.raw(if self.open { " open>" } else { ">" });
            self.raw("<summary><code>");
            self.text(path);
            self.raw(&format!(
                "</code> <span class=\"cm\">{} edit{} · <span class=\"a\">+{added}</span> <span class=\"d\">−{removed}</span>{}</span></summary>",
                edits.len(),
                if edits.len() == 1 { "" } else { "s" },
                if failed > 0 { format!(" · {failed} failed") } else { String::new() }
            ));
            for (i, diffs) in edits {
                let c = &run.calls[*i];
                self.raw(&format!(
                    "<div class=\"edit{}\" id=\"chg-{}\"><a href=\"#seq-{}\">",
                    if c.failed() { " err" } else { "" },
                    c.seq,
                    c.seq
                ));
                self.text(&c.name);
                self.raw(&format!(" #{}</a>", c.seq));
                if let Some(t) = c.at_us {
                    self.raw(&format!(" <span class=\"dim\">{}</span>", num::utc(t)));
                }
                if c.failed() {
                    self.raw(" <span class=\"errn\">failed: not applied</span>");
                }
                if c.name == "Write" {
                    let n = diffs.first().map_or(0, |d| d.added);
                    self.raw(&format!(
                        " <span class=\"dim\">+{n} lines written (content in the call)</span>"
                    ));
                } else {
                    for d in diffs {
                        self.diff(d);
                    }
                }
                self.raw("</div>");
            }
            self.raw("</details>\n");
        }
        self.raw("</section>\n");
    }
}
