//! Keeping a failure on one record to that record.
//!
//! A crawl holds pages no test foresaw, and a bug one of them triggers must cost that page,
//! not the worker: a worker that dies takes its share of the crawl with it, and in a timely
//! computation the other workers then wait for it forever. So the work on one record runs
//! inside [`contain`], which turns a panic into a [`Panic`] value — the stage it happened in
//! and its message — that the caller records as that record's outcome (`error`, kind
//! `panic`) before going on with the next record.
//!
//! Only the per-record work is contained. A panic anywhere else (reading a file, a dataflow,
//! writing a table) is a bug in the job itself, and the binary's panic hook stops the whole
//! job at once instead (`jobs/src/crash.rs`). That hook asks [`capture`] first: a panic inside
//! `contain` is only noted, with its source location, for `contain` to return.
//!
//! Cost: `catch_unwind` is a call through a landing pad, free unless a panic unwinds; the
//! stage markers are thread-local stores. Measured in docs/benchmarks.md.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe, PanicHookInfo};

thread_local! {
    /// How many `contain` calls this thread is inside.
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    /// The stage the innermost contained work last announced.
    static STAGE: Cell<&'static str> = const { Cell::new("") };
    /// The message and location of a contained panic, noted by the hook during unwinding.
    static CAUGHT: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// A panic in contained work: the stage it happened in and what it said.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Panic {
    pub stage: &'static str,
    /// The panic's message and, when a hook noted it, its source location.
    pub message: String,
}

impl Panic {
    /// The error kind a record that panicked is counted under.
    pub const KIND: &'static str = "panic";

    /// The record's `detail`: the stage, then the message.
    pub fn detail(&self) -> String {
        format!("{}: {}", self.stage, self.message)
    }
}

/// Runs `work`, the work on one record, starting in `stage`; a panic inside it comes back as
/// `Err` instead of unwinding further. `work` may announce later stages with [`enter`], so
/// the error names the stage that failed. Whatever `work` left half-done is the caller's to
/// drop: it must not reuse state that `work` was mutating.
pub fn contain<T>(stage: &'static str, work: impl FnOnce() -> T) -> Result<T, Panic> {
    let outer = STAGE.replace(stage);
    DEPTH.set(DEPTH.get() + 1);
    let result = panic::catch_unwind(AssertUnwindSafe(work));
    DEPTH.set(DEPTH.get() - 1);
    let failed_in = STAGE.replace(outer);
    result.map_err(|payload| {
        let message = CAUGHT
            .take()
            .unwrap_or_else(|| payload_text(payload.as_ref()).to_string());
        // The payload's own drop may panic; a leak is the safer loss.
        std::mem::forget(payload);
        Panic {
            stage: failed_in,
            message,
        }
    })
}

/// Announces that contained work on this thread has moved on to `stage` (no effect outside
/// [`contain`]).
pub fn enter(stage: &'static str) {
    if DEPTH.get() > 0 {
        STAGE.set(stage);
    }
}

/// Whether this thread is inside [`contain`].
pub fn is_contained() -> bool {
    DEPTH.get() > 0
}

/// For a panic hook: if the panic happened inside [`contain`], notes its message and location
/// for `contain` to return and answers `true` (the hook should print nothing: the record's
/// outcome reports it). Answers `false` for any other panic.
pub fn capture(info: &PanicHookInfo<'_>) -> bool {
    if !is_contained() {
        return false;
    }
    let message = payload_text(info.payload());
    let noted = match info.location() {
        Some(at) => format!("{message} (at {}:{})", at.file(), at.line()),
        None => message.to_string(),
    };
    CAUGHT.set(Some(noted));
    true
}

/// A panic payload's message: `panic!` gives a `&str` or a `String`.
pub fn payload_text(payload: &(dyn Any + Send)) -> &str {
    if let Some(text) = payload.downcast_ref::<&str>() {
        text
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text
    } else {
        "(a panic without a message)"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_the_stage_and_its_message() {
        let result: Result<(), Panic> = contain("parse", || {
            enter("hashes");
            let text = "日本語";
            let _ = &text[..4];
        });
        let error = result.unwrap_err();
        assert_eq!(error.stage, "hashes");
        assert!(error.message.contains("byte index 4"), "{}", error.message);
        assert!(error.detail().starts_with("hashes: "));
        assert!(!is_contained());
    }

    #[test]
    fn work_that_finishes_is_returned_and_stages_nest() {
        assert_eq!(contain("decode", || 7), Ok(7));
        let inner = contain("outer", || {
            let inner = contain("inner", || panic!("boom {}", 1));
            enter("after");
            inner
        });
        let inner = inner.unwrap().unwrap_err();
        assert_eq!((inner.stage, inner.message.as_str()), ("inner", "boom 1"));
        // Outside any contained work, `enter` changes nothing anyone reads.
        enter("nowhere");
        assert!(!is_contained());
    }
}
