//! A deterministic mutation engine for the robustness soak (`jobs/tests/soak.rs`,
//! `docs/robustness.md`): it turns real inputs into hostile ones.
//!
//! Pure: every function takes bytes and a seeded [`Rng`] and returns bytes; no I/O, no clock,
//! no global state, so the same seed always gives the same input on every machine. The
//! generator is the synthetic crawl's splitmix64 (statistical quality is beside the point).
//!
//! Three levels, each a list of named kinds (the names are what the soak reports):
//! - [`ByteKind`]: on a whole file as stored (`.warc.gz`, `.warc`, `.html.gz`): bit flips,
//!   truncation, duplicated spans, inserted garbage, and damage to single gzip members.
//! - [`WarcKind`]: on uncompressed WARC records: wrong `Content-Length`s, broken header lines,
//!   missing CRLFs.
//! - [`PageKind`]: on the HTML (and URL, and declared charset) of a response, before it is
//!   written back as a Common-Crawl-style WARC (one gzip member per record,
//!   `stencil_operators::reading::warc::write`).
//!
//! The generators at the bottom ([`page_warc`], [`real_warc`], [`record_warc`],
//! [`html_page`]) compose 1–3 mutations per input and list what they applied.
//!
//! Nothing here may panic on any input: mutations compose, so each one must accept whatever
//! the previous one left (empty files, gzip that does not decode, pages without tags).

use std::io::{Read, Write};
use std::ops::Range;

use stencil_operators::reading::warc::write::{http_response, NewRecord, WarcWriter};
use stencil_operators::synth::SplitMix;

// ---------------------------------------------------------------------------------------------
// The generator

/// The crawl generator's splitmix64 (`stencil_operators::synth::SplitMix`), with the draws
/// mutations need: every seed (0 included) gives a good stream.
pub struct Rng(SplitMix);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(SplitMix(seed))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        self.0.below(n)
    }

    /// A number in `lo..=hi` (`lo` when the range is empty).
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        if hi <= lo {
            lo
        } else {
            lo + self.below(hi - lo + 1)
        }
    }

    /// True with probability `num / den`.
    pub fn chance(&mut self, num: u64, den: u64) -> bool {
        den > 0 && self.next_u64() % den < num
    }

    /// One of `items` (which must not be empty; every caller passes a constant list).
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// Sizes spread over orders of magnitude: mostly small, sometimes large.
    pub fn size(&mut self, max: usize) -> usize {
        let bits = self.below(usize::BITS as usize - max.max(1).leading_zeros() as usize + 1);
        let cap = (1usize << bits).min(max.max(1));
        self.range(1, cap)
    }

    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next_u64() as u8).collect()
    }
}

/// The seed of iteration `index` of a soak seeded with `base`: each iteration can be
/// reproduced alone.
pub fn derive_seed(base: u64, index: u64) -> u64 {
    Rng::new(base ^ index.wrapping_mul(0xD1B5_4A32_D192_ED03)).next_u64()
}

// ---------------------------------------------------------------------------------------------
// Byte level

/// Mutations of a whole file as stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ByteKind {
    /// A few random bits flipped anywhere.
    BitFlips,
    /// The file cut at a random point.
    Truncate,
    /// A span of the file copied to another place.
    DuplicateSpan,
    /// Random bytes or nasty patterns (CRLF runs, `WARC/1.0`, gzip magic) inserted.
    InsertGarbage,
    /// Bytes flipped inside one gzip member's deflate data.
    GzipFlipDeflate,
    /// One gzip member cut short; the next member follows at once.
    GzipCutMember,
    /// Garbage (random bytes, a lone gzip magic, a gzip member of non-WARC text, an empty
    /// member) between two gzip members.
    GzipGarbageBetween,
    /// One gzip member's header damaged (flags, method, magic).
    GzipHeader,
}

impl ByteKind {
    pub const ALL: [ByteKind; 8] = [
        ByteKind::BitFlips,
        ByteKind::Truncate,
        ByteKind::DuplicateSpan,
        ByteKind::InsertGarbage,
        ByteKind::GzipFlipDeflate,
        ByteKind::GzipCutMember,
        ByteKind::GzipGarbageBetween,
        ByteKind::GzipHeader,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ByteKind::BitFlips => "bit_flips",
            ByteKind::Truncate => "truncate",
            ByteKind::DuplicateSpan => "duplicate_span",
            ByteKind::InsertGarbage => "insert_garbage",
            ByteKind::GzipFlipDeflate => "gzip_flip_deflate",
            ByteKind::GzipCutMember => "gzip_cut_member",
            ByteKind::GzipGarbageBetween => "gzip_garbage_between",
            ByteKind::GzipHeader => "gzip_header",
        }
    }

    pub fn is_gzip(self) -> bool {
        matches!(
            self,
            ByteKind::GzipFlipDeflate
                | ByteKind::GzipCutMember
                | ByteKind::GzipGarbageBetween
                | ByteKind::GzipHeader
        )
    }
}

/// The byte ranges of the gzip members at the start of `data`, in order, as far as they
/// decode; whatever follows the last good member is not listed.
pub fn gzip_members(data: &[u8]) -> Vec<Range<usize>> {
    let mut members = Vec::new();
    let mut start = 0;
    let mut sink = [0u8; 64 * 1024];
    while start + 18 <= data.len() && data[start..].starts_with(&[0x1f, 0x8b, 0x08]) {
        let mut decoder = flate2::bufread::GzDecoder::new(&data[start..]);
        let ok = loop {
            match decoder.read(&mut sink) {
                Ok(0) => break true,
                Ok(_) => {}
                Err(_) => break false,
            }
        };
        if !ok {
            break;
        }
        let left = decoder.get_ref().len();
        let end = data.len() - left;
        if end <= start {
            break;
        }
        members.push(start..end);
        start = end;
    }
    members
}

/// The length of the gzip header at the start of `member`, if it is one.
fn gzip_header_len(member: &[u8]) -> Option<usize> {
    if member.len() < 10 || member[0] != 0x1f || member[1] != 0x8b {
        return None;
    }
    let flags = member[3];
    let mut at = 10;
    if flags & 4 != 0 {
        let extra = *member.get(at)? as usize | (*member.get(at + 1)? as usize) << 8;
        at += 2 + extra;
    }
    for flag in [8u8, 16] {
        if flags & flag != 0 {
            at += member.get(at..)?.iter().position(|&b| b == 0)? + 1;
        }
    }
    if flags & 2 != 0 {
        at += 2;
    }
    (at <= member.len()).then_some(at)
}

/// The concatenated uncompressed bytes of `members` of `data`.
pub fn decompress_members(data: &[u8], members: &[Range<usize>]) -> Vec<u8> {
    let mut out = Vec::new();
    for member in members {
        let Some(bytes) = data.get(member.clone()) else {
            continue;
        };
        let mut decoder = flate2::read::GzDecoder::new(bytes);
        let _ = decoder.read_to_end(&mut out);
    }
    out
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    // Writing to memory cannot fail.
    let _ = encoder.write_all(bytes);
    encoder.finish().unwrap_or_default()
}

fn splice(data: &mut Vec<u8>, at: usize, insert: &[u8]) {
    let at = at.min(data.len());
    data.splice(at..at, insert.iter().copied());
}

/// Inserted by `InsertGarbage` and `GzipGarbageBetween` besides random bytes.
const GARBAGE_PATTERNS: &[&[u8]] = &[
    b"\r\n\r\n\r\n\r\n",
    b"WARC/1.0\r\n",
    b"WARC/1.1\r\nWARC-Type: response\r\nContent-Length: 100\r\n\r\n",
    b"WARC/1.0\r\nContent-Length: 99999999999\r\n\r\n",
    &[0x1f, 0x8b],
    &[0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0, 0xff],
    &[0; 64],
    &[0xff; 64],
    b"HTTP/1.1 200 OK\r\n\r\n<html>",
    b"\n",
];

/// Applies one byte-level mutation. Gzip kinds on data without a decodable member fall back
/// to bit flips; the returned name says which was applied.
pub fn mutate_bytes(data: &[u8], kind: ByteKind, rng: &mut Rng) -> (Vec<u8>, &'static str) {
    let mut out = data.to_vec();
    let members = if kind.is_gzip() {
        gzip_members(data)
    } else {
        Vec::new()
    };
    if kind.is_gzip() && members.is_empty() {
        return mutate_bytes(data, ByteKind::BitFlips, rng);
    }
    match kind {
        ByteKind::BitFlips => {
            let flips = rng.range(1, (1 + data.len() / 20_000).min(64));
            for _ in 0..flips {
                if out.is_empty() {
                    out.push(rng.next_u64() as u8);
                }
                let at = rng.below(out.len());
                out[at] ^= 1 << rng.below(8);
            }
        }
        ByteKind::Truncate => {
            let at = rng.below(out.len() + 1);
            out.truncate(at);
        }
        ByteKind::DuplicateSpan => {
            if !out.is_empty() {
                let start = rng.below(out.len());
                let len = rng.size((out.len() - start).min(256 * 1024));
                let span = out[start..start + len].to_vec();
                let at = if rng.chance(1, 2) {
                    start + len
                } else {
                    rng.below(out.len() + 1)
                };
                splice(&mut out, at, &span);
            }
        }
        ByteKind::InsertGarbage => {
            let garbage = if rng.chance(1, 2) {
                let n = rng.size(8192);
                rng.bytes(n)
            } else {
                rng.pick(GARBAGE_PATTERNS).to_vec()
            };
            let at = rng.below(out.len() + 1);
            splice(&mut out, at, &garbage);
        }
        ByteKind::GzipFlipDeflate => {
            let member = rng.pick(&members).clone();
            let header = gzip_header_len(&data[member.clone()]).unwrap_or(10);
            let body =
                (member.start + header)..member.end.saturating_sub(8).max(member.start + header);
            if body.is_empty() {
                return mutate_bytes(data, ByteKind::BitFlips, rng);
            }
            for _ in 0..rng.range(1, 8) {
                let at = body.start + rng.below(body.len());
                out[at] ^= (rng.next_u64() as u8) | 1;
            }
        }
        ByteKind::GzipCutMember => {
            let member = rng.pick(&members).clone();
            let keep = rng.below(member.len());
            out.drain(member.start + keep..member.end);
        }
        ByteKind::GzipGarbageBetween => {
            let boundary = rng.pick(&members).end;
            let garbage = match rng.below(4) {
                0 => {
                    let n = rng.size(4096);
                    rng.bytes(n)
                }
                1 => rng.pick(GARBAGE_PATTERNS).to_vec(),
                2 => gzip(b"this member holds text, not a WARC record\r\n\r\n"),
                _ => gzip(b""),
            };
            splice(&mut out, boundary, &garbage);
        }
        ByteKind::GzipHeader => {
            let member = rng.pick(&members).clone();
            let at = member.start + rng.pick(&[0usize, 1, 2, 3, 3, 3, 9]);
            out[at] = match at - member.start {
                3 => rng.pick(&[0x04u8, 0x08, 0x10, 0x02, 0xe0, 0xff]) | out[at],
                _ => rng.next_u64() as u8,
            };
        }
    }
    (out, kind.name())
}

// ---------------------------------------------------------------------------------------------
// WARC level

/// Mutations of uncompressed WARC records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WarcKind {
    /// A Content-Length smaller than the block.
    LengthTooSmall,
    /// A Content-Length larger than the block (it swallows the next records).
    LengthTooLarge,
    /// `abc`, `12a`, `0x1F`, empty, `1 2`.
    LengthNonNumeric,
    /// `-1`, `-12345`.
    LengthNegative,
    /// Past u32, u64, i64, and a length of 2^64 and more.
    LengthHuge,
    /// A header line without a colon, with NULs, invalid UTF-8, a megabyte long, folded,
    /// duplicated, or a wrong version line.
    BrokenHeaderLine,
    /// CRLFs missing: the blank line after the header, the record's trailing CRLF CRLF, or
    /// every CR of a header (bare LF).
    MissingCrlf,
}

impl WarcKind {
    pub const ALL: [WarcKind; 7] = [
        WarcKind::LengthTooSmall,
        WarcKind::LengthTooLarge,
        WarcKind::LengthNonNumeric,
        WarcKind::LengthNegative,
        WarcKind::LengthHuge,
        WarcKind::BrokenHeaderLine,
        WarcKind::MissingCrlf,
    ];

    pub fn name(self) -> &'static str {
        match self {
            WarcKind::LengthTooSmall => "length_too_small",
            WarcKind::LengthTooLarge => "length_too_large",
            WarcKind::LengthNonNumeric => "length_non_numeric",
            WarcKind::LengthNegative => "length_negative",
            WarcKind::LengthHuge => "length_huge",
            WarcKind::BrokenHeaderLine => "broken_header_line",
            WarcKind::MissingCrlf => "missing_crlf",
        }
    }
}

fn find(haystack: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    if needle.is_empty() || from > haystack.len() {
        return None;
    }
    haystack[from..]
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| p + from)
}

/// Where each record starts: `WARC/` at the start of the data or of a line.
pub fn record_starts(data: &[u8]) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut at = 0;
    while let Some(p) = find(data, b"WARC/", at) {
        if p == 0 || data[p - 1] == b'\n' {
            starts.push(p);
        }
        at = p + 5;
    }
    starts
}

/// The header block of the record starting at `start`: `start..` the blank line.
fn header_end(data: &[u8], start: usize) -> usize {
    find(data, b"\r\n\r\n", start)
        .map(|p| p + 2)
        .unwrap_or(data.len())
}

/// The value span of the `Content-Length` line in the header at `start`, if any.
fn content_length_value(data: &[u8], start: usize) -> Option<Range<usize>> {
    let end = header_end(data, start);
    let header = &data[start..end];
    let lower: Vec<u8> = header.iter().map(u8::to_ascii_lowercase).collect();
    let name = find(&lower, b"\ncontent-length:", 0)? + 1;
    let mut value = start + name + b"content-length:".len();
    while value < end && data[value] == b' ' {
        value += 1;
    }
    let stop = data[value..end]
        .iter()
        .position(|&b| b == b'\r' || b == b'\n')
        .map(|p| value + p)
        .unwrap_or(end);
    Some(value..stop)
}

fn parse_length(bytes: &[u8]) -> Option<u64> {
    std::str::from_utf8(bytes).ok()?.trim().parse().ok()
}

/// Applies one WARC-level mutation to a random record (bit flips when `data` holds no record).
pub fn mutate_warc(data: &[u8], kind: WarcKind, rng: &mut Rng) -> (Vec<u8>, &'static str) {
    let starts = record_starts(data);
    if starts.is_empty() {
        return mutate_bytes(data, ByteKind::BitFlips, rng);
    }
    let start = *rng.pick(&starts);
    let mut out = data.to_vec();
    let length = content_length_value(data, start);
    let new_length: Option<Vec<u8>> = match kind {
        WarcKind::LengthTooSmall => length.as_ref().map(|v| {
            let n = parse_length(&data[v.clone()]).unwrap_or(0);
            let smaller = if n == 0 {
                0
            } else {
                rng.below(n as usize) as u64
            };
            smaller.to_string().into_bytes()
        }),
        WarcKind::LengthTooLarge => length.as_ref().map(|v| {
            let n = parse_length(&data[v.clone()]).unwrap_or(0);
            let more = if rng.chance(1, 2) {
                rng.size(1000) as u64
            } else {
                // A Content-Length made huge by an earlier mutation stays huge.
                n.max(1).saturating_mul(rng.range(1, 20) as u64)
            };
            n.saturating_add(more).to_string().into_bytes()
        }),
        WarcKind::LengthNonNumeric => Some(
            rng.pick(&[
                "abc", "12a", "0x1F", "", " ", "1 2", "1.5", "+7", "١٢٣", "1e3",
            ])
            .as_bytes()
            .to_vec(),
        ),
        WarcKind::LengthNegative => {
            Some(rng.pick(&["-1", "-12345", "-0", "--5"]).as_bytes().to_vec())
        }
        WarcKind::LengthHuge => Some(
            rng.pick(&[
                "4294967296",
                "9223372036854775807",
                "9223372036854775808",
                "18446744073709551615",
                "18446744073709551616",
                "99999999999999999999999999999",
                "1099511627776",
            ])
            .as_bytes()
            .to_vec(),
        ),
        WarcKind::BrokenHeaderLine | WarcKind::MissingCrlf => None,
    };
    match kind {
        WarcKind::BrokenHeaderLine => {
            let end = header_end(data, start);
            let lines: Vec<usize> = (start..end)
                .filter(|&i| i == start || data[i - 1] == b'\n')
                .collect();
            let line = *rng.pick(&lines);
            let line_end = find(data, b"\r\n", line).unwrap_or(end).min(end);
            match rng.below(8) {
                0 => {
                    // The colon dropped.
                    if let Some(colon) = data[line..line_end].iter().position(|&b| b == b':') {
                        out.remove(line + colon);
                    }
                }
                1 => splice(&mut out, line, b"this line has no colon\r\n"),
                2 => splice(&mut out, line, b"X-Bad\0Name: \0value\xff\xfe\r\n"),
                3 => {
                    let mut long = b"X-Long: ".to_vec();
                    long.extend(std::iter::repeat_n(b'x', rng.size(2 << 20)));
                    long.extend_from_slice(b"\r\n");
                    splice(&mut out, line, &long);
                }
                4 => splice(&mut out, line, b" folded continuation\r\n"),
                5 => {
                    // The version line replaced.
                    let version: &[u8] = rng.pick::<&[u8]>(&[
                        b"WARC/9.9",
                        b"WARX/1.0",
                        b"WARC/",
                        b"WARC/1.1 extra",
                        b"\xef\xbb\xbfWARC/1.1",
                    ]);
                    let first_end = find(data, b"\r\n", start).unwrap_or(end).min(end);
                    out.splice(start..first_end, version.iter().copied());
                }
                6 => {
                    // The line duplicated with another value.
                    let mut copy = data[line..line_end].to_vec();
                    copy.extend_from_slice(b"-dup\r\n");
                    splice(&mut out, line, &copy);
                }
                _ => {
                    // The WARC-Type made odd.
                    let value = rng.pick(&["", "résponse", "response\0", "RESPONSE", "revisit"]);
                    let mut header = b"WARC-Type: ".to_vec();
                    header.extend_from_slice(value.as_bytes());
                    header.extend_from_slice(b"\r\n");
                    splice(&mut out, line, &header);
                }
            }
        }
        WarcKind::MissingCrlf => {
            let end = header_end(data, start);
            match rng.below(3) {
                0 => {
                    // The blank line between header and block.
                    if end + 2 <= out.len() {
                        out.drain(end..end + 2);
                    }
                }
                1 => {
                    // The CRLF CRLF after the block: just before the next record.
                    let next = starts.iter().copied().find(|&s| s > start);
                    let at = next.unwrap_or(out.len());
                    let cut = if at >= 4 && &out[at - 4..at] == b"\r\n\r\n" {
                        *rng.pick(&[2usize, 4])
                    } else {
                        0
                    };
                    out.drain(at - cut..at);
                }
                _ => {
                    // Every CR of the header: bare LF line ends.
                    let header: Vec<u8> = data[start..end]
                        .iter()
                        .copied()
                        .filter(|&b| b != b'\r')
                        .collect();
                    out.splice(start..end, header);
                }
            }
        }
        _ => match (length, new_length) {
            (Some(span), Some(value)) => {
                out.splice(span, value);
            }
            // No Content-Length to change: the header gets one with the new value.
            (None, Some(value)) => {
                let mut line = b"Content-Length: ".to_vec();
                line.extend_from_slice(&value);
                line.extend_from_slice(b"\r\n");
                let at = find(data, b"\r\n", start).map(|p| p + 2).unwrap_or(start);
                splice(&mut out, at, &line);
            }
            _ => {}
        },
    }
    (out, kind.name())
}

// ---------------------------------------------------------------------------------------------
// Page level

/// A response before it is written: URL, HTTP Content-Type and body.
#[derive(Clone, Debug)]
pub struct PageDraft {
    pub url: String,
    pub content_type: String,
    pub html: Vec<u8>,
}

/// Mutations of one page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageKind {
    /// Opening tags never closed (`<div>`, `<table>`, `<textarea>`, `<!--`, `<a`), and
    /// closing tags removed.
    UnclosedTags,
    /// 1,000 to 200,000 nested elements (`<div>`, `<span>`, `<table>`, formatting elements
    /// with distinct attributes, which the tree builder reopens after every block).
    DeepNesting,
    /// One attribute of up to 4 MB (quoted or not, in `href` or not, unterminated or not).
    HugeAttribute,
    /// One element with up to 50,000 attributes, distinct or all the same name.
    ManyAttributes,
    /// CDATA sections in HTML, in svg, unterminated; stray `]]>`.
    Cdata,
    /// Character references out of range, unterminated, huge, in text and attributes.
    BrokenEntities,
    /// Raw Unicode URLs in `href` and `<base href>` (IDN hosts, a multi-byte character right
    /// after `www`, protocol-relative), and sometimes as the record's target URI.
    UnicodeUrls,
    /// NUL bytes in text, tags and attribute values.
    NulBytes,
    /// Invalid byte sequences while the page (HTTP header and/or `<meta>`) declares utf-8,
    /// shift_jis, windows-1251, utf-16 or another charset; mismatched BOMs.
    InvalidUtf8Charset,
    /// `<meta charset>` and HTTP charset garbage: empty, unknown, huge, conflicting,
    /// unterminated.
    MetaCharsetGarbage,
    /// Scripts (and other raw-text elements) ended by `</script` variants or never ended.
    ScriptEndVariants,
    /// `<template>` nested, unclosed, in tables.
    Template,
    /// svg and math content with HTML breakouts, foreignObject, annotation-xml.
    SvgMath,
    /// Tables in odd places: text in a table (foster parenting), cells without a table,
    /// deeply nested tables.
    OddTables,
    /// A span of another page spliced in, or this page cut and another page's tail appended.
    Splice,
    /// Up to 500,000 sibling elements, or megabytes of text without a space.
    ManyElements,
}

impl PageKind {
    pub const ALL: [PageKind; 16] = [
        PageKind::UnclosedTags,
        PageKind::DeepNesting,
        PageKind::HugeAttribute,
        PageKind::ManyAttributes,
        PageKind::Cdata,
        PageKind::BrokenEntities,
        PageKind::UnicodeUrls,
        PageKind::NulBytes,
        PageKind::InvalidUtf8Charset,
        PageKind::MetaCharsetGarbage,
        PageKind::ScriptEndVariants,
        PageKind::Template,
        PageKind::SvgMath,
        PageKind::OddTables,
        PageKind::Splice,
        PageKind::ManyElements,
    ];

    pub fn name(self) -> &'static str {
        match self {
            PageKind::UnclosedTags => "unclosed_tags",
            PageKind::DeepNesting => "deep_nesting",
            PageKind::HugeAttribute => "huge_attribute",
            PageKind::ManyAttributes => "many_attributes",
            PageKind::Cdata => "cdata",
            PageKind::BrokenEntities => "broken_entities",
            PageKind::UnicodeUrls => "unicode_urls",
            PageKind::NulBytes => "nul_bytes",
            PageKind::InvalidUtf8Charset => "invalid_utf8_charset",
            PageKind::MetaCharsetGarbage => "meta_charset_garbage",
            PageKind::ScriptEndVariants => "script_end_variants",
            PageKind::Template => "template",
            PageKind::SvgMath => "svg_math",
            PageKind::OddTables => "odd_tables",
            PageKind::Splice => "splice",
            PageKind::ManyElements => "many_elements",
        }
    }
}

/// Raw Unicode (and otherwise odd) URLs for links, `<base href>` and target URIs.
pub const ODD_URLS: &[&str] = &[
    "http://日本語.jp/",
    "https://www.bücher.de/ü",
    "//例え.テスト",
    "//例え.テスト/パス",
    "http://wwwé.x/",
    "http://ww本/",
    "http://www.日本/",
    "http://w本/",
    "https://www.é",
    "http://www.例え.テスト:80/パス?ク=エ#フ",
    "http://ü/",
    "//www.ü",
    "http://%E6%97%A5.jp/",
    "http://xn--/",
    "http://xn--zz-zz.com/",
    "http://[::1]/",
    "http://[日本]/",
    "http://www",
    "http://wwwé",
    "http://",
    "//",
    "http://.",
    "http://www./",
    "https://www.ex\u{301}ample.com/",
    "http://\u{200b}www.example.com/",
    "http://www.\u{feff}example.com/",
    "http://ＷＷＷ．ｅｘａｍｐｌｅ．ｃｏｍ/",
    "http://example.com:99999/",
    "http://user:pässword@例え.jp/",
    "javascript:ü()",
    "mailto:ü@例え.jp",
    "/ü/日本?q=é",
    "../../日本",
    "ü",
    "http://a\0b.com/",
    "http://1.2.3.4.5/",
    "http://999.999.999.999/",
    "http://💩.la/",
    "http://ß.de/",
    "http://www.ß/",
    "https://ΑΒΓ.gr/",
];

/// A place to insert markup: usually just before a tag (or after `<body>`), sometimes any byte
/// offset (which may split a tag or a UTF-8 sequence, also worth trying).
fn insert_point(html: &[u8], rng: &mut Rng) -> usize {
    if html.is_empty() {
        return 0;
    }
    let at = rng.below(html.len() + 1);
    match rng.below(10) {
        0..=5 => html[at..]
            .iter()
            .position(|&b| b == b'<')
            .map(|p| at + p)
            .unwrap_or(at),
        6 | 7 => {
            let lower: Vec<u8> = html
                .iter()
                .take(1 << 20)
                .map(u8::to_ascii_lowercase)
                .collect();
            find(&lower, b"<body", 0)
                .and_then(|b| {
                    lower[b..]
                        .iter()
                        .position(|&c| c == b'>')
                        .map(|p| b + p + 1)
                })
                .unwrap_or(at)
        }
        _ => at,
    }
}

fn insert(html: &mut Vec<u8>, rng: &mut Rng, markup: &[u8]) {
    let at = insert_point(html, rng);
    splice(html, at, markup);
}

const UNCLOSED: &[&str] = &[
    "<div>",
    "<p>",
    "<table>",
    "<a href=\"x\">",
    "<b>",
    "<i>",
    "<select>",
    "<textarea>",
    "<title>",
    "<style>",
    "<xmp>",
    "<iframe>",
    "<noscript>",
    "<plaintext>",
    "<!--",
    "<![CDATA[",
    "<a",
    "<div class=\"",
    "<li>",
    "<ul>",
    "<form>",
    "<button>",
    "<option>",
    "<h1>",
    "<td>",
    "<dl><dt>",
    "<ruby><rt>",
    "<!DOCTYPE",
    "</",
    "<",
];

const DEEP: &[(&str, &str)] = &[
    ("<div>", "</div>"),
    ("<span>", "</span>"),
    ("<table>", "</table>"),
    ("<li>", "</li>"),
    ("<ul>", "</ul>"),
    ("<blockquote>", "</blockquote>"),
    ("<a>", "</a>"),
    ("<div><span>", "</span></div>"),
    ("<svg>", "</svg>"),
    ("<template>", "</template>"),
];

const CDATA: &[&str] = &[
    "<![CDATA[<p>not a paragraph</p>]]>",
    "<svg><![CDATA[<p>inside svg</p> & < >]]></svg>",
    "<math><![CDATA[x < y]]></math>",
    "<![CDATA[ never ended <div>",
    "<svg><![CDATA[ never ended in svg <div>",
    "]]>",
    "<![CDATA[]]>",
    "<![cdata[lower case]]>",
    "<svg><![CDATA[]]]]><![CDATA[>]]></svg>",
];

const ENTITIES: &[&str] = &[
    "&#x110000;",
    "&amp",
    "&#99999999999;",
    "&#0;",
    "&#xD800;",
    "&#xDFFF;",
    "&#x;",
    "&#;",
    "&;",
    "&notin",
    "&noti;",
    "&#x7fffffffffffffffffffffff;",
    "&#128;",
    "&#x80;",
    "&#x9F;",
    "&#xFFFE;",
    "&#1114111;",
    "&#1114112;",
    "&#-1;",
    "&#x-1;",
    "&AElig",
    "&Aacute;&aacute",
    "&nbsp&nbsp;&",
    "&#38;#38;",
    "&ampamp;",
    "&#0000000000000000000000000065;",
];

const SCRIPTS: &[&str] = &[
    "<script>var a = '</script ';</script>",
    "<script>document.write('<p>')</SCRIPT>",
    "<script>x</script/>",
    "<script>a</scriptx>b</script>",
    "<script><!--<script>-->inner</script>after</script>",
    "<script><!--<script></script>still script-->",
    "<script><!--",
    "<script>never ended",
    "<script>ends at eof </script",
    "<script type=\"text/template\"><div>templated</div></script>",
    "<style>p { color: red } </style ",
    "<style>never ended",
    "<textarea>never ended <b>",
    "<title>never ended <b>",
    "<noscript><p>no script</p></noscript>",
    "<xmp><b>raw</b></xmp>",
    "<iframe><p>raw</p></iframe>",
    "<noembed><p>raw</p></noembed>",
    "<script>\u{0}</script>",
    "<script></script\t\n>",
    "</script>",
    "<script><!--</script>-->",
];

const TEMPLATES: &[&str] = &[
    "<template><p>inside template</p></template>",
    "<template><template><template><p>deep</p></template></template></template>",
    "<template><tr><td>row in template</td></tr></template>",
    "<table><template><td>cell</td></template></table>",
    "<template>unclosed <div>",
    "</template>",
    "<template><html><body><p>html in template</p></body></html></template>",
    "<select><template><option>x</option></template></select>",
    "<template><frameset></frameset></template>",
];

const SVG_MATH: &[&str] = &[
    "<svg><foreignObject><p>html in svg</svg>",
    "<math><mi><mglyph>x</mglyph></mi></math>",
    "<svg><title><div>title div</div></title></svg>",
    "<math><annotation-xml encoding=\"text/html\"><div>html</div></annotation-xml></math>",
    "<svg><p>breakout</p></svg>",
    "<svg><font color=red>font</font></svg>",
    "<math><style>x{}</style></math>",
    "<svg><script>alert(1)</script></svg>",
    "<svg viewBox=\"0 0 10 10\"><path d=\"M0 0\"/><use xlink:href=\"#a\"/></svg>",
    "<math><mtext><table><td>x</td></table></mtext></math>",
    "<svg><desc><svg><desc><svg>nested</svg></desc></svg></desc></svg>",
    "<svg>unclosed <a href=\"/x\">svg link",
    "<math>unclosed",
];

const TABLES: &[&str] = &[
    "<table>text directly in a table<b>bold</b></table>",
    "<td>cell without a table</td>",
    "<tr><td>row in body</td></tr>",
    "<table><table><tr><td>x</td></tr></table></table>",
    "<table><caption><table><td>y</td></table></caption></table>",
    "<table><form><input name=a></form></table>",
    "<table><colgroup>junk<col></colgroup></table>",
    "</table>",
    "<select><table><td>z</td></table></select>",
    "<table><td><table><td><table><td>nested",
    "<table><tbody><tr><th>h<td>d</tr></tbody><tfoot>f</tfoot><thead>h</thead></table>",
    "<p><table><p>p in table</table>",
    "<table><a href=\"/foster\">fostered link</a><tr><td>x</table>",
];

const CHARSETS: &[&str] = &[
    "utf-8",
    "shift_jis",
    "windows-1251",
    "utf-16",
    "utf-16le",
    "utf-16be",
    "euc-jp",
    "iso-2022-jp",
    "gb18030",
    "big5",
    "x-user-defined",
    "replacement",
    "iso-8859-1",
    "koi8-r",
];

const INVALID_BYTES: &[&[u8]] = &[
    &[0xff, 0xfe],
    &[0xfe, 0xff],
    &[0xc0, 0x80],
    &[0xed, 0xa0, 0x80],
    &[0xf4, 0x90, 0x80, 0x80],
    &[0x80],
    &[0xe6, 0x97],
    &[0x81],
    &[0x1b, 0x24, 0x42],
    &[0xef, 0xbb, 0xbf],
    &[0xf8, 0x88, 0x80, 0x80, 0x80],
    &[0x00, 0xd8],
];

const META_GARBAGE: &[&str] = &[
    "<meta charset=\"\">",
    "<meta charset=utf-8-but-not>",
    "<meta http-equiv=\"Content-Type\" content=\"text/html; charset=\">",
    "<meta http-equiv=\"Content-Type\" content=\"charset=",
    "<meta charset=\"utf-16\">",
    "<meta charset=\"x-user-defined\">",
    "<meta charset='replacement'>",
    "<meta charset=\"utf-8",
    "<meta charset=shift_jis><meta charset=windows-1251><meta charset=utf-8>",
    "<meta content=\"text/html; charset=koi8-r\" http-equiv=content-type>",
    "<meta charset=\"&#x75;tf-8\">",
    "<meta charset=\"日本語\">",
    "<meta http-equiv=\"Content-Type\" content=\"text/html; charset=\"\"\"\">",
];

const CONTENT_TYPE_GARBAGE: &[&str] = &[
    "text/html; charset=\"",
    "text/html;;;charset==",
    "text/html; charset=utf-8; charset=shift_jis",
    "text/html; charset=ütf-8",
    "text/html; charset=",
    "text/html; charset=utf-16",
    "text/html ; CHARSET = \"Windows-1251\" ; q=1",
    "text/html; charset=unknown-charset-name",
    "",
    "text/html\0",
];

/// Applies one page-level mutation to `page`; `donor` is another page (for `Splice`).
pub fn mutate_page(
    page: &mut PageDraft,
    kind: PageKind,
    rng: &mut Rng,
    donor: &[u8],
) -> &'static str {
    let html = &mut page.html;
    match kind {
        PageKind::UnclosedTags => {
            if rng.chance(1, 3) {
                // Closing tags removed.
                let mut at = 0;
                let stride = rng.range(1, 10);
                let mut n = 0;
                while let Some(p) = find(html, b"</", at) {
                    n += 1;
                    if n % stride == 0 {
                        html.drain(p..p + 2);
                        splice(html, p, b"<");
                    }
                    at = p + 1;
                }
            }
            for _ in 0..rng.size(200) {
                let tag = rng.pick(UNCLOSED).as_bytes();
                insert(html, rng, tag);
            }
        }
        PageKind::DeepNesting => {
            let n = *rng.pick(&[1_000usize, 5_000, 10_000, 50_000, 100_000, 100_000, 200_000]);
            let mut markup = Vec::new();
            let formatting = rng.chance(1, 4);
            let (open, close) = *rng.pick(DEEP);
            for i in 0..n {
                if formatting {
                    // Distinct attributes defeat the "Noah's Ark" limit of three.
                    let tag = ["b", "i", "em", "font"][i % 4];
                    markup.extend_from_slice(format!("<{tag} class=c{i}>").as_bytes());
                    if i % 100 == 99 {
                        markup.extend_from_slice(b"<p>block</p>");
                    }
                } else {
                    markup.extend_from_slice(open.as_bytes());
                }
            }
            markup.extend_from_slice(b"deep text <a href=\"/deep\">deep link</a>");
            if rng.chance(1, 2) && !formatting {
                for _ in 0..n {
                    markup.extend_from_slice(close.as_bytes());
                }
            }
            insert(html, rng, &markup);
        }
        PageKind::HugeAttribute => {
            let size = *rng.pick(&[100_000usize, 1 << 20, 1 << 20, 3 << 20, 4 << 20]);
            let fill = *rng.pick::<u8>(b"a &\"</\xe6");
            let mut markup = match rng.below(4) {
                0 => b"<div data-x=\"".to_vec(),
                1 => b"<a href=\"http://example.com/".to_vec(),
                2 => b"<div data-x=".to_vec(),
                _ => b"<img alt='".to_vec(),
            };
            markup.extend(std::iter::repeat_n(fill, size));
            if rng.chance(3, 4) {
                markup.extend_from_slice(b"\">huge</div></a>");
            }
            insert(html, rng, &markup);
        }
        PageKind::ManyAttributes => {
            let n = *rng.pick(&[1_000usize, 10_000, 50_000]);
            let same = rng.chance(1, 2);
            let mut markup = b"<div".to_vec();
            for i in 0..n {
                if same {
                    markup.extend_from_slice(format!(" class=c{i}").as_bytes());
                } else {
                    markup.extend_from_slice(format!(" a{i}=\"{i}\"").as_bytes());
                }
            }
            markup.extend_from_slice(b">many attributes</div>");
            insert(html, rng, &markup);
        }
        PageKind::Cdata => {
            for _ in 0..rng.range(1, 5) {
                let snippet = rng.pick(CDATA).as_bytes();
                insert(html, rng, snippet);
            }
        }
        PageKind::BrokenEntities => {
            for _ in 0..rng.size(100) {
                let mut snippet = rng.pick(ENTITIES).as_bytes().to_vec();
                match rng.below(6) {
                    0 => {
                        snippet = format!("<a href=\"/e?a=1{}&copy=2\">e</a>", rng.pick(ENTITIES))
                            .into_bytes()
                    }
                    1 if rng.chance(1, 4) => {
                        snippet = b"&".to_vec();
                        snippet.extend(std::iter::repeat_n(b'a', rng.size(20_000)));
                        snippet.push(b';');
                    }
                    2 if rng.chance(1, 4) => {
                        snippet = b"&#".to_vec();
                        snippet.extend(std::iter::repeat_n(b'9', rng.size(20_000)));
                        snippet.push(b';');
                    }
                    _ => {}
                }
                let at = rng.below(html.len() + 1);
                splice(html, at, &snippet);
            }
        }
        PageKind::UnicodeUrls => {
            for _ in 0..rng.range(1, 6) {
                let url = *rng.pick(ODD_URLS);
                let markup = match rng.below(4) {
                    0 => format!("<base href=\"{url}\">"),
                    1 => format!("<a href={url}>ü</a>"),
                    _ => format!("<a href=\"{url}\">日本 link</a>"),
                };
                insert(html, rng, markup.as_bytes());
            }
            if rng.chance(1, 3) {
                // The record's own URL.
                let url = *rng.pick(ODD_URLS);
                page.url = if url.starts_with("//") {
                    format!("http:{url}")
                } else {
                    url.to_string()
                };
            }
        }
        PageKind::NulBytes => {
            for _ in 0..rng.size(50) {
                let snippet: &[u8] = rng.pick::<&[u8]>(&[
                    b"\0",
                    b"<scr\0ipt>",
                    b"<a href=\"/\0x\">nul</a>",
                    b"<p\0>",
                    b"\0\0\0\0",
                    b"&\0;",
                ]);
                let at = rng.below(html.len() + 1);
                splice(html, at, snippet);
            }
        }
        PageKind::InvalidUtf8Charset => {
            let charset = *rng.pick(CHARSETS);
            match rng.below(3) {
                0 => page.content_type = format!("text/html; charset={charset}"),
                1 => {
                    let meta = format!("<meta charset=\"{charset}\">");
                    splice(html, 0, meta.as_bytes());
                }
                _ => {
                    page.content_type = format!("text/html; charset={}", rng.pick(CHARSETS));
                    let meta = format!("<meta http-equiv=\"Content-Type\" content=\"text/html; charset={charset}\">");
                    splice(html, 0, meta.as_bytes());
                }
            }
            for _ in 0..rng.size(64) {
                let bytes = *rng.pick(INVALID_BYTES);
                let at = rng.below(html.len() + 1);
                splice(html, at, bytes);
            }
            match rng.below(4) {
                0 => splice(html, 0, &[0xff, 0xfe]),
                1 => splice(html, 0, &[0xef, 0xbb, 0xbf]),
                2 => html.extend_from_slice(rng.pick::<&[u8]>(&[&[0xe6], &[0x81], &[0xd8]])),
                _ => {}
            }
            if charset.starts_with("utf-16") && rng.chance(1, 2) && html.len().is_multiple_of(2) {
                html.push(b'x'); // odd length
            }
        }
        PageKind::MetaCharsetGarbage => {
            let mut meta = rng.pick(META_GARBAGE).as_bytes().to_vec();
            if rng.chance(1, 5) {
                meta = b"<meta charset=\"".to_vec();
                meta.extend(std::iter::repeat_n(b'a', rng.size(20_000)));
                meta.extend_from_slice(b"\">");
            }
            let at = if rng.chance(1, 2) {
                0
            } else {
                insert_point(html, rng)
            };
            splice(html, at, &meta);
            if rng.chance(1, 2) {
                page.content_type = rng.pick(CONTENT_TYPE_GARBAGE).to_string();
            }
        }
        PageKind::ScriptEndVariants => {
            for _ in 0..rng.range(1, 5) {
                let snippet = rng.pick(SCRIPTS).as_bytes();
                if rng.chance(1, 5) {
                    html.extend_from_slice(snippet);
                } else {
                    insert(html, rng, snippet);
                }
            }
        }
        PageKind::Template => {
            for _ in 0..rng.range(1, 5) {
                let snippet = rng.pick(TEMPLATES).as_bytes();
                insert(html, rng, snippet);
            }
        }
        PageKind::SvgMath => {
            for _ in 0..rng.range(1, 5) {
                let snippet = rng.pick(SVG_MATH).as_bytes();
                insert(html, rng, snippet);
            }
        }
        PageKind::OddTables => {
            for _ in 0..rng.range(1, 5) {
                let snippet = rng.pick(TABLES).as_bytes();
                insert(html, rng, snippet);
            }
            if rng.chance(1, 4) {
                let n = rng.size(5_000);
                let nested = "<table><tr><td>".repeat(n);
                insert(html, rng, nested.as_bytes());
            }
        }
        PageKind::Splice => {
            if donor.is_empty() {
                return mutate_page(page, PageKind::UnclosedTags, rng, donor);
            }
            let start = rng.below(donor.len());
            let len = rng.size(donor.len() - start);
            let span = &donor[start..start + len];
            if rng.chance(1, 3) {
                let cut = rng.below(html.len() + 1);
                html.truncate(cut);
                html.extend_from_slice(span);
            } else {
                let at = rng.below(html.len() + 1);
                splice(html, at, span);
            }
        }
        PageKind::ManyElements => {
            let n = *rng.pick(&[10_000usize, 100_000, 500_000]);
            let unit: &[u8] = rng.pick::<&[u8]>(&[
                b"<br>",
                b"<i></i>",
                b"<p>x",
                b"<a href=/l>l</a>",
                b"<img src=x>",
                b"<li>",
                b"<span> </span>",
            ]);
            let markup: Vec<u8> = if rng.chance(1, 5) {
                // Text without a space.
                std::iter::repeat_n(*rng.pick::<u8>(b"a\xe6"), n * 8).collect()
            } else {
                unit.repeat(n)
            };
            insert(html, rng, &markup);
        }
    }
    kind.name()
}

// ---------------------------------------------------------------------------------------------
// Writing pages as WARCs

/// A warcinfo record and one response per page, each record its own gzip member
/// (Common Crawl style), or all plain.
pub fn build_warc(pages: &[PageDraft], gzip: bool) -> Vec<u8> {
    let mut writer = WarcWriter::new(Vec::new(), gzip);
    // Writing to memory cannot fail.
    let _ = writer.write(&NewRecord {
        record_type: "warcinfo",
        target_uri: None,
        date: "2026-11-21T00:00:00Z",
        content_type: "application/warc-fields",
        block: b"software: stencil soak\r\n",
    });
    for page in pages {
        let headers: Vec<(&str, &str)> = if page.content_type.is_empty() {
            Vec::new()
        } else {
            vec![("Content-Type", page.content_type.as_str())]
        };
        let block = http_response(200, &headers, &page.html);
        let _ = writer.write(&NewRecord {
            record_type: "response",
            target_uri: Some(&page.url),
            date: "2026-11-21T00:00:00Z",
            content_type: "application/http; msgtype=response",
            block: &block,
        });
    }
    writer.into_inner()
}

/// Plain WARC bytes gzipped one member per record (cut where each record starts), as Common
/// Crawl stores them, whatever the mutated records hold.
pub fn gzip_per_record(plain: &[u8]) -> Vec<u8> {
    let mut cuts = record_starts(plain);
    if cuts.first() != Some(&0) {
        cuts.insert(0, 0);
    }
    cuts.push(plain.len());
    let mut out = Vec::new();
    for pair in cuts.windows(2) {
        if pair[1] > pair[0] {
            out.extend_from_slice(&gzip(&plain[pair[0]..pair[1]]));
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Generators: 1-3 composed mutations per input

/// One mutated input.
#[derive(Clone, Debug)]
pub struct Mutated {
    pub bytes: Vec<u8>,
    /// `warc.gz`, `warc`, `html` or `html.gz`.
    pub ext: &'static str,
    /// What was applied, in order: `page:deep_nesting@2` (page 2), `bytes:truncate`, ...
    pub mutations: Vec<String>,
    /// For WARCs built from pages: the HTML of the first mutated page (for `stencil clean`).
    pub page_html: Option<Vec<u8>>,
}

/// Pages (raw HTML of real pages) mutated and written as a WARC: 1–3 mutations, each on a
/// random page, the last one sometimes on the whole file's bytes instead.
pub fn page_warc(rng: &mut Rng, pages: Vec<Vec<u8>>, donor: &[u8]) -> Mutated {
    let hosts = rng.range(1, 3);
    let mut drafts: Vec<PageDraft> = pages
        .into_iter()
        .enumerate()
        .map(|(i, html)| PageDraft {
            url: format!("http://site{}.soak.example/page{i}.html", rng.below(hosts)),
            content_type: "text/html".to_string(),
            html,
        })
        .collect();
    if drafts.is_empty() {
        drafts.push(PageDraft {
            url: "http://soak.example/".to_string(),
            content_type: "text/html".to_string(),
            html: b"<p>empty seed</p>".to_vec(),
        });
    }
    let count = rng.range(1, 3);
    let mut mutations = Vec::new();
    let mut first_mutated = None;
    let mut file_kind = None;
    for n in 0..count {
        if n + 1 == count && n > 0 && rng.chance(1, 4) {
            file_kind = Some(*rng.pick(&ByteKind::ALL));
            break;
        }
        let which = rng.below(drafts.len());
        let kind = *rng.pick(&PageKind::ALL);
        let name = mutate_page(&mut drafts[which], kind, rng, donor);
        mutations.push(format!("page:{name}@{which}"));
        first_mutated.get_or_insert(which);
    }
    let gzip = !rng.chance(1, 6);
    let mut bytes = build_warc(&drafts, gzip);
    if let Some(kind) = file_kind {
        let (mutated, name) = mutate_bytes(&bytes, kind, rng);
        bytes = mutated;
        mutations.push(format!("bytes:{name}"));
    }
    Mutated {
        bytes,
        ext: if gzip { "warc.gz" } else { "warc" },
        mutations,
        page_html: first_mutated.map(|i| drafts[i].html.clone()),
    }
}

/// A real `.warc.gz` (whole, or a window of its gzip members) with 1–3 byte-level mutations,
/// gzip damage favoured.
pub fn real_warc(rng: &mut Rng, warc_gz: &[u8]) -> Mutated {
    let mut mutations = Vec::new();
    let mut bytes = if rng.chance(1, 4) {
        mutations.push("window:whole".to_string());
        warc_gz.to_vec()
    } else {
        let members = gzip_members(warc_gz);
        let len = rng.range(3, 80).min(members.len());
        let first = rng.below(members.len().saturating_sub(len) + 1);
        mutations.push(format!("window:members {first}..{}", first + len));
        match (
            members.get(first),
            members.get((first + len).saturating_sub(1)),
        ) {
            (Some(a), Some(b)) if len > 0 => warc_gz[a.start..b.end].to_vec(),
            _ => warc_gz.to_vec(),
        }
    };
    for _ in 0..rng.range(1, 3) {
        let kind = if rng.chance(1, 2) {
            *rng.pick(&ByteKind::ALL[4..])
        } else {
            *rng.pick(&ByteKind::ALL)
        };
        let (mutated, name) = mutate_bytes(&bytes, kind, rng);
        bytes = mutated;
        mutations.push(format!("bytes:{name}"));
    }
    Mutated {
        bytes,
        ext: "warc.gz",
        mutations,
        page_html: None,
    }
}

/// Uncompressed WARC records from a real `.warc.gz`: a window of its members, decompressed.
pub fn plain_records(rng: &mut Rng, warc_gz: &[u8]) -> Vec<u8> {
    let members = gzip_members(warc_gz);
    let len = rng.range(2, 40).min(members.len());
    let first = rng.below(members.len().saturating_sub(len) + 1);
    decompress_members(warc_gz, members.get(first..first + len).unwrap_or(&[]))
}

/// Plain WARC records with 1–3 WARC-level mutations (the last sometimes byte-level), written
/// plain, gzipped per record, or gzipped as one stream.
pub fn record_warc(rng: &mut Rng, plain: Vec<u8>) -> Mutated {
    let mut bytes = plain;
    let mut mutations = Vec::new();
    let count = rng.range(1, 3);
    for n in 0..count {
        let (mutated, name) = if n + 1 == count && n > 0 && rng.chance(1, 5) {
            let (m, name) = mutate_bytes(&bytes, *rng.pick(&ByteKind::ALL[..4]), rng);
            (m, name)
        } else {
            let kind = *rng.pick(&WarcKind::ALL);
            mutate_warc(&bytes, kind, rng)
        };
        bytes = mutated;
        let level = if WarcKind::ALL.iter().any(|k| k.name() == name) {
            "warc"
        } else {
            "bytes"
        };
        mutations.push(format!("{level}:{name}"));
    }
    let (bytes, ext) = match rng.below(10) {
        0..=4 => (bytes, "warc"),
        5..=7 => {
            mutations.push("gzip:per_record".to_string());
            (gzip_per_record(&bytes), "warc.gz")
        }
        _ => {
            mutations.push("gzip:one_stream".to_string());
            (gzip(&bytes), "warc.gz")
        }
    };
    Mutated {
        bytes,
        ext,
        mutations,
        page_html: None,
    }
}

/// One page for `stencil clean`: 1–3 page mutations, written as `.html` or `.html.gz`, the
/// gzip sometimes damaged.
pub fn html_page(rng: &mut Rng, html: Vec<u8>, donor: &[u8]) -> Mutated {
    let mut draft = PageDraft {
        url: String::new(),
        content_type: String::new(),
        html,
    };
    let mut mutations = Vec::new();
    for _ in 0..rng.range(1, 3) {
        let kind = *rng.pick(&PageKind::ALL);
        mutations.push(format!(
            "page:{}",
            mutate_page(&mut draft, kind, rng, donor)
        ));
    }
    let mut bytes = draft.html;
    let mut ext = "html";
    if rng.chance(1, 5) {
        bytes = gzip(&bytes);
        ext = "html.gz";
        mutations.push("gzip:page".to_string());
        if rng.chance(1, 2) {
            let kind = *rng.pick(&[
                ByteKind::Truncate,
                ByteKind::GzipFlipDeflate,
                ByteKind::BitFlips,
            ]);
            let (mutated, name) = mutate_bytes(&bytes, kind, rng);
            bytes = mutated;
            mutations.push(format!("bytes:{name}"));
        }
    }
    Mutated {
        bytes,
        ext,
        mutations,
        page_html: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample_pages() -> Vec<Vec<u8>> {
        (0..4)
            .map(|i| {
                format!(
                    "<html><head><title>t{i}</title></head><body><div id=nav><a href=/a>a</a></div>\
                     <p>Page {i} text, with <b>bold</b> &amp; more.</p></body></html>"
                )
                .into_bytes()
            })
            .collect()
    }

    fn sample_drafts() -> Vec<PageDraft> {
        sample_pages()
            .into_iter()
            .map(|html| PageDraft {
                url: "http://a.example/".into(),
                content_type: "text/html".into(),
                html,
            })
            .collect()
    }

    #[test]
    fn same_seed_same_input() {
        for seed in 0..50 {
            let a = page_warc(&mut Rng::new(seed), sample_pages(), b"<p>donor</p>");
            let b = page_warc(&mut Rng::new(seed), sample_pages(), b"<p>donor</p>");
            assert_eq!(a.bytes, b.bytes);
            assert_eq!(a.mutations, b.mutations);
            assert!((1..=3).contains(&a.mutations.len()), "{:?}", a.mutations);
        }
    }

    #[test]
    fn finds_one_member_per_record() {
        let drafts = sample_drafts();
        let warc = build_warc(&drafts, true);
        let members = gzip_members(&warc);
        assert_eq!(members.len(), 5);
        assert_eq!(members.last().map(|m| m.end), Some(warc.len()));
        let plain = decompress_members(&warc, &members);
        assert_eq!(plain, build_warc(&drafts, false));
        assert_eq!(record_starts(&plain).len(), 5);
        assert_eq!(gzip_members(&gzip_per_record(&plain)).len(), 5);
    }

    #[test]
    fn every_kind_accepts_any_input() {
        let drafts = sample_drafts();
        let inputs: Vec<Vec<u8>> = vec![
            Vec::new(),
            vec![0x1f],
            vec![0x1f, 0x8b, 0x08],
            b"WARC/".to_vec(),
            b"WARC/1.1\r\nContent-Length: 5\r\n".to_vec(),
            build_warc(&drafts, true),
            build_warc(&drafts, false),
        ];
        // Few seeds: the large mutations (megabytes of markup) are slow in a debug build.
        for seed in 0..8 {
            let mut rng = Rng::new(seed);
            for input in &inputs {
                for kind in ByteKind::ALL {
                    let _ = mutate_bytes(input, kind, &mut rng);
                }
                for kind in WarcKind::ALL {
                    let _ = mutate_warc(input, kind, &mut rng);
                }
                let _ = real_warc(&mut rng, input);
                let _ = plain_records(&mut rng, input);
                let _ = record_warc(&mut rng, input.clone());
            }
            for kind in PageKind::ALL {
                for html in [Vec::new(), b"<".to_vec(), sample_pages().remove(0)] {
                    let mut draft = PageDraft {
                        url: String::new(),
                        content_type: String::new(),
                        html,
                    };
                    let _ = mutate_page(&mut draft, kind, &mut rng, b"");
                    let _ = mutate_page(&mut draft, kind, &mut rng, b"<p>donor</p>");
                }
            }
            let _ = html_page(&mut rng, Vec::new(), b"");
        }
    }

    /// `length_too_large` on a length already at `u64::MAX` (as `length_huge` leaves it), then
    /// `length_too_small`: lengths compose without overflow.
    #[test]
    fn lengths_compose_without_overflow() {
        let record = b"WARC/1.1\r\nWARC-Type: resource\r\nContent-Length: 18446744073709551615\r\n\r\nx\r\n\r\n";
        for seed in 0..200 {
            let mut rng = Rng::new(seed);
            let (out, _) = mutate_warc(record, WarcKind::LengthTooLarge, &mut rng);
            let (_, _) = mutate_warc(&out, WarcKind::LengthTooSmall, &mut rng);
        }
    }

    #[test]
    fn gzip_damage_lands_inside_a_member() {
        let drafts = sample_drafts();
        let warc = build_warc(&drafts, true);
        let mut rng = Rng::new(7);
        for _ in 0..20 {
            let (cut, name) = mutate_bytes(&warc, ByteKind::GzipCutMember, &mut rng);
            assert_eq!(name, "gzip_cut_member");
            assert!(cut.len() < warc.len());
            let (flipped, _) = mutate_bytes(&warc, ByteKind::GzipFlipDeflate, &mut rng);
            assert_eq!(flipped.len(), warc.len());
            assert_ne!(flipped, warc);
        }
    }
}
