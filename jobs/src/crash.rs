//! Failing fast: a panic outside the per-record work stops the whole job at once.
//!
//! The work on one record runs inside `stencil_operators::contain`, and its panics become
//! that record's outcome. Any other panic — in a worker's own code, a dataflow, a table
//! writer, or timely's network threads when a peer process is lost — means the job cannot
//! finish correctly. Left alone, it would hang instead: a panicking timely worker leaves the
//! others parked at the next barrier forever, and a process whose peer died waits for
//! progress that never comes. So the panic hook installed here prints where every worker of
//! this process was (worker, stage, file, offset of the last record read) and ends the
//! process with a non-zero status; its peer processes then lose their connection to it,
//! panic in timely's network threads, and end the same way within moments.
//!
//! `STENCIL_INJECT_PANIC` makes a panic happen on purpose, for the tests that check this (and
//! that per-page panics are contained): see [`Fault`]. `STENCIL_INJECT_KILL` makes the process
//! kill itself with SIGKILL at a named point, for the tests of `--resume`: see [`kill_point`].

use std::cell::RefCell;
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use stencil_operators::contain;
use stencil_operators::inventory::Inventory;

/// The exit status of a job stopped by a panic (Rust's own for an uncaught panic).
const EXIT_PANICKED: i32 = 101;

/// Where one worker is, for the message that stops the job.
pub struct Whereabouts {
    worker: usize,
    stage: Mutex<&'static str>,
    file: Mutex<Option<Arc<str>>>,
    /// Offset of the last record read; `u64::MAX` before the first.
    offset: AtomicU64,
}

impl Whereabouts {
    /// Registers worker `worker` of this process (its global index) and makes it this
    /// thread's, so a panic here names it.
    pub fn register(worker: usize) -> Arc<Whereabouts> {
        let here = Arc::new(Whereabouts {
            worker,
            stage: Mutex::new("starting"),
            file: Mutex::new(None),
            offset: AtomicU64::new(u64::MAX),
        });
        if let Ok(mut all) = registry().lock() {
            all.retain(|w| w.worker != worker);
            all.push(here.clone());
        }
        HERE.with(|cell| cell.replace(Some(here.clone())));
        here
    }

    pub fn stage(&self, stage: &'static str) {
        *self.stage.lock().unwrap_or_else(|e| e.into_inner()) = stage;
        kill_point_named("stage", stage);
    }

    pub fn file(&self, file: &str) {
        *self.file.lock().unwrap_or_else(|e| e.into_inner()) = Some(Arc::from(file));
        self.offset.store(u64::MAX, Ordering::Relaxed);
    }

    /// Called for every record: one relaxed store.
    pub fn offset(&self, offset: u64) {
        self.offset.store(offset, Ordering::Relaxed);
    }

    fn describe(&self) -> String {
        let stage = *self.stage.lock().unwrap_or_else(|e| e.into_inner());
        let file = self.file.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let offset = self.offset.load(Ordering::Relaxed);
        let place = match (file, offset) {
            (None, _) => "before its first file".to_string(),
            (Some(file), u64::MAX) => format!("file {file}, before its first record"),
            (Some(file), offset) => format!("file {file}, last record read at offset {offset}"),
        };
        format!("worker {} (stage: {stage}; {place})", self.worker)
    }
}

fn registry() -> &'static Mutex<Vec<Arc<Whereabouts>>> {
    static ALL: OnceLock<Mutex<Vec<Arc<Whereabouts>>>> = OnceLock::new();
    ALL.get_or_init(Mutex::default)
}

thread_local! {
    static HERE: RefCell<Option<Arc<Whereabouts>>> = const { RefCell::new(None) };
}

/// Installs the hook: contained panics are only noted (their record reports them); any other
/// panic prints what it said and where every worker was, and ends the process.
pub fn install_hook() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if contain::capture(info) {
            return;
        }
        default(info);
        let message = contain::payload_text(info.payload());
        let this = HERE.with(|cell| cell.try_borrow().ok().and_then(|h| h.clone()));
        let mut text = match &this {
            Some(here) => format!("stencil: {} failed; stopping the job", here.describe()),
            None if message.starts_with("timely communication error") => {
                "stencil: lost the connection to a peer process (it stopped or its machine \
                 failed); stopping the job"
                    .to_string()
            }
            None => format!(
                "stencil: thread '{}' failed; stopping the job",
                std::thread::current().name().unwrap_or("unnamed")
            ),
        };
        if let Ok(all) = registry().try_lock() {
            for other in all.iter() {
                if this.as_ref().is_none_or(|t| !Arc::ptr_eq(t, other)) {
                    text.push_str(&format!("\n  meanwhile {}", other.describe()));
                }
            }
        }
        let mut stderr = std::io::stderr().lock();
        let _ = writeln!(stderr, "{text}");
        let _ = stderr.flush();
        // No unwinding and no exit handlers: other threads may hold locks the handlers
        // need, and nothing half-written is worth saving (tables are renamed into place only
        // when complete, and run.json is not written).
        // SAFETY: _exit ends the process; it takes no pointers.
        unsafe { libc::_exit(EXIT_PANICKED) };
    }));
}

/// Warns, at the end of a job, of the pages whose work panicked and was contained: each is
/// a bug worth reporting, though it cost only that page. `where_` says where they are listed.
pub fn warn_of_contained_panics(inventory: &Inventory, where_: &str) {
    if let Some(panics) = inventory.errors_by_kind.get(contain::Panic::KIND) {
        eprintln!(
            "warning: {panics} pages failed with a panic: a bug in Stencil, contained to those \
             pages; {where_}. Please report them."
        );
    }
}

/// A panic to inject, from `STENCIL_INJECT_PANIC` (tests only):
/// - `worker:N` — worker N (global index) panics outside the per-record work (in `run` and
///   `apply` when its first record has been read, in `site` and `train` as it opens its first
///   file): the job must stop, naming it;
/// - `page:TEXT:STAGE` — the work on every page whose URL contains TEXT panics when it
///   reaches STAGE (`hashes`, `labels`, `features`, `scoring`, `smoothing`, `cleaned text`):
///   the page must become an `error` of kind `panic` and the job go on.
#[derive(Debug, PartialEq, Eq)]
pub enum Fault {
    Worker(usize),
    Page { url_part: String, stage: String },
}

impl Fault {
    fn parse(text: &str) -> Option<Fault> {
        if let Some(worker) = text.strip_prefix("worker:") {
            return worker.parse().ok().map(Fault::Worker);
        }
        let rest = text.strip_prefix("page:")?;
        let (url_part, stage) = rest.rsplit_once(':')?;
        Some(Fault::Page {
            url_part: url_part.to_string(),
            stage: stage.to_string(),
        })
    }
}

fn fault() -> Option<&'static Fault> {
    static FAULT: OnceLock<Option<Fault>> = OnceLock::new();
    FAULT
        .get_or_init(|| {
            std::env::var("STENCIL_INJECT_PANIC")
                .ok()
                .and_then(|text| Fault::parse(&text))
        })
        .as_ref()
}

/// Panics if an injected fault says worker `worker` should (outside contained work).
pub fn inject_worker_fault(worker: usize) {
    if fault() == Some(&Fault::Worker(worker)) {
        panic!("injected panic in worker {worker} (STENCIL_INJECT_PANIC)");
    }
}

/// Enters `stage` of the contained work on the page at `url`, and panics there if an injected
/// fault says so.
pub fn enter(stage: &'static str, url: &str) {
    contain::enter(stage);
    if let Some(Fault::Page {
        url_part,
        stage: faulty,
    }) = fault()
    {
        if faulty == stage && url.contains(url_part.as_str()) {
            panic!("injected panic in {stage} (STENCIL_INJECT_PANIC)");
        }
    }
}

/// A point to be killed at, from `STENCIL_INJECT_KILL=POINT[:N]` (tests only): the N-th time
/// (1 by default) any thread of this process reaches POINT.
#[derive(Debug, PartialEq, Eq)]
struct KillAt {
    point: String,
    nth: u64,
}

impl KillAt {
    fn parse(text: &str) -> Option<KillAt> {
        let (point, nth) = match text.rsplit_once(':') {
            Some((point, n)) if n.parse::<u64>().is_ok() => (point, n.parse().ok()?),
            _ => (text, 1),
        };
        (!point.is_empty()).then(|| KillAt {
            point: point.to_string(),
            nth,
        })
    }
}

fn kill_at() -> Option<&'static KillAt> {
    static KILL_AT: OnceLock<Option<KillAt>> = OnceLock::new();
    KILL_AT
        .get_or_init(|| {
            std::env::var("STENCIL_INJECT_KILL")
                .ok()
                .and_then(|text| KillAt::parse(&text))
        })
        .as_ref()
}

/// Kills this process with SIGKILL — no unwinding, no exit handlers, nothing flushed: what a
/// preempted node or `kill -9` does — if `STENCIL_INJECT_KILL` names `point` and this is the
/// N-th time the process reaches it. The points:
/// - `record`: a record of `run` or `apply` is about to be handled;
/// - `part-closed`: a part file is complete under its temporary name, not yet renamed;
/// - `part-renamed`: a part file has just been given its final name;
/// - `entry`: `apply` has just written a file share's `_done` entry;
/// - `stage:NAME`: a worker starts stage NAME (`site statistics`, `labels`, `training`,
///   `scoring, smoothing and cleaning pages`, `hosts and tables`, `done`);
/// - `run-json`: every table is written and `run.json` is next;
/// - `state-staged`: `run --state` has renamed tonight's generation, `CURRENT` is next;
/// - `state-committed`: `CURRENT` names tonight's generation, the older ones are still there.
///
/// Costs one load and compare when the variable is unset.
pub fn kill_point(point: &str) {
    if let Some(at) = kill_at() {
        if at.point == point {
            count_and_kill(at);
        }
    }
}

/// [`kill_point`] for `KIND:NAME`.
fn kill_point_named(kind: &str, name: &str) {
    if let Some(at) = kill_at() {
        let matches = at
            .point
            .strip_prefix(kind)
            .and_then(|rest| rest.strip_prefix(':'))
            == Some(name);
        if matches {
            count_and_kill(at);
        }
    }
}

fn count_and_kill(at: &KillAt) {
    static REACHED: AtomicU64 = AtomicU64::new(0);
    if REACHED.fetch_add(1, Ordering::SeqCst) + 1 == at.nth {
        let _ = writeln!(
            std::io::stderr(),
            "stencil: killing this process at {}:{} (STENCIL_INJECT_KILL)",
            at.point,
            at.nth
        );
        // SAFETY: kill takes no pointers; the signal cannot be caught, so the call does not
        // return.
        unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
    }
}

#[cfg(test)]
mod tests {
    use super::{Fault, KillAt};

    #[test]
    fn kill_points_parse() {
        let at = |point: &str, nth| {
            Some(KillAt {
                point: point.into(),
                nth,
            })
        };
        assert_eq!(KillAt::parse("record:40"), at("record", 40));
        assert_eq!(KillAt::parse("entry"), at("entry", 1));
        assert_eq!(KillAt::parse("stage:labels"), at("stage:labels", 1));
        assert_eq!(KillAt::parse("stage:labels:2"), at("stage:labels", 2));
        assert_eq!(KillAt::parse(""), None);
    }

    #[test]
    fn faults_parse() {
        assert_eq!(Fault::parse("worker:1"), Some(Fault::Worker(1)));
        assert_eq!(
            Fault::parse("page:http://x/a:cleaned text"),
            Some(Fault::Page {
                url_part: "http://x/a".into(),
                stage: "cleaned text".into()
            })
        );
        assert_eq!(Fault::parse("worker:x"), None);
        assert_eq!(Fault::parse("nothing"), None);
    }
}
