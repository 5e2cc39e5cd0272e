//! The end of a trace: every span still open is closed at the run's (or the invocation's)
//! end, the root last, with the run's cause and outcome.

use crate::json::fields::Fields;
use crate::sink::otlp::span::Span;

use super::Trace;
use crate::clock::Stamp;
use crate::envelope::kind as ek;
use crate::sink::otlp::attr;

impl Trace {
    /// The run is over at `at` (`cause`: how it ended): close every open span, the root last.
    pub fn end(&mut self, at: Stamp, cause: &str) {
        if self.ended {
            return;
        }
        if self.root.is_none() {
            // An empty run still gets its root, so a receiver sees that it happened.
            self.event(ek::RUN_END, &Fields::default(), at, None, None);
        }
        self.ended = true;
        let now = attr::nanos(at);
        let mut msgs: Vec<String> = self.chats.keys().cloned().collect();
        msgs.sort(); // a deterministic order (HashMap iteration is not)
        for m in msgs {
            self.close_chat(&m);
        }
        let mut open: Vec<(String, Span)> = self.tools.drain().collect();
        open.sort_by(|a, b| a.0.cmp(&b.0));
        for (_, mut span) in open {
            span.end = now.max(span.start);
            span.status = Some(attr::error_status(
                "the run ended before the tool's result".into(),
            ));
            span.attributes.push(attr::str("error.type", "no_result"));
            self.finished.push(span);
        }
        let mut agents: Vec<(String, Span)> = self.agents.drain().collect();
        agents.sort_by(|a, b| a.0.cmp(&b.0));
        for (thread, mut span) in agents {
            let last = self
                .threads
                .get(&thread)
                .and_then(|t| t.last)
                .unwrap_or(now);
            span.end = last.max(span.start);
            self.finished.push(span);
        }
        let Some(mut root) = self.root.take() else {
            return;
        };
        root.end = now.max(root.start);
        let a = &mut root.attributes;
        if let Some(s) = &self.session_id {
            a.push(attr::str("gen_ai.conversation.id", s.clone()));
        }
        if let Some(m) = &self.model {
            a.push(attr::str("gen_ai.request.model", m.clone()));
        }
        a.push(attr::str("boo_normalize.run.cause", cause.to_owned()));
        if let Some(o) = &self.failed_outcome {
            root.status = Some(attr::error_status(format!(
                "the run ended with outcome {o}"
            )));
            attr::set(&mut root.attributes, attr::str("error.type", o.clone()));
        } else if !self.terminal {
            root.status = Some(attr::error_status("the run ended without a result".into()));
            attr::set(&mut root.attributes, attr::str("error.type", "no_result"));
        }
        self.finished.push(root);
    }
}
