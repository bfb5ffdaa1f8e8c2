//! Progress for people and for logs: a bar on a terminal, a log line every ten seconds
//! otherwise. Workers only bump atomic counters; one thread reports.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

#[derive(Default)]
pub struct Counters {
    pub input_bytes: AtomicU64,
    pub pages: AtomicU64,
    pub html_bytes: AtomicU64,
    /// The stage after reading, when a job has several (set by worker 0; empty while reading).
    pub stage: std::sync::Mutex<&'static str>,
    done: AtomicBool,
}

impl Counters {
    pub fn set_stage(&self, stage: &'static str) {
        if let Ok(mut current) = self.stage.lock() {
            *current = stage;
        }
    }
}

pub struct Reporter {
    counters: Arc<Counters>,
    thread: Option<JoinHandle<()>>,
}

impl Reporter {
    pub fn start(total_bytes: u64) -> Self {
        let counters = Arc::new(Counters::default());
        let shared = Arc::clone(&counters);
        let thread = std::thread::spawn(move || report(&shared, total_bytes));
        Reporter {
            counters,
            thread: Some(thread),
        }
    }

    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    /// The counters, for workers that outlive a borrow of the reporter.
    pub fn counters_arc(&self) -> Arc<Counters> {
        Arc::clone(&self.counters)
    }
}

impl Drop for Reporter {
    fn drop(&mut self) {
        self.counters.done.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            // Wake it from its wait so the command does not linger after the work is done.
            thread.thread().unpark();
            let _ = thread.join();
        }
    }
}

fn report(counters: &Counters, total_bytes: u64) {
    let start = Instant::now();
    let terminal = std::io::stderr().is_terminal();
    let bar = terminal.then(|| {
        let bar = ProgressBar::new(total_bytes);
        bar.set_style(
            ProgressStyle::with_template(
                "{elapsed_precise} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} {msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        bar
    });
    let tick = if terminal {
        Duration::from_millis(200)
    } else {
        Duration::from_secs(10)
    };
    let mut last_log = Instant::now();
    while !counters.done.load(Ordering::Relaxed) {
        std::thread::park_timeout(Duration::from_millis(100));
        if last_log.elapsed() < tick {
            continue;
        }
        last_log = Instant::now();
        let bytes = counters.input_bytes.load(Ordering::Relaxed);
        let pages = counters.pages.load(Ordering::Relaxed);
        let html = counters.html_bytes.load(Ordering::Relaxed);
        let seconds = start.elapsed().as_secs_f64().max(1e-9);
        let stage = counters.stage.lock().map_or("", |s| *s);
        let rates = if stage.is_empty() {
            format!(
                "{pages} pages, {:.0} pages/s, {:.1} MB/s HTML",
                pages as f64 / seconds,
                html as f64 / seconds / 1e6
            )
        } else {
            format!("{pages} pages read; {stage}")
        };
        match &bar {
            Some(bar) => {
                bar.set_position(bytes);
                bar.set_message(rates);
            }
            None => tracing::info!(
                "read {:.1}/{:.1} MB; {rates}",
                bytes as f64 / 1e6,
                total_bytes as f64 / 1e6
            ),
        }
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
}
