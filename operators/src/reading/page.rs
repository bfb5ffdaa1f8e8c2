//! From a WARC record to a decoded HTML page, or a reason why not.
//!
//! Every record ends as exactly one [`Outcome`]: a page, skipped with a reason, or an error
//! with a kind. Nothing is dropped silently; counting outcomes accounts for every record.

use std::borrow::Cow;
use std::fmt;

use encoding_rs::Encoding;
use serde::{Deserialize, Serialize};

use crate::reading::charset::{self, CharsetSource};
use crate::reading::http;
use crate::reading::warc::{Limits, Position, ReadErrorKind, Record, RecordType};

/// A decoded HTML page, ready to parse.
#[derive(Debug)]
pub struct Page {
    pub url: String,
    /// Lower-case host of `url` (empty when the URL has none).
    pub host: String,
    pub position: Position,
    pub record_id: Option<String>,
    pub fetch_date: Option<String>,
    /// HTTP status; `None` for `resource` records, which have no HTTP envelope.
    pub http_status: Option<u16>,
    pub mime_type: String,
    pub encoding: &'static Encoding,
    pub charset_source: CharsetSource,
    /// True when some bytes were malformed for the chosen encoding.
    pub charset_errors: bool,
    /// The body size in bytes after undoing transfer and content encodings.
    pub body_bytes: usize,
    pub html: String,
    /// Why the page is incomplete, if it is.
    pub truncated: Option<Truncation>,
}

/// The site a page belongs to: its host without a leading `www.`, because `www.example.com`
/// and `example.com` serve one site with one template.
pub fn site_of(host: &str) -> &str {
    host.strip_prefix("www.").unwrap_or(host)
}

/// Why a page's HTML is not the whole page.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Truncation {
    /// The crawler says so (`WARC-Truncated`).
    Crawler,
    /// The record block was longer than `max_page_bytes`.
    RecordLimit,
    /// The decoded body was longer than `max_page_bytes`.
    BodyLimit,
    /// Chunked transfer encoding stopped before its last chunk.
    Chunking,
    /// The DOM was deeper than `max_dom_depth`; parsing stopped there.
    DomDepth,
}

impl Truncation {
    pub fn as_str(self) -> &'static str {
        match self {
            Truncation::Crawler => "crawler",
            Truncation::RecordLimit => "record_limit",
            Truncation::BodyLimit => "body_limit",
            Truncation::Chunking => "chunking",
            Truncation::DomDepth => "dom_depth",
        }
    }
}

/// Why a well-formed record is not a page.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    /// `request`, `metadata`, `warcinfo`, `revisit`, `conversion`, `continuation`, unknown.
    RecordType,
    /// A response that is not 200.
    HttpStatus,
    /// Not HTML by Content-Type or sniffing.
    NotHtml,
    /// Declared HTML but the bytes are binary (an image or archive served as text/html).
    Binary,
    EmptyBody,
    UnsupportedContentEncoding,
}

impl SkipReason {
    pub fn as_str(self) -> &'static str {
        match self {
            SkipReason::RecordType => "record_type",
            SkipReason::HttpStatus => "http_status",
            SkipReason::NotHtml => "not_html",
            SkipReason::Binary => "binary",
            SkipReason::EmptyBody => "empty_body",
            SkipReason::UnsupportedContentEncoding => "unsupported_content_encoding",
        }
    }
}

/// Why a record (or a stretch of input) could not be read or decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    Read(ReadErrorKind),
    /// The HTTP status line or headers are unreadable.
    BadHttp,
    /// Content-Encoding data is corrupt.
    BadContentEncoding,
    /// Content-Encoding would expand past the decompression-ratio bound.
    DecompressionLimit,
}

impl ErrorKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Read(kind) => kind.as_str(),
            ErrorKind::BadHttp => "bad_http",
            ErrorKind::BadContentEncoding => "bad_content_encoding",
            ErrorKind::DecompressionLimit => "decompression_limit",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What became of one record.
#[derive(Debug)]
pub enum Outcome {
    Page(Box<Page>),
    Skipped { reason: SkipReason, detail: String },
    Error { kind: ErrorKind, detail: String },
}

/// What the HTTP envelope said, whatever became of the record (for counting by status and type).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Envelope {
    pub http_status: Option<u16>,
    pub mime_type: Option<String>,
}

/// Decides what a record is and, for HTML pages, decodes it.
pub fn to_page(record: Record, limits: &Limits) -> (Envelope, Outcome) {
    let mut envelope = Envelope::default();
    let outcome = classify(record, limits, &mut envelope);
    (envelope, outcome)
}

fn classify(record: Record, limits: &Limits, envelope: &mut Envelope) -> Outcome {
    let head = &record.head;
    let skipped = |reason, detail: String| Outcome::Skipped { reason, detail };
    match head.record_type {
        RecordType::Response => {
            if !head
                .content_type
                .as_deref()
                .is_none_or(|t| http::mime_type(t).starts_with("application/http"))
            {
                return skipped(
                    SkipReason::NotHtml,
                    format!("response block is {:?}, not HTTP", head.content_type),
                );
            }
            let (http_head, body) = match http::parse_response(&record.block) {
                Ok(parsed) => parsed,
                Err(detail) => {
                    return Outcome::Error {
                        kind: ErrorKind::BadHttp,
                        detail,
                    }
                }
            };
            envelope.http_status = Some(http_head.status);
            envelope.mime_type = http_head.content_type.as_deref().map(http::mime_type);
            if http_head.status != 200 {
                return skipped(SkipReason::HttpStatus, http_head.status.to_string());
            }
            let mime = http_head
                .content_type
                .as_deref()
                .map(http::mime_type)
                .or_else(|| head.identified_payload_type.as_deref().map(http::mime_type));
            if !may_be_html(mime.as_deref()) {
                return skipped(SkipReason::NotHtml, mime.unwrap_or_default());
            }
            let mut body = Cow::Borrowed(body);
            let mut chunking_cut = false;
            if http_head
                .transfer_encoding
                .as_deref()
                .is_some_and(|t| t.contains("chunked"))
            {
                if let Some((dechunked, cut)) = http::dechunk(&body) {
                    body = Cow::Owned(dechunked);
                    chunking_cut = cut;
                }
            }
            let decoded = match http::decode_content(
                http_head.content_encoding.as_deref(),
                &body,
                limits.max_page_bytes,
                limits.max_decompression_ratio,
            ) {
                Ok(decoded) => decoded,
                Err(http::DecodeError::Unsupported(name)) => {
                    return skipped(SkipReason::UnsupportedContentEncoding, name)
                }
                Err(http::DecodeError::Corrupt(detail)) => {
                    return Outcome::Error {
                        kind: ErrorKind::BadContentEncoding,
                        detail,
                    }
                }
                Err(http::DecodeError::RatioExceeded { input, limit }) => {
                    return Outcome::Error {
                        kind: ErrorKind::DecompressionLimit,
                        detail: format!("{input} encoded bytes expand past {limit}"),
                    }
                }
            };
            let truncated = decoded.truncated;
            let body = decoded.body;
            let truncation = if truncated {
                Some(Truncation::BodyLimit)
            } else if chunking_cut {
                Some(Truncation::Chunking)
            } else {
                None
            };
            decode_page(
                &record,
                Some(http_head.status),
                http_head.content_type,
                body,
                truncation,
            )
        }
        RecordType::Resource => {
            let mime = head.content_type.as_deref().map(http::mime_type);
            envelope.mime_type = mime.clone();
            if !may_be_html(mime.as_deref()) {
                return skipped(SkipReason::NotHtml, mime.unwrap_or_default());
            }
            decode_page(
                &record,
                None,
                head.content_type.clone(),
                Cow::Borrowed(&record.block[..]),
                None,
            )
        }
        ref other => skipped(SkipReason::RecordType, other.to_string()),
    }
}

fn decode_page(
    record: &Record,
    http_status: Option<u16>,
    content_type: Option<String>,
    body: Cow<'_, [u8]>,
    truncation: Option<Truncation>,
) -> Outcome {
    // `body` is borrowed from the record unless decoding made it new; either way the text is
    // made by one pass over it in `charset::decode` (a copy when the bytes are UTF-8).
    let head = &record.head;
    let mime = content_type
        .as_deref()
        .map(http::mime_type)
        .unwrap_or_default();
    if body.iter().all(u8::is_ascii_whitespace) {
        return Outcome::Skipped {
            reason: SkipReason::EmptyBody,
            detail: String::new(),
        };
    }
    if !is_html_mime(&mime) && !sniffs_as_html(&body) {
        return Outcome::Skipped {
            reason: SkipReason::NotHtml,
            detail: if mime.is_empty() {
                "undeclared, not sniffed as HTML".into()
            } else {
                mime
            },
        };
    }
    if looks_binary(&body) {
        return Outcome::Skipped {
            reason: SkipReason::Binary,
            detail: mime,
        };
    }
    let url = head.target_uri.clone().unwrap_or_default();
    let host = url::Url::parse(&url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_ascii_lowercase))
        .unwrap_or_default();
    let tld = host.rsplit('.').next().filter(|t| !t.is_empty());
    let decoded = charset::decode(
        &body,
        content_type.as_deref().and_then(http::charset_param),
        tld,
    );
    let truncated = if head.warc_truncated.is_some() {
        Some(Truncation::Crawler)
    } else if record.block_truncated {
        Some(Truncation::RecordLimit)
    } else {
        truncation
    };
    Outcome::Page(Box::new(Page {
        url,
        host,
        position: head.position,
        record_id: head.record_id.clone(),
        fetch_date: head.date.clone(),
        http_status,
        mime_type: if mime.is_empty() {
            "text/html".to_string()
        } else {
            mime
        },
        encoding: decoded.encoding,
        charset_source: decoded.source,
        charset_errors: decoded.had_errors,
        body_bytes: body.len(),
        html: decoded.text,
        truncated,
    }))
}

fn is_html_mime(mime: &str) -> bool {
    matches!(mime, "text/html" | "application/xhtml+xml")
}

/// HTML by declaration, or undeclared/generic and therefore worth sniffing.
fn may_be_html(mime: Option<&str>) -> bool {
    match mime {
        None => true,
        Some(m) => {
            is_html_mime(m)
                || matches!(
                    m,
                    "" | "application/octet-stream"
                        | "unknown/unknown"
                        | "application/unknown"
                        | "*/*"
                )
        }
    }
}

/// The WHATWG MIME sniffing patterns for HTML: after leading whitespace, one of these tags
/// followed by a space or `>`.
pub fn sniffs_as_html(body: &[u8]) -> bool {
    const TAGS: [&[u8]; 17] = [
        b"<!doctype html",
        b"<html",
        b"<head",
        b"<script",
        b"<iframe",
        b"<h1",
        b"<div",
        b"<font",
        b"<table",
        b"<a",
        b"<style",
        b"<title",
        b"<b",
        b"<body",
        b"<br",
        b"<p",
        b"<!--",
    ];
    let start = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
    let start = &start[start.iter().take_while(|b| b.is_ascii_whitespace()).count()..];
    TAGS.iter().any(|tag| {
        start.len() > tag.len()
            && start[..tag.len()].eq_ignore_ascii_case(tag)
            && matches!(start[tag.len()], b' ' | b'>' | b'\t' | b'\n' | b'\r')
    })
}

/// The WHATWG "binary data byte" test over the first 1 KiB. UTF-16 pages (with a byte-order
/// mark) are full of NUL bytes yet text.
pub fn looks_binary(body: &[u8]) -> bool {
    if body.starts_with(b"\xFF\xFE") || body.starts_with(b"\xFE\xFF") {
        return false;
    }
    body.iter()
        .take(1024)
        .any(|&b| matches!(b, 0x00..=0x08 | 0x0B | 0x0E..=0x1A | 0x1C..=0x1F))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffing() {
        assert!(sniffs_as_html(b"  \n<!DOCTYPE html><html>"));
        assert!(sniffs_as_html(b"<HTML>"));
        assert!(!sniffs_as_html(b"{\"json\": 1}"));
        assert!(!sniffs_as_html(b"<abbr>"));
        assert!(looks_binary(b"\x89PNG\r\n\x1a\n\0\0"));
        assert!(!looks_binary(b"<html>\n\t<p>caf\xc3\xa9</p>"));
    }
}
