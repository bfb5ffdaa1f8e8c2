//! WARC reading that accounts for every byte of its input.
//!
//! Why our own framing instead of `warc::WarcReader`: we need the byte offset of every record
//! (the gzip member's offset for `.warc.gz`, so a record can be fetched again by offset the way
//! Common Crawl indexes do), we must resume after a corrupt member or garbage between records
//! instead of giving up on the file, and we must bound memory per record. The `warc` crate
//! still parses each header block ([`warc::parser::headers`]) and names the record types.
//!
//! A file is a sequence of *segments*: the whole file for plain `.warc`, one gzip member each
//! for `.warc.gz` (one member per record as Common Crawl writes, or one member for the whole
//! file). Records are read sequentially inside a segment. Every outcome — a record, or an error
//! with its kind and offset — is passed to a callback, in file order.

mod framing;
pub mod write;

use std::fmt;
use std::fs::File;
use std::io::{self, BufReader, Read, Seek};
use std::path::Path;

use serde::{Deserialize, Serialize};

pub use warc::RecordType;

/// Bounds that keep one hostile record from taking a worker's memory or time.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Limits {
    /// The longest page body kept, in bytes; longer bodies are truncated and flagged. The rest
    /// of the record is read past without being stored.
    pub max_page_bytes: usize,
    /// Content-Encoding output may be at most this many times its input (and never more than
    /// `max_page_bytes`); beyond it the record is an error of kind `decompression_limit`.
    pub max_decompression_ratio: usize,
    /// Parsing stops (page flagged truncated) once the open-element depth passes this. The HTML
    /// tree builder scans its stack of open elements on many tags, so unbounded depth turns a
    /// 100,000-deep page into minutes of work; browsers cap depth in the same spirit.
    pub max_dom_depth: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_page_bytes: 16 << 20,
            max_decompression_ratio: 100,
            max_dom_depth: 4096,
        }
    }
}

/// Whether a file is gzip-compressed, decided by its magic bytes, not its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Compression {
    None,
    Gzip,
}

/// Where a record starts. For gzip files `offset` is the compressed offset of the member that
/// holds the record and `offset_in_member` the uncompressed offset inside that member (0 for
/// Common Crawl files, which write one member per record). For plain files `offset` is the
/// record's byte offset and `offset_in_member` is 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Position {
    pub offset: u64,
    pub offset_in_member: u64,
}

/// The WARC header fields later stages use.
#[derive(Clone, Debug, PartialEq)]
pub struct RecordHead {
    pub position: Position,
    pub version: String,
    pub record_type: RecordType,
    pub target_uri: Option<String>,
    pub date: Option<String>,
    pub record_id: Option<String>,
    pub content_type: Option<String>,
    /// `Content-Length` as declared.
    pub content_length: u64,
    /// The `WARC-Truncated` reason the crawler recorded, if any.
    pub warc_truncated: Option<String>,
    /// Common Crawl's `WARC-Identified-Payload-Type` (detected MIME type).
    pub identified_payload_type: Option<String>,
}

/// A complete record: header fields and (possibly truncated) block.
#[derive(Clone, Debug)]
pub struct Record {
    pub head: RecordHead,
    /// The record block, at most `Limits::max_page_bytes` long.
    pub block: Vec<u8>,
    /// True when the block was longer than the limit and only its start was kept.
    pub block_truncated: bool,
}

/// Why a stretch of input did not yield a record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReadErrorKind {
    /// A gzip member ended before its trailer (the file was cut).
    GzipTruncated,
    /// A gzip member's header, deflate data or checksum is invalid.
    GzipCorrupt,
    /// A header block that is not a WARC header (bad version line, no Content-Length, too long).
    BadHeader,
    /// The input ended inside a record's block.
    TruncatedRecord,
    /// Bytes between records that are not a record; reading resumed after them.
    Garbage,
    /// The operating system failed to read the file.
    Io,
}

impl ReadErrorKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ReadErrorKind::GzipTruncated => "gzip_truncated",
            ReadErrorKind::GzipCorrupt => "gzip_corrupt",
            ReadErrorKind::BadHeader => "bad_header",
            ReadErrorKind::TruncatedRecord => "truncated_record",
            ReadErrorKind::Garbage => "garbage",
            ReadErrorKind::Io => "io",
        }
    }
}

impl fmt::Display for ReadErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A stretch of input that is not a usable record.
#[derive(Clone, Debug)]
pub struct ReadError {
    pub position: Position,
    pub kind: ReadErrorKind,
    /// The header of the record the error hit, when it had been read.
    pub head: Option<Box<RecordHead>>,
    /// Human-readable detail (byte counts, the decoder's message).
    pub detail: String,
}

/// One outcome of reading, in file order.
#[derive(Debug)]
pub enum ReadItem {
    Record(Record),
    Error(ReadError),
}

/// What reading a whole file amounted to.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileSummary {
    pub compressed_bytes: u64,
    pub uncompressed_bytes: u64,
    pub records: u64,
    pub errors: u64,
}

/// Reads every record of the WARC file at `path`, calling `emit` for each record or error.
///
/// Only failing to open the file is an `Err`; everything that goes wrong later becomes a
/// [`ReadItem::Error`] and reading goes on.
pub fn read_file(
    path: &Path,
    limits: &Limits,
    emit: impl FnMut(ReadItem),
) -> io::Result<FileSummary> {
    let file = File::open(path)?;
    read(BufReader::with_capacity(1 << 18, file), limits, emit)
}

/// Reads every record of a WARC stream (plain or gzip, detected from the first bytes).
pub fn read<R: Read + Seek>(
    input: BufReader<R>,
    limits: &Limits,
    emit: impl FnMut(ReadItem),
) -> io::Result<FileSummary> {
    framing::read_all(input, limits, emit)
}

/// Reads the WARC file at `path` from byte `offset` on (a record's [`Position::offset`], as the
/// `pages` table keeps it; 0 for the whole file) and returns the first record `wanted` accepts,
/// or `None` when the file ends first. Reading stops at that record: a record is fetched by
/// offset without reading the rest of the file. Its position is the one reading the whole file
/// gives it.
pub fn find_from(
    path: &Path,
    offset: u64,
    limits: &Limits,
    mut wanted: impl FnMut(&Record) -> bool,
) -> io::Result<Option<Record>> {
    let mut file = File::open(path)?;
    file.seek(io::SeekFrom::Start(offset))?;
    let window = Window {
        inner: file,
        base: offset,
        done: std::rc::Rc::new(std::cell::Cell::new(false)),
    };
    let done = window.done.clone();
    let mut found = None;
    read(BufReader::with_capacity(1 << 16, window), limits, |item| {
        if let (ReadItem::Record(mut record), None) = (item, &found) {
            if wanted(&record) {
                record.head.position.offset += offset;
                found = Some(record);
                done.set(true);
            }
        }
    })?;
    Ok(found)
}

/// A file read from `base` on, as if it started there, that ends once `done` is set.
struct Window {
    inner: File,
    base: u64,
    done: std::rc::Rc<std::cell::Cell<bool>>,
}

impl Read for Window {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.done.get() {
            return Ok(0);
        }
        self.inner.read(buf)
    }
}

impl Seek for Window {
    fn seek(&mut self, pos: io::SeekFrom) -> io::Result<u64> {
        let pos = match pos {
            io::SeekFrom::Start(p) => io::SeekFrom::Start(self.base.saturating_add(p)),
            other => other,
        };
        Ok(self.inner.seek(pos)?.saturating_sub(self.base))
    }
}

/// Detects the compression of a stream from its first two bytes.
pub fn detect_compression(first_bytes: &[u8]) -> Compression {
    if first_bytes.starts_with(&[0x1f, 0x8b]) {
        Compression::Gzip
    } else {
        Compression::None
    }
}

#[cfg(test)]
mod tests {
    use super::write::{http_response, NewRecord, WarcWriter};
    use super::*;

    /// Three responses written plain or gzipped, and the offset each starts at.
    fn three_records(gzip: bool, name: &str) -> (std::path::PathBuf, Vec<u64>) {
        let mut writer = WarcWriter::new(Vec::new(), gzip);
        let offsets = (0..3)
            .map(|k| {
                let body = format!("<p>page {k}</p>");
                let block = http_response(200, &[("Content-Type", "text/html")], body.as_bytes());
                let uri = format!("https://example.com/{k}");
                writer
                    .write(&NewRecord {
                        record_type: "response",
                        target_uri: Some(&uri),
                        date: "2024-01-01T00:00:00Z",
                        content_type: "application/http; msgtype=response",
                        block: &block,
                    })
                    .unwrap()
            })
            .collect();
        let path = std::env::temp_dir().join(format!("stencil-find-{}-{name}", std::process::id()));
        std::fs::write(&path, writer.into_inner()).unwrap();
        (path, offsets)
    }

    #[test]
    fn find_from_fetches_a_record_by_offset_or_by_uri() {
        for gzip in [false, true] {
            let (path, offsets) = three_records(gzip, if gzip { "gz" } else { "plain" });
            let limits = Limits::default();
            for (k, &offset) in offsets.iter().enumerate() {
                let record = find_from(&path, offset, &limits, |_| true)
                    .unwrap()
                    .unwrap();
                let uri = format!("https://example.com/{k}");
                assert_eq!(record.head.target_uri.as_deref(), Some(uri.as_str()));
                assert_eq!(record.head.position.offset, offset, "gzip {gzip}");
                // From the start, by its URI: the same record, at the same place.
                let by_uri = find_from(&path, 0, &limits, |r| {
                    r.head.target_uri.as_deref() == Some(uri.as_str())
                })
                .unwrap()
                .unwrap();
                assert_eq!(by_uri.head, record.head);
            }
            let none = find_from(&path, 0, &limits, |r| {
                r.head.target_uri.as_deref() == Some("https://example.com/9")
            })
            .unwrap();
            assert!(none.is_none());
            std::fs::remove_file(&path).unwrap();
        }
    }
}
