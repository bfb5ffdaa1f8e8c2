//! Turning body bytes into text in the order a browser decides the encoding: byte-order mark,
//! HTTP `charset`, `<meta>` prescan, then statistical detection (chardetng, which is what
//! Firefox uses). Decoding is encoding_rs; malformed sequences become U+FFFD but the rest of the
//! page keeps its real characters — never lossy UTF-8 of non-UTF-8 bytes.
//!
//! A declared encoding is trusted even when the bytes disagree, as browsers do: a page that
//! says UTF-8 but holds a few stray Latin-1 bytes is far more common than a page whose whole
//! declaration is wrong, and redetecting would garble every non-ASCII character of the former.

use encoding_rs::{Encoding, UTF_16BE, UTF_16LE, UTF_8, WINDOWS_1252, X_USER_DEFINED};
use serde::{Deserialize, Serialize};

/// How many leading bytes the `<meta>` prescan looks at. The HTML standard says 1024; real
/// pages often put long comments or scripts first, so we look further (still cheap).
const PRESCAN_BYTES: usize = 4096;
/// How many bytes chardetng sees; its guess settles long before this.
const DETECT_BYTES: usize = 64 << 10;

/// Where the encoding came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CharsetSource {
    Bom,
    HttpHeader,
    Meta,
    Detected,
}

impl CharsetSource {
    pub fn as_str(self) -> &'static str {
        match self {
            CharsetSource::Bom => "bom",
            CharsetSource::HttpHeader => "http_header",
            CharsetSource::Meta => "meta",
            CharsetSource::Detected => "detected",
        }
    }
}

/// A decoded page body.
#[derive(Debug)]
pub struct DecodedText {
    pub text: String,
    pub encoding: &'static Encoding,
    pub source: CharsetSource,
    /// True when some byte sequences were malformed for `encoding` (replaced by U+FFFD).
    pub had_errors: bool,
}

/// Decodes `body`. `http_charset` is the Content-Type `charset` parameter, if any; `tld` the
/// page host's top-level domain (chardetng uses it to break ties, e.g. `ru` vs `de`).
pub fn decode(body: &[u8], http_charset: Option<&str>, tld: Option<&str>) -> DecodedText {
    if let Some((encoding, bom_len)) = Encoding::for_bom(body) {
        return finish(&body[bom_len..], encoding, CharsetSource::Bom);
    }
    if let Some(encoding) =
        http_charset.and_then(|label| Encoding::for_label(label.trim().as_bytes()))
    {
        return finish(body, encoding, CharsetSource::HttpHeader);
    }
    if let Some(encoding) = prescan_meta(body) {
        return finish(body, encoding, CharsetSource::Meta);
    }
    // Undeclared and valid UTF-8: chardetng would answer UTF-8 too (or a legacy encoding for
    // pure ASCII, which decodes identically), so skip its statistics.
    if std::str::from_utf8(body).is_ok() {
        return finish(body, UTF_8, CharsetSource::Detected);
    }
    let mut detector = chardetng::EncodingDetector::new();
    let sample = &body[..body.len().min(DETECT_BYTES)];
    detector.feed(sample, sample.len() == body.len());
    let tld = tld.filter(|t| t.bytes().all(|b| b.is_ascii_alphanumeric()));
    let encoding = detector.guess(tld.map(str::as_bytes), true);
    finish(body, encoding, CharsetSource::Detected)
}

fn finish(bytes: &[u8], encoding: &'static Encoding, source: CharsetSource) -> DecodedText {
    let (text, had_errors) = encoding.decode_without_bom_handling(bytes);
    DecodedText {
        text: text.into_owned(),
        encoding,
        source,
        had_errors,
    }
}

/// Finds a `<meta charset=…>` or `<meta http-equiv content="…; charset=…">` declaration in the
/// first bytes of the page, skipping comments.
pub fn prescan_meta(body: &[u8]) -> Option<&'static Encoding> {
    let head = &body[..body.len().min(PRESCAN_BYTES)];
    let mut at = 0;
    while let Some(found) = memchr::memchr(b'<', &head[at..]) {
        let start = at + found;
        let rest = &head[start..];
        if rest.starts_with(b"<!--") {
            match memchr::memmem::find(&rest[4..], b"-->") {
                Some(end) => at = start + 4 + end + 3,
                None => return None,
            }
            continue;
        }
        let is_meta = rest.len() > 5
            && rest[1..5].eq_ignore_ascii_case(b"meta")
            && matches!(rest[5], b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' | b'/');
        if is_meta {
            let end = memchr::memchr(b'>', rest).unwrap_or(rest.len());
            if let Some(encoding) = charset_in_tag(&rest[5..end]) {
                // The standard's fix-ups: a page cannot really be UTF-16 if we could read this
                // ASCII declaration, and x-user-defined means windows-1252 here.
                return Some(if encoding == UTF_16LE || encoding == UTF_16BE {
                    UTF_8
                } else if encoding == X_USER_DEFINED {
                    WINDOWS_1252
                } else {
                    encoding
                });
            }
            at = start + end;
        } else {
            at = start + 1;
        }
    }
    None
}

/// The encoding named after `charset` in a tag's attribute text: covers both the `charset`
/// attribute and a `charset=` inside a `content` value.
fn charset_in_tag(attributes: &[u8]) -> Option<&'static Encoding> {
    let lower = attributes.to_ascii_lowercase();
    let mut from = 0;
    while let Some(found) = memchr::memmem::find(&lower[from..], b"charset") {
        let mut i = from + found + b"charset".len();
        from = i;
        while lower.get(i).is_some_and(u8::is_ascii_whitespace) {
            i += 1;
        }
        if lower.get(i) != Some(&b'=') {
            continue;
        }
        i += 1;
        while lower
            .get(i)
            .is_some_and(|b| b.is_ascii_whitespace() || *b == b'"' || *b == b'\'')
        {
            i += 1;
        }
        let end = lower[i..]
            .iter()
            .position(|b| b.is_ascii_whitespace() || matches!(b, b'"' | b'\'' | b';' | b'/' | b'>'))
            .map_or(lower.len(), |p| i + p);
        if let Some(encoding) = Encoding::for_label(&lower[i..end]) {
            return Some(encoding);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use encoding_rs::{SHIFT_JIS, WINDOWS_1251};

    #[test]
    fn prescan_finds_both_meta_forms_and_skips_comments() {
        assert_eq!(
            prescan_meta(b"<html><meta charset=\"windows-1251\">"),
            Some(WINDOWS_1251)
        );
        assert_eq!(
            prescan_meta(b"<META HTTP-EQUIV=Content-Type CONTENT='text/html; charset=Shift_JIS'>"),
            Some(SHIFT_JIS)
        );
        assert_eq!(prescan_meta(b"<!-- <meta charset=koi8-r> --><p>"), None);
        assert_eq!(prescan_meta(b"<meta charset=utf-16le>"), Some(UTF_8));
        assert_eq!(prescan_meta(b"<metadata charset=koi8-r>"), None);
    }

    #[test]
    fn order_is_bom_header_meta_detection() {
        let page = b"\xEF\xBB\xBF<meta charset=koi8-r>\xC3\xA9";
        let out = decode(page, Some("iso-8859-1"), None);
        assert_eq!((out.encoding, out.source), (UTF_8, CharsetSource::Bom));
        assert!(out.text.ends_with('é'));

        let out = decode(b"<meta charset=koi8-r>\xE9", Some("ISO-8859-1"), None);
        assert_eq!(out.source, CharsetSource::HttpHeader);
        assert!(out.text.ends_with('é'));

        let out = decode(b"<meta charset=iso-8859-1>\xE9", Some("bogus"), None);
        assert_eq!(out.source, CharsetSource::Meta);
        assert!(out.text.ends_with('é'));
    }
}
