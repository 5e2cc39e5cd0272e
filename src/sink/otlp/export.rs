//! The OTLP/HTTP exporter: a thread that batches spans, POSTs them to `…/v1/traces` (binary
//! protobuf, or JSON for `http/json`) with bounded retries, and counts what was delivered. The
//! pipeline only ever hands it batches without waiting (a full queue drops the batch and counts
//! it), so a slow or dead receiver never blocks or fails a run; failures go to stderr.

use std::cell::Cell;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::trace::v1::ResourceSpans;
use prost::Message;

use super::config::Endpoint;

/// Batches waiting for the exporter thread; one more is dropped (and counted).
const QUEUE: usize = 256;
/// Spans per request at most.
const MAX_BATCH: usize = 512;
/// How long the thread gathers more batches before sending what it has.
const LINGER: Duration = Duration::from_millis(300);
/// Attempts per request (the first plus retries).
const ATTEMPTS: u32 = 4;
/// Longest wait between attempts, whatever `Retry-After` says.
const MAX_BACKOFF: Duration = Duration::from_secs(4);

/// What happened to the spans handed to the exporter.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Delivery {
    /// Spans handed over.
    pub spans: u64,
    /// Spans the receiver accepted.
    pub exported: u64,
    /// Spans lost: rejected, undeliverable after the retries, dropped on a full queue, or still
    /// unsent when the run ended.
    pub failed: u64,
}

/// How often [`Exporter::settle`] tries again to queue its request while the queue is full.
const SETTLE_POLL: Duration = Duration::from_millis(10);

/// Why [`Exporter::settle`] stopped waiting before the thread said it was done.
enum Gone {
    /// The limit passed.
    Late,
    /// The thread is gone.
    Ended,
}

enum Msg {
    Spans(ResourceSpans),
    Settle(SyncSender<()>),
}

/// Handle of the exporter thread.
pub struct Exporter {
    tx: Option<SyncSender<Msg>>,
    stats: Arc<Mutex<Delivery>>,
    endpoint: Endpoint,
    queue_full_said: bool,
}

impl Exporter {
    /// Start the exporter thread for `endpoint`.
    pub fn start(endpoint: Endpoint) -> Self {
        let (tx, rx) = mpsc::sync_channel(QUEUE);
        let stats = Arc::new(Mutex::new(Delivery::default()));
        let worker = Worker {
            endpoint: endpoint.clone(),
            stats: Arc::clone(&stats),
            failing: Cell::new(false),
            lost_quietly: Cell::new(0),
            agent: ureq::Agent::config_builder()
                .timeout_global(Some(endpoint.timeout))
                .http_status_as_error(false)
                .user_agent(concat!("boo-normalize/", env!("CARGO_PKG_VERSION")))
                .build()
                .into(),
        };
        let spawned = thread::Builder::new()
            .name("otlp-export".into())
            .spawn(move || worker.run(rx));
        if let Err(e) = &spawned {
            eprintln!("boo-normalize: otlp: cannot start the exporter thread: {e}");
        }
        Exporter {
            tx: spawned.is_ok().then_some(tx),
            stats,
            endpoint,
            queue_full_said: false,
        }
    }

    /// Hand `spans` (one resource's worth) to the thread without waiting.
    pub fn send(&mut self, spans: ResourceSpans) {
        let n = count(&spans);
        if n == 0 {
            return;
        }
        self.add(|d| d.spans += n);
        let Some(tx) = &self.tx else {
            self.add(|d| d.failed += n);
            return;
        };
        match tx.try_send(Msg::Spans(spans)) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => {
                if !std::mem::replace(&mut self.queue_full_said, true) {
                    eprintln!(
                        "boo-normalize: otlp: {}: the receiver is not keeping up; dropping spans",
                        self.endpoint.url
                    );
                }
                self.add(|d| d.failed += n);
            }
            Err(TrySendError::Disconnected(_)) => self.add(|d| d.failed += n),
        }
    }

    /// Wait up to `limit` for everything handed over so far to be delivered or given up, and
    /// return the counts; spans still in flight after `limit` count as failed. The wait is
    /// `limit` at most whatever the thread is doing: a full queue behind a request that takes
    /// its time is not waited out, and a thread that ended (it panicked) is not waited for, its
    /// spans counted as lost.
    pub fn settle(&mut self, limit: Duration) -> Delivery {
        let Some(tx) = &self.tx else {
            return self.delivery();
        };
        let until = Instant::now() + limit;
        let (done_tx, done_rx) = mpsc::sync_channel(1);
        let mut msg = Msg::Settle(done_tx);
        let why = loop {
            match tx.try_send(msg) {
                Ok(()) => {
                    let left = until.saturating_duration_since(Instant::now());
                    match done_rx.recv_timeout(left) {
                        Ok(()) => return self.delivery(),
                        Err(RecvTimeoutError::Timeout) => break Gone::Late,
                        Err(RecvTimeoutError::Disconnected) => break Gone::Ended,
                    }
                }
                Err(TrySendError::Full(m)) if Instant::now() < until => {
                    msg = m;
                    thread::sleep(SETTLE_POLL);
                }
                Err(TrySendError::Full(_)) => break Gone::Late,
                Err(TrySendError::Disconnected(_)) => break Gone::Ended,
            }
        };
        let d = self.delivery();
        let left = d.spans.saturating_sub(d.exported + d.failed);
        if left > 0 {
            let what = match why {
                Gone::Late => format!("still unsent after {}s; giving up on them", limit.as_secs()),
                Gone::Ended => "lost: the exporter thread ended early".to_owned(),
            };
            eprintln!(
                "boo-normalize: otlp: {}: {left} spans {what}",
                self.endpoint.url
            );
        }
        self.add(|d| d.failed += left);
        self.tx = None; // the thread may be stuck in a request; leave it behind
        self.delivery()
    }

    /// How long the end of a run waits for delivery: a few request timeouts, so a dead receiver
    /// costs seconds, not a hang.
    pub fn limit(&self) -> Duration {
        self.endpoint.timeout * 3 + Duration::from_secs(1)
    }

    /// The counts so far.
    pub fn delivery(&self) -> Delivery {
        *self.stats.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn add(&self, f: impl FnOnce(&mut Delivery)) {
        f(&mut self.stats.lock().unwrap_or_else(|e| e.into_inner()));
    }
}

impl Drop for Exporter {
    /// Deliver what was handed over (quick when the run already settled; bounded otherwise).
    fn drop(&mut self) {
        if self.tx.is_some() {
            let limit = self.limit().min(Duration::from_secs(5));
            self.settle(limit);
        }
    }
}

fn count(rs: &ResourceSpans) -> u64 {
    rs.scope_spans.iter().map(|s| s.spans.len() as u64).sum()
}

struct Worker {
    endpoint: Endpoint,
    stats: Arc<Mutex<Delivery>>,
    agent: ureq::Agent,
    /// Since the last failure said on stderr: further batches are tried once and their losses
    /// counted quietly (one line per outage, not one per batch).
    failing: Cell<bool>,
    lost_quietly: Cell<u64>,
}

impl Worker {
    fn run(self, rx: Receiver<Msg>) {
        let mut batch: Vec<ResourceSpans> = Vec::new();
        loop {
            let msg = if batch.is_empty() {
                match rx.recv() {
                    Ok(m) => m,
                    Err(_) => return,
                }
            } else {
                match rx.recv_timeout(LINGER) {
                    Ok(m) => m,
                    Err(RecvTimeoutError::Timeout) => {
                        self.export(std::mem::take(&mut batch));
                        continue;
                    }
                    Err(RecvTimeoutError::Disconnected) => {
                        self.export(std::mem::take(&mut batch));
                        return;
                    }
                }
            };
            match msg {
                Msg::Spans(rs) => {
                    batch.push(rs);
                    if batch.iter().map(count).sum::<u64>() >= MAX_BATCH as u64 {
                        self.export(std::mem::take(&mut batch));
                    }
                }
                Msg::Settle(done) => {
                    self.export(std::mem::take(&mut batch));
                    self.say_quiet_losses("");
                    let _ = done.send(());
                }
            }
        }
    }

    fn export(&self, batch: Vec<ResourceSpans>) {
        if batch.is_empty() {
            return;
        }
        let n: u64 = batch.iter().map(count).sum();
        let req = ExportTraceServiceRequest {
            resource_spans: batch,
        };
        let (body, ctype) = if self.endpoint.json {
            match serde_json::to_vec(&req) {
                Ok(b) => (b, "application/json"),
                Err(e) => return self.fail(n, &format!("cannot encode the request: {e}")),
            }
        } else {
            (req.encode_to_vec(), "application/x-protobuf")
        };
        match self.post(&body, ctype) {
            Ok(rejected) => {
                if self.failing.replace(false) {
                    self.say_quiet_losses("delivering again; ");
                }
                let mut d = self.stats.lock().unwrap_or_else(|e| e.into_inner());
                d.exported += n.saturating_sub(rejected);
                d.failed += rejected.min(n);
            }
            Err(cause) => self.fail(n, &cause),
        }
    }

    fn fail(&self, n: u64, cause: &str) {
        if self.failing.replace(true) {
            self.lost_quietly.set(self.lost_quietly.get() + n);
        } else {
            eprintln!(
                "boo-normalize: otlp: {}: {cause} ({n} spans lost)",
                self.endpoint.url
            );
        }
        self.stats.lock().unwrap_or_else(|e| e.into_inner()).failed += n;
    }

    /// Say how many spans were lost without a word since the last message, if any.
    fn say_quiet_losses(&self, prefix: &str) {
        let n = self.lost_quietly.replace(0);
        if n > 0 {
            eprintln!(
                "boo-normalize: otlp: {}: {prefix}{n} more spans lost",
                self.endpoint.url
            );
        }
    }

    /// POST `body` with retries; Ok(spans the receiver rejected) or Err(why it failed).
    fn post(&self, body: &[u8], ctype: &str) -> Result<u64, String> {
        let started = Instant::now();
        let mut last = String::new();
        // While the receiver is known to fail, one attempt per batch: retries would only back
        // the queue up.
        let attempts = if self.failing.get() { 1 } else { ATTEMPTS };
        for attempt in 0..attempts {
            if attempt > 0 {
                let backoff = Duration::from_millis(250 << (attempt - 1));
                thread::sleep(backoff.min(MAX_BACKOFF));
            }
            let mut req = self
                .agent
                .post(&self.endpoint.url)
                .header("content-type", ctype);
            for (k, v) in &self.endpoint.headers {
                req = req.header(k, v);
            }
            match req.send(body) {
                Ok(mut resp) => {
                    let status = resp.status().as_u16();
                    let retry_after = resp
                        .headers()
                        .get("retry-after")
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| v.trim().parse::<u64>().ok());
                    let reply = resp
                        .body_mut()
                        .with_config()
                        .limit(1 << 20)
                        .read_to_vec()
                        .unwrap_or_default();
                    if (200..300).contains(&status) {
                        return Ok(self.rejected(&reply, ctype));
                    }
                    last = format!("HTTP {status}{}", excerpt(&reply));
                    if !matches!(status, 429 | 502 | 503 | 504) {
                        return Err(last);
                    }
                    if let Some(s) = retry_after {
                        thread::sleep(Duration::from_secs(s).min(MAX_BACKOFF));
                    }
                }
                Err(e) => last = e.to_string(),
            }
            if started.elapsed() > self.endpoint.timeout * 2 {
                break;
            }
        }
        Err(format!("{last} (gave up after retrying)"))
    }

    /// Spans a 2xx reply says it rejected (OTLP partial success), reported on stderr.
    fn rejected(&self, reply: &[u8], ctype: &str) -> u64 {
        if reply.is_empty() {
            return 0;
        }
        let resp = if ctype == "application/json" {
            serde_json::from_slice::<ExportTraceServiceResponse>(reply).ok()
        } else {
            ExportTraceServiceResponse::decode(reply).ok()
        };
        let Some(p) = resp.and_then(|r| r.partial_success) else {
            return 0;
        };
        let n = u64::try_from(p.rejected_spans).unwrap_or(0);
        if n > 0 || !p.error_message.is_empty() {
            eprintln!(
                "boo-normalize: otlp: {}: the receiver rejected {n} spans: {}",
                self.endpoint.url, p.error_message
            );
        }
        n
    }
}

/// `: <first 200 bytes of the reply>` for error messages (empty when there is no body).
fn excerpt(reply: &[u8]) -> String {
    let s = String::from_utf8_lossy(&reply[..reply.len().min(200)]);
    let s = s.trim();
    if s.is_empty() {
        String::new()
    } else {
        format!(": {}", s.replace('\n', " "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry_proto::tonic::trace::v1::{ScopeSpans, Span};

    fn one_span() -> ResourceSpans {
        ResourceSpans {
            scope_spans: vec![ScopeSpans {
                spans: vec![Span::default()],
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    #[test]
    fn settle_keeps_its_limit_behind_a_full_queue_and_a_receiver_that_never_answers() {
        // A receiver that takes connections into its backlog and never answers: the thread's
        // first request waits for its (long) timeout while the queue fills up behind it.
        let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let mut x = Exporter::start(Endpoint {
            url: format!("http://{}/v1/traces", silent.local_addr().unwrap()),
            headers: Vec::new(),
            json: false,
            timeout: Duration::from_secs(60),
        });
        for _ in 0..QUEUE + 50 {
            x.send(one_span());
            // Let the thread take the first batch into its request before the queue fills.
            thread::sleep(Duration::from_micros(50));
        }
        let t0 = Instant::now();
        let d = x.settle(Duration::from_secs(1));
        let took = t0.elapsed();
        assert!(took < Duration::from_secs(3), "settle took {took:?}");
        assert_eq!(d.spans, (QUEUE + 50) as u64);
        assert_eq!(d.exported, 0);
        assert_eq!(d.failed, d.spans, "every span is accounted for as lost");
        drop(silent);
    }
}
