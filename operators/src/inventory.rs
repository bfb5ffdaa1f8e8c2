//! Counting what became of every record, in a form that merges across files and workers.
//!
//! The invariant tests rely on: every framed record and every read error is exactly one
//! outcome (`page`, `skipped`, `error`), so `outcomes` sums to `records + read_errors`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::contain::{self, contain, Panic};
use crate::dom::Dom;
use crate::reading::page::{Envelope, Outcome, Page, Truncation};
use crate::reading::warc::{FileSummary, ReadError, Record};

/// Counts over one or more WARC files. Maps are ordered so output is deterministic.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Inventory {
    pub files: u64,
    /// Bytes of the input files as stored (compressed for `.warc.gz`).
    pub input_bytes: u64,
    /// Bytes of WARC data after gzip.
    pub warc_bytes: u64,
    /// Records framed (well-formed WARC headers).
    pub records: u64,
    /// Stretches of input that yielded no record (corrupt gzip, broken headers, garbage).
    pub read_errors: u64,
    pub by_record_type: BTreeMap<String, u64>,
    /// HTTP status of `response` records whose HTTP header could be read.
    pub by_http_status: BTreeMap<String, u64>,
    /// MIME type of responses and resources (HTTP Content-Type, or WARC's for resources).
    pub by_mime_type: BTreeMap<String, u64>,
    /// `page`, `skipped`, `error`.
    pub by_outcome: BTreeMap<String, u64>,
    pub skipped_by_reason: BTreeMap<String, u64>,
    pub errors_by_kind: BTreeMap<String, u64>,
    /// Pages by encoding name.
    pub by_charset: BTreeMap<String, u64>,
    pub by_charset_source: BTreeMap<String, u64>,
    pub truncated_by_reason: BTreeMap<String, u64>,
    pub pages: u64,
    /// Bytes of HTML parsed (page bodies after transfer/content decoding).
    pub html_bytes: u64,
    pub dom_nodes: u64,
}

fn bump(map: &mut BTreeMap<String, u64>, key: &str) {
    *map.entry(key.to_string()).or_default() += 1;
}

impl Inventory {
    /// Counts a framed record before it is classified.
    pub fn add_record(&mut self, record: &Record) {
        self.records += 1;
        bump(
            &mut self.by_record_type,
            &record.head.record_type.to_string(),
        );
    }

    /// Counts a stretch of input that yielded no record.
    pub fn add_read_error(&mut self, error: &ReadError) {
        self.read_errors += 1;
        bump(&mut self.by_outcome, "error");
        bump(&mut self.errors_by_kind, error.kind.as_str());
    }

    /// Counts a framed record whose decoding or parsing panicked (`contain`): an error of
    /// kind `panic`.
    pub fn add_panic(&mut self) {
        self.add_panics(1);
    }

    /// Moves `n` pages counted as parsed to the errors of kind `panic`: a later stage
    /// panicked on them, so they have no row but in `records`. They stay counted in `pages`
    /// and `html_bytes`, which measure what was parsed.
    pub fn pages_panicked(&mut self, n: u64) {
        if n == 0 {
            return;
        }
        if let Some(pages) = self.by_outcome.get_mut("page") {
            *pages = pages.saturating_sub(n);
        }
        self.add_panics(n);
    }

    fn add_panics(&mut self, n: u64) {
        *self.by_outcome.entry("error".to_string()).or_default() += n;
        *self
            .errors_by_kind
            .entry(Panic::KIND.to_string())
            .or_default() += n;
    }

    /// Counts the outcome of a framed record.
    pub fn add_outcome(&mut self, envelope: &Envelope, outcome: &Outcome) {
        if let Some(status) = envelope.http_status {
            bump(&mut self.by_http_status, &status.to_string());
        }
        if let Some(mime) = &envelope.mime_type {
            bump(
                &mut self.by_mime_type,
                if mime.is_empty() { "(none)" } else { mime },
            );
        }
        match outcome {
            Outcome::Page(page) => {
                bump(&mut self.by_outcome, "page");
                self.add_page(page);
            }
            Outcome::Skipped { reason, .. } => {
                bump(&mut self.by_outcome, "skipped");
                bump(&mut self.skipped_by_reason, reason.as_str());
            }
            Outcome::Error { kind, .. } => {
                bump(&mut self.by_outcome, "error");
                bump(&mut self.errors_by_kind, kind.as_str());
            }
        }
    }

    fn add_page(&mut self, page: &Page) {
        self.pages += 1;
        self.html_bytes += page.body_bytes as u64;
        bump(&mut self.by_charset, page.encoding.name());
        bump(&mut self.by_charset_source, page.charset_source.as_str());
        if let Some(truncation) = page.truncated {
            bump(&mut self.truncated_by_reason, truncation.as_str());
        }
    }

    /// Counts a parsed page's DOM (and a depth-limit cut, which only parsing can see).
    pub fn add_dom(&mut self, page: &Page, dom: &Dom) {
        self.dom_nodes += dom.len() as u64;
        if dom.depth_limited() && page.truncated.is_none() {
            bump(&mut self.truncated_by_reason, Truncation::DomDepth.as_str());
        }
    }

    pub fn add_file(&mut self, summary: &FileSummary) {
        self.files += 1;
        self.input_bytes += summary.compressed_bytes;
        self.warc_bytes += summary.uncompressed_bytes;
    }

    /// Adds another inventory's counts to this one.
    pub fn merge(&mut self, other: &Inventory) {
        self.files += other.files;
        self.input_bytes += other.input_bytes;
        self.warc_bytes += other.warc_bytes;
        self.records += other.records;
        self.read_errors += other.read_errors;
        self.pages += other.pages;
        self.html_bytes += other.html_bytes;
        self.dom_nodes += other.dom_nodes;
        for (mine, theirs) in [
            (&mut self.by_record_type, &other.by_record_type),
            (&mut self.by_http_status, &other.by_http_status),
            (&mut self.by_mime_type, &other.by_mime_type),
            (&mut self.by_outcome, &other.by_outcome),
            (&mut self.skipped_by_reason, &other.skipped_by_reason),
            (&mut self.errors_by_kind, &other.errors_by_kind),
            (&mut self.by_charset, &other.by_charset),
            (&mut self.by_charset_source, &other.by_charset_source),
            (&mut self.truncated_by_reason, &other.truncated_by_reason),
        ] {
            for (key, count) in theirs {
                *mine.entry(key.clone()).or_default() += count;
            }
        }
    }

    /// Total outcomes; equals `records + read_errors` when every record was accounted for.
    pub fn outcomes(&self) -> u64 {
        self.by_outcome.values().sum()
    }
}

/// How far a file has been read, for progress reporting.
#[derive(Clone, Copy, Debug, Default)]
pub struct Progress {
    /// Input offset reached (compressed bytes for `.warc.gz`).
    pub offset: u64,
    pub pages: u64,
    pub html_bytes: u64,
}

/// Reads one WARC file, accounts for every record (and unreadable stretch) in `inventory`, and
/// hands each page to `visit` with its DOM. `progress` is called after each record. This is the
/// one read loop every job shares, so that no job can lose a record silently. Only the records
/// in `share` are read ([`Share::WHOLE`]: all of them).
pub fn for_each_page(
    path: &std::path::Path,
    limits: &crate::reading::warc::Limits,
    share: Share,
    inventory: &mut Inventory,
    visit: impl FnMut(&Page, &Dom),
    progress: impl FnMut(Progress),
) -> std::io::Result<()> {
    read_accounted(path, limits, share, inventory, Some(visit), progress)
}

/// Reads one WARC file and counts what it holds. With `parse`, every page goes through the
/// whole per-page pipeline of the foundation — DOM and subtree hashes — so that inspect's
/// throughput is the foundation's and any input that would break a later stage shows up here
/// first; the hashes themselves are not kept.
pub fn inspect_file(
    path: &std::path::Path,
    limits: &crate::reading::warc::Limits,
    parse: bool,
    progress: impl FnMut(Progress),
) -> std::io::Result<Inventory> {
    let mut inventory = Inventory::default();
    let hash = |page: &Page, dom: &Dom| {
        std::hint::black_box(crate::dom::subtree::summarize(dom, &page.host));
    };
    read_accounted(
        path,
        limits,
        Share::WHOLE,
        &mut inventory,
        parse.then_some(hash),
        progress,
    )?;
    Ok(inventory)
}

/// What became of one record, or of one unreadable stretch of input: a row of the `records`
/// table, so a job's output can account for everything it read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordEntry {
    /// Where the record (or the stretch) starts: the gzip member's offset in the file, and the
    /// offset inside the decompressed member.
    pub offset: u64,
    pub offset_in_member: u64,
    /// `WARC-Type`; `None` for a stretch whose header could not be read.
    pub record_type: Option<String>,
    pub target_uri: Option<String>,
    pub record_id: Option<String>,
    pub http_status: Option<u16>,
    pub mime_type: Option<String>,
    /// `page`, `skipped` or `error`.
    pub outcome: &'static str,
    /// The skip reason or error kind; `None` for pages.
    pub reason: Option<&'static str>,
    pub detail: Option<String>,
}

/// The part of one file's records a reader takes: the records and unreadable stretches whose
/// ordinal in the file (counting both, from 0) is `part` modulo `parts`. Several workers
/// split a file this way when there are fewer files than workers: each decompresses the
/// whole file (cheap beside parsing: docs/benchmarks.md) and parses only its part, and every
/// record is still accounted for exactly once. Part 0 also counts the file itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Share {
    pub part: u64,
    pub parts: u64,
}

impl Share {
    /// Every record of the file.
    pub const WHOLE: Share = Share { part: 0, parts: 1 };

    fn takes(&self, ordinal: u64) -> bool {
        ordinal % self.parts.max(1) == self.part
    }
}

/// Reads one WARC file and hands `visit` the [`RecordEntry`] of every record in `share`, in
/// file order, with the page and its DOM when the record is an HTML page. Every such record
/// and unreadable stretch is also counted in `inventory`, so the entries and the counts agree
/// by construction. `progress` sees every record's offset, shared or not.
pub fn for_each_record(
    path: &std::path::Path,
    limits: &crate::reading::warc::Limits,
    share: Share,
    inventory: &mut Inventory,
    mut visit: impl FnMut(RecordEntry, Option<(Box<Page>, Dom)>),
    progress: impl FnMut(Progress),
) -> std::io::Result<()> {
    read_records(
        path,
        limits,
        share,
        inventory,
        true,
        progress,
        |entry, page| {
            visit(
                entry,
                page.and_then(|(page, dom)| dom.map(|dom| (page, dom))),
            );
            // The caller contains its own per-page work and accounts for it.
            false
        },
    )
}

/// The read loop; pages are parsed only when there is a `visit`.
fn read_accounted(
    path: &std::path::Path,
    limits: &crate::reading::warc::Limits,
    share: Share,
    inventory: &mut Inventory,
    mut visit: Option<impl FnMut(&Page, &Dom)>,
    progress: impl FnMut(Progress),
) -> std::io::Result<()> {
    let parse = visit.is_some();
    read_records(
        path,
        limits,
        share,
        inventory,
        parse,
        progress,
        |_, page| {
            let (Some(visit), Some((page, Some(dom)))) = (visit.as_mut(), page) else {
                return false;
            };
            // Counted as an error of kind `panic`; these jobs keep no `records` rows.
            contain("page work", || visit(&page, &dom)).is_err()
        },
    )
}

/// The one read loop: frames, classifies, counts and (with `parse`) parses every record.
fn read_records(
    path: &std::path::Path,
    limits: &crate::reading::warc::Limits,
    share: Share,
    inventory: &mut Inventory,
    parse: bool,
    mut progress: impl FnMut(Progress),
    // Answers whether the work on the page it was given panicked (it is then an error).
    mut on_record: impl FnMut(RecordEntry, Option<(Box<Page>, Option<Dom>)>) -> bool,
) -> std::io::Result<()> {
    use crate::reading::warc::ReadItem;
    let mut done = Progress::default();
    let mut ordinal = 0u64;
    let summary = crate::reading::warc::read_file(path, limits, |item| {
        ordinal += 1;
        done.offset = match &item {
            ReadItem::Record(record) => record.head.position.offset,
            ReadItem::Error(error) => error.position.offset,
        };
        if !share.takes(ordinal - 1) {
            progress(done);
            return;
        }
        match item {
            ReadItem::Record(record) => {
                inventory.add_record(&record);
                let head = &record.head;
                let mut entry = RecordEntry {
                    offset: head.position.offset,
                    offset_in_member: head.position.offset_in_member,
                    record_type: Some(head.record_type.to_string()),
                    target_uri: head.target_uri.clone(),
                    record_id: head.record_id.clone(),
                    http_status: None,
                    mime_type: None,
                    outcome: "page",
                    reason: None,
                    detail: None,
                };
                // Decoding and parsing are the record's own work: a panic there is its
                // outcome, and the file's next record is read as usual.
                let work = contain("decode", || {
                    let (envelope, outcome) = crate::reading::page::to_page(record, limits);
                    let dom = match &outcome {
                        Outcome::Page(page) if parse => {
                            contain::enter("parse");
                            #[cfg(test)]
                            tests::fault(&page.url);
                            Some(crate::dom::parse(&page.html, limits.max_dom_depth))
                        }
                        _ => None,
                    };
                    (envelope, outcome, dom)
                });
                let (envelope, outcome, dom) = match work {
                    Ok(done) => done,
                    Err(panic) => {
                        inventory.add_panic();
                        entry.outcome = "error";
                        entry.reason = Some(Panic::KIND);
                        entry.detail = Some(panic.detail());
                        let _ = on_record(entry, None);
                        progress(done);
                        return;
                    }
                };
                inventory.add_outcome(&envelope, &outcome);
                entry.http_status = envelope.http_status;
                entry.mime_type = envelope.mime_type;
                let page = match outcome {
                    Outcome::Page(page) => {
                        done.pages += 1;
                        done.html_bytes += page.body_bytes as u64;
                        if let Some(dom) = &dom {
                            inventory.add_dom(&page, dom);
                        }
                        Some((page, dom))
                    }
                    Outcome::Skipped { reason, detail } => {
                        entry.outcome = "skipped";
                        entry.reason = Some(reason.as_str());
                        entry.detail = Some(detail);
                        None
                    }
                    Outcome::Error { kind, detail } => {
                        entry.outcome = "error";
                        entry.reason = Some(kind.as_str());
                        entry.detail = Some(detail);
                        None
                    }
                };
                if on_record(entry, page) {
                    inventory.pages_panicked(1);
                }
            }
            ReadItem::Error(error) => {
                inventory.add_read_error(&error);
                let head = error.head.as_deref();
                let _ = on_record(
                    RecordEntry {
                        offset: error.position.offset,
                        offset_in_member: error.position.offset_in_member,
                        record_type: head.map(|h| h.record_type.to_string()),
                        target_uri: head.and_then(|h| h.target_uri.clone()),
                        record_id: head.and_then(|h| h.record_id.clone()),
                        http_status: None,
                        mime_type: None,
                        outcome: "error",
                        reason: Some(error.kind.as_str()),
                        detail: Some(error.detail),
                    },
                    None,
                );
            }
        }
        progress(done);
    })?;
    if share.part == 0 {
        inventory.add_file(&summary);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reading::warc::write::{http_response, NewRecord, WarcWriter};

    /// Parsing panics on pages whose URL contains this (test builds only).
    pub(super) fn fault(url: &str) {
        if url.contains("/poison") {
            panic!("injected fault");
        }
    }

    #[test]
    fn a_panicking_page_is_its_records_outcome_and_reading_goes_on() {
        let path = std::env::temp_dir().join(format!("contain-{}.warc.gz", std::process::id()));
        let mut writer = WarcWriter::new(Vec::new(), true);
        for url in [
            "http://a.example/1",
            "http://a.example/poison",
            "http://a.example/3",
        ] {
            let block = http_response(
                200,
                &[("Content-Type", "text/html")],
                b"<html><body><p>text</p></body></html>",
            );
            writer
                .write(&NewRecord {
                    record_type: "response",
                    target_uri: Some(url),
                    date: "2026-11-24T00:00:00Z",
                    content_type: "application/http; msgtype=response",
                    block: &block,
                })
                .unwrap();
        }
        std::fs::write(&path, writer.into_inner()).unwrap();
        let mut inventory = Inventory::default();
        let mut entries = Vec::new();
        let read = for_each_record(
            &path,
            &crate::reading::warc::Limits::default(),
            Share::WHOLE,
            &mut inventory,
            |entry, page| entries.push((entry, page.is_some())),
            |_| {},
        );
        std::fs::remove_file(&path).unwrap();
        read.unwrap();
        let outcomes: Vec<_> = entries
            .iter()
            .map(|(e, page)| (e.outcome, e.reason, *page))
            .collect();
        assert_eq!(
            outcomes,
            [
                ("page", None, true),
                ("error", Some("panic"), false),
                ("page", None, true)
            ]
        );
        let detail = entries[1].0.detail.as_deref().unwrap();
        assert!(detail.starts_with("parse: injected fault"), "{detail}");
        assert_eq!(inventory.by_outcome["page"], 2);
        assert_eq!(inventory.errors_by_kind["panic"], 1);
        assert_eq!(
            inventory.outcomes(),
            inventory.records + inventory.read_errors
        );

        inventory.pages_panicked(1);
        assert_eq!(inventory.by_outcome["page"], 1);
        assert_eq!(inventory.errors_by_kind["panic"], 2);
        assert_eq!(
            inventory.outcomes(),
            inventory.records + inventory.read_errors
        );
    }
}
