//! The HTTP response inside a WARC `response` record: status, headers, and the body as the
//! server meant it (chunking and Content-Encoding undone).
//!
//! Archives disagree about what they store: Common Crawl removes transfer and content encodings
//! and renames the headers to `X-Crawler-*`; other crawlers keep the raw bytes; some remove the
//! encoding but keep the header. So every decoding step checks that its input really is encoded
//! before trusting a header, and falls back to the bytes as they are.

use std::borrow::Cow;
use std::io::Read;

/// The header fields later stages need.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HttpHead {
    pub status: u16,
    pub content_type: Option<String>,
    pub content_encoding: Option<String>,
    pub transfer_encoding: Option<String>,
}

/// Parses the status line and headers; returns them with the body that follows.
pub fn parse_response(block: &[u8]) -> Result<(HttpHead, &[u8]), String> {
    let mut config = httparse::ParserConfig::default();
    // Real servers send all of these; a browser shows such pages, so must we.
    config
        .allow_spaces_after_header_name_in_responses(true)
        .allow_obsolete_multiline_headers_in_responses(true)
        .allow_multiple_spaces_in_response_status_delimiters(true)
        .ignore_invalid_headers_in_responses(true);
    let mut capacity = 64;
    loop {
        let mut headers = vec![httparse::EMPTY_HEADER; capacity];
        let mut response = httparse::Response::new(&mut headers);
        match config.parse_response(&mut response, block) {
            Ok(httparse::Status::Complete(body_start)) => {
                let mut head = HttpHead {
                    status: response.code.unwrap_or(0),
                    ..HttpHead::default()
                };
                let mut crawler_decoded_content = false;
                let mut crawler_decoded_transfer = false;
                for header in response.headers.iter() {
                    let value = || String::from_utf8_lossy(header.value).trim().to_string();
                    let name = header.name;
                    if name.eq_ignore_ascii_case("content-type") {
                        head.content_type = Some(value());
                    } else if name.eq_ignore_ascii_case("content-encoding") {
                        head.content_encoding = Some(value().to_ascii_lowercase());
                    } else if name.eq_ignore_ascii_case("transfer-encoding") {
                        head.transfer_encoding = Some(value().to_ascii_lowercase());
                    } else if name.eq_ignore_ascii_case("x-crawler-content-encoding") {
                        crawler_decoded_content = true;
                    } else if name.eq_ignore_ascii_case("x-crawler-transfer-encoding") {
                        crawler_decoded_transfer = true;
                    }
                }
                if crawler_decoded_content {
                    head.content_encoding = None;
                }
                if crawler_decoded_transfer {
                    head.transfer_encoding = None;
                }
                return Ok((head, &block[body_start..]));
            }
            Ok(httparse::Status::Partial) => {
                return Err("HTTP header block is incomplete".to_string())
            }
            Err(httparse::Error::TooManyHeaders) if capacity < 4096 => capacity *= 8,
            Err(e) => return Err(format!("HTTP header: {e}")),
        }
    }
}

/// The MIME type of a Content-Type value, lower-cased, without parameters.
pub fn mime_type(content_type: &str) -> String {
    content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// The `charset` parameter of a Content-Type value.
pub fn charset_param(content_type: &str) -> Option<&str> {
    content_type.split(';').skip(1).find_map(|param| {
        let (name, value) = param.split_once('=')?;
        name.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| value.trim().trim_matches(|c| c == '"' || c == '\''))
    })
}

/// Undoes chunked transfer encoding. `None` when the body is not chunked after all (the
/// archive removed the chunking but kept the header); the flag is true when the chunks stop
/// before the terminating zero-size chunk.
pub fn dechunk(body: &[u8]) -> Option<(Vec<u8>, bool)> {
    let mut out = Vec::with_capacity(body.len());
    let mut rest = body;
    let mut first = true;
    loop {
        match httparse::parse_chunk_size(rest) {
            Ok(httparse::Status::Complete((consumed, size))) => {
                first = false;
                rest = &rest[consumed..];
                if size == 0 {
                    return Some((out, false));
                }
                let size = usize::try_from(size).unwrap_or(usize::MAX);
                if size > rest.len() {
                    out.extend_from_slice(rest);
                    return Some((out, true));
                }
                out.extend_from_slice(&rest[..size]);
                rest = &rest[size..];
                rest = rest
                    .strip_prefix(b"\r\n")
                    .or_else(|| rest.strip_prefix(b"\n"))
                    .unwrap_or(rest);
            }
            _ if first => return None,
            // Chunks ran out without the closing chunk: keep what arrived.
            _ => return Some((out, true)),
        }
    }
}

/// Why a Content-Encoding could not be undone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// The encoding is not one we decode (the name is given).
    Unsupported(String),
    /// The encoded data is corrupt.
    Corrupt(String),
    /// The output would exceed the decompression-ratio bound.
    RatioExceeded { input: usize, limit: usize },
}

/// The decoded body and whether it was cut at `max_output`.
pub struct Decoded<'a> {
    pub body: Cow<'a, [u8]>,
    pub truncated: bool,
}

/// Undoes a Content-Encoding (gzip, deflate, br), bounded by `max_output` bytes and by
/// `max_ratio` times the input size (with a 1 MiB floor, so small pages of very repetitive
/// markup still decode).
pub fn decode_content<'a>(
    encoding: Option<&str>,
    body: &'a [u8],
    max_output: usize,
    max_ratio: usize,
) -> Result<Decoded<'a>, DecodeError> {
    let identity = || {
        Ok(Decoded {
            body: Cow::Borrowed(body),
            truncated: false,
        })
    };
    let Some(encoding) = encoding.map(str::trim).filter(|e| !e.is_empty()) else {
        return identity();
    };
    let ratio_limit = body.len().saturating_mul(max_ratio).max(1 << 20);
    let limit = ratio_limit.min(max_output);
    let looks_like_markup = || {
        body.iter()
            .find(|b| !b.is_ascii_whitespace())
            .is_some_and(|&b| b == b'<')
    };
    let result = match encoding {
        "identity" | "none" => return identity(),
        "gzip" | "x-gzip" => {
            if !body.starts_with(&[0x1f, 0x8b]) {
                return identity();
            }
            read_bounded(flate2::read::MultiGzDecoder::new(body), limit)
        }
        "deflate" => {
            if looks_like_markup() {
                return identity();
            }
            // The standard says zlib-wrapped; many servers send raw deflate.
            let zlib = body.len() >= 2
                && body[0] & 0x0f == 8
                && (u16::from(body[0]) << 8 | u16::from(body[1])) % 31 == 0;
            if zlib {
                read_bounded(flate2::read::ZlibDecoder::new(body), limit)
            } else {
                read_bounded(flate2::read::DeflateDecoder::new(body), limit)
            }
        }
        "br" => {
            if looks_like_markup() {
                return identity();
            }
            read_bounded(brotli_decompressor::Decompressor::new(body, 1 << 14), limit)
        }
        other => return Err(DecodeError::Unsupported(other.to_string())),
    };
    let (out, over) = result.map_err(|e| DecodeError::Corrupt(e.to_string()))?;
    if over && ratio_limit < max_output {
        return Err(DecodeError::RatioExceeded {
            input: body.len(),
            limit: ratio_limit,
        });
    }
    Ok(Decoded {
        body: Cow::Owned(out),
        truncated: over,
    })
}

/// Reads at most `limit` bytes; the flag says whether more were available.
fn read_bounded(reader: impl Read, limit: usize) -> std::io::Result<(Vec<u8>, bool)> {
    let mut out = Vec::new();
    // Saturating: `limit` comes from the page-size and ratio limits, which may be usize::MAX.
    reader
        .take((limit as u64).saturating_add(1))
        .read_to_end(&mut out)?;
    let over = out.len() > limit;
    out.truncate(limit);
    Ok((out, over))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn parses_status_headers_and_body() {
        let block = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=\"ISO-8859-1\"\r\nX-Crawler-Content-Encoding: gzip\r\nContent-Encoding: gzip\r\n\r\n<p>hi";
        let (head, body) = parse_response(block).unwrap();
        assert_eq!(head.status, 200);
        assert_eq!(head.content_encoding, None, "crawler already decoded it");
        assert_eq!(
            charset_param(head.content_type.as_deref().unwrap()),
            Some("ISO-8859-1")
        );
        assert_eq!(body, b"<p>hi");
    }

    #[test]
    fn many_headers_and_bare_newlines() {
        let mut block = b"HTTP/1.0  200  OK\n".to_vec();
        for i in 0..300 {
            block.extend_from_slice(format!("X-H{i}: v\n").as_bytes());
        }
        block.extend_from_slice(b"Content-Type : text/html\n\nbody");
        let (head, body) = parse_response(&block).unwrap();
        assert_eq!(head.content_type.as_deref(), Some("text/html"));
        assert_eq!(body, b"body");
    }

    #[test]
    fn dechunks_and_detects_unchunked_bodies() {
        assert_eq!(
            dechunk(b"4\r\nWiki\r\n5;ext=1\r\npedia\r\n0\r\n\r\n"),
            Some((b"Wikipedia".to_vec(), false))
        );
        assert_eq!(
            dechunk(b"4\r\nWiki\r\n5\r\npe"),
            Some((b"Wikipe".to_vec(), true))
        );
        assert_eq!(dechunk(b"<html>not chunked"), None);
    }

    #[test]
    fn content_encodings_and_bounds() {
        let html = b"<html><body>hello hello hello</body></html>".repeat(100);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(&html).unwrap();
        let gz = gz.finish().unwrap();
        let out = decode_content(Some("gzip"), &gz, 1 << 20, 100).unwrap();
        assert_eq!(&out.body[..], &html[..]);
        assert!(!out.truncated);

        let mut raw =
            flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
        raw.write_all(&html).unwrap();
        let raw = raw.finish().unwrap();
        assert_eq!(
            &decode_content(Some("deflate"), &raw, 1 << 20, 100)
                .unwrap()
                .body[..],
            &html[..]
        );

        // Header says gzip but the archive stored the decoded body.
        assert_eq!(
            &decode_content(Some("gzip"), &html, 1 << 20, 100)
                .unwrap()
                .body[..],
            &html[..]
        );

        let cut = decode_content(Some("gzip"), &gz, 1000, 100).unwrap();
        assert!(cut.truncated);
        assert_eq!(cut.body.len(), 1000);

        let bomb = vec![0u8; 50 << 20];
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        gz.write_all(&bomb).unwrap();
        let gz = gz.finish().unwrap();
        assert!(matches!(
            decode_content(Some("gzip"), &gz, 64 << 20, 100),
            Err(DecodeError::RatioExceeded { .. })
        ));
        assert!(matches!(
            decode_content(Some("gzip"), &gz[..gz.len() / 2], 64 << 20, 100_000),
            Err(DecodeError::Corrupt(_))
        ));
        // `brotli.compress(b'<html><body><p>brotli body</p></body></html>' * 20)` (Python).
        const BROTLI: [u8; 51] = [
            27, 111, 3, 248, 141, 212, 97, 205, 157, 7, 114, 27, 91, 183, 53, 196, 55, 90, 5, 70,
            17, 198, 11, 108, 192, 129, 38, 6, 1, 197, 56, 176, 223, 2, 236, 128, 9, 48, 132, 242,
            136, 243, 192, 49, 127, 173, 14, 64, 244, 253, 9,
        ];
        let out = decode_content(Some("br"), &BROTLI, 1 << 20, 100).unwrap();
        assert_eq!(
            &out.body[..],
            &b"<html><body><p>brotli body</p></body></html>".repeat(20)[..]
        );
        assert!(matches!(
            decode_content(Some("br"), &BROTLI[..20], 1 << 20, 100),
            Err(DecodeError::Corrupt(_))
        ));
        assert!(matches!(
            decode_content(Some("compress"), b"x", 1 << 20, 100),
            Err(DecodeError::Unsupported(_))
        ));
    }

    /// Limits at their maximum (`--max-page-bytes` and `--max-decompression-ratio` set as
    /// high as they go): the read bound, one byte past the limit, must not overflow.
    #[test]
    fn unbounded_limits_do_not_overflow() {
        let html = b"<html><body><p>no limits</p></body></html>".repeat(10);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&html).unwrap();
        let gz = gz.finish().unwrap();
        let out = decode_content(Some("gzip"), &gz, usize::MAX, usize::MAX).unwrap();
        assert!(!out.truncated);
        assert_eq!(&out.body[..], &html[..]);
    }
}
