//! Writing WARC files as Common Crawl does: WARC/1.1, one gzip member per record, so any
//! record can be fetched alone by its offset.
//!
//! Written by hand because the `warc` crate's gzip writer makes one gzip stream for the whole
//! file and generates random record ids; ours are derived from the content so the same input
//! gives a byte-identical file.

use std::io::{self, Write};

use flate2::write::GzEncoder;
use flate2::Compression as Level;

/// Writes records to `out`, each compressed as its own gzip member (or plain, if `gzip` is
/// false). Tracks offsets so callers can index what they wrote.
pub struct WarcWriter<W: Write> {
    out: W,
    gzip: bool,
    offset: u64,
}

/// One record to write. `block` is the complete record block (for a `response`, the HTTP
/// status line, headers and body).
pub struct NewRecord<'a> {
    pub record_type: &'a str,
    pub target_uri: Option<&'a str>,
    pub date: &'a str,
    pub content_type: &'a str,
    pub block: &'a [u8],
}

impl<W: Write> WarcWriter<W> {
    pub fn new(out: W, gzip: bool) -> Self {
        WarcWriter {
            out,
            gzip,
            offset: 0,
        }
    }

    /// Writes one record and returns the offset it starts at.
    pub fn write(&mut self, record: &NewRecord<'_>) -> io::Result<u64> {
        let bytes = serialize(record);
        let start = self.offset;
        if self.gzip {
            let mut member = GzEncoder::new(Vec::with_capacity(bytes.len() / 3), Level::new(6));
            member.write_all(&bytes)?;
            let member = member.finish()?;
            self.out.write_all(&member)?;
            self.offset += member.len() as u64;
        } else {
            self.out.write_all(&bytes)?;
            self.offset += bytes.len() as u64;
        }
        Ok(start)
    }

    pub fn into_inner(self) -> W {
        self.out
    }
}

/// The uncompressed bytes of one record, trailing CRLF CRLF included.
pub fn serialize(record: &NewRecord<'_>) -> Vec<u8> {
    let id = xxhash_rust::xxh3::xxh3_128(
        &[
            record.record_type.as_bytes(),
            record.target_uri.unwrap_or("").as_bytes(),
            record.date.as_bytes(),
            record.block,
        ]
        .concat(),
    );
    let mut out = Vec::with_capacity(record.block.len() + 512);
    out.extend_from_slice(b"WARC/1.1\r\n");
    out.extend_from_slice(format!("WARC-Type: {}\r\n", record.record_type).as_bytes());
    out.extend_from_slice(format!("WARC-Record-ID: <urn:uuid:{}>\r\n", uuid_text(id)).as_bytes());
    out.extend_from_slice(format!("WARC-Date: {}\r\n", record.date).as_bytes());
    if let Some(uri) = record.target_uri {
        out.extend_from_slice(format!("WARC-Target-URI: {uri}\r\n").as_bytes());
    }
    out.extend_from_slice(format!("Content-Type: {}\r\n", record.content_type).as_bytes());
    out.extend_from_slice(format!("Content-Length: {}\r\n\r\n", record.block.len()).as_bytes());
    out.extend_from_slice(record.block);
    out.extend_from_slice(b"\r\n\r\n");
    out
}

/// An HTTP/1.1 response block: status line, the given headers, a Content-Length, the body.
pub fn http_response(status: u16, headers: &[(&str, &str)], body: &[u8]) -> Vec<u8> {
    let mut out = format!("HTTP/1.1 {status} {}\r\n", reason_phrase(status)).into_bytes();
    for (name, value) in headers {
        out.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
    }
    if !headers
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("content-length"))
    {
        out.extend_from_slice(format!("Content-Length: {}\r\n", body.len()).as_bytes());
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(body);
    out
}

fn reason_phrase(status: u16) -> &'static str {
    match status {
        200 => "OK",
        301 => "Moved Permanently",
        302 => "Found",
        304 => "Not Modified",
        404 => "Not Found",
        500 => "Internal Server Error",
        _ => "Status",
    }
}

fn uuid_text(id: u128) -> String {
    let hex = format!("{id:032x}");
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}
