//! Turning body bytes into text in the order a browser decides the encoding: byte-order mark,
//! HTTP `charset`, `<meta>` prescan, then statistical detection (chardetng, which is what
//! Firefox uses). Decoding is encoding_rs; malformed sequences become U+FFFD but the rest of the
//! page keeps its real characters — never lossy UTF-8 of non-UTF-8 bytes.
//!
//! A declared encoding is trusted even when the bytes disagree in places, as browsers do: a
//! page that says UTF-8 but holds a few stray Latin-1 bytes is far more common than a page
//! whose whole declaration is wrong, and redetecting would garble every non-ASCII character of
//! the former. Only where the declaration's reading would garble *every* non-ASCII character
//! do the bytes win ([`CharsetSource::Bytes`]):
//!
//! - a legacy declaration (`iso-8859-1`, `windows-1251`, `gbk`, …) over bytes that are valid
//!   UTF-8 and not all ASCII is read as UTF-8. Real Latin-1 or Cyrillic text is never valid
//!   UTF-8 (an accented letter would have to be followed by one to three of the symbols
//!   0x80–0xBF), while UTF-8 pages under a stale declaration are common: servers that send
//!   Apache's old default `charset=ISO-8859-1` with every page, and archives that re-encoded
//!   their pages to UTF-8 and left the `<meta>` (L3S-GN1's originals: 111 of 621; 8 of
//!   dragnet's pages). Read as declared, each `’` of such a page becomes `â€™`;
//! - a UTF-8 declaration over bytes without one valid multi-byte sequence, only stray high
//!   bytes, is a legacy page under a copied template's declaration: it is detected as an
//!   undeclared page is, since reading it as UTF-8 would make every non-ASCII character U+FFFD.
//!
//! Extractors that read the bytes as UTF-8 first whatever the declaration (trafilatura's
//! loader, and the harness that runs the peers beside Stencil) decide both cases the
//! same way.

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
    /// The declaration (header or `<meta>`) was contradicted by every non-ASCII byte, and the
    /// bytes decided (module docs).
    Bytes,
}

impl CharsetSource {
    pub fn as_str(self) -> &'static str {
        match self {
            CharsetSource::Bom => "bom",
            CharsetSource::HttpHeader => "http_header",
            CharsetSource::Meta => "meta",
            CharsetSource::Detected => "detected",
            CharsetSource::Bytes => "bytes",
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
    let declared = http_charset
        .and_then(|label| Encoding::for_label(label.trim().as_bytes()))
        .map(|encoding| (encoding, CharsetSource::HttpHeader))
        .or_else(|| prescan_meta(body).map(|encoding| (encoding, CharsetSource::Meta)));
    if let Some((encoding, source)) = declared {
        if let Some(text) = utf8_under_legacy_declaration(body, encoding) {
            return validated_utf8(text, CharsetSource::Bytes);
        }
        let decoded = finish(body, encoding, source);
        // Checked only once the declared reading has failed somewhere, so that the common
        // case, valid UTF-8 declared as such, costs no second pass.
        if decoded.had_errors && encoding == UTF_8 && !holds_utf8_sequence(body) {
            return finish(body, detect(body, tld, false), CharsetSource::Bytes);
        }
        return decoded;
    }
    // Undeclared and valid UTF-8: chardetng would answer UTF-8 too (or a legacy encoding for
    // pure ASCII, which decodes identically), so skip its statistics.
    if let Ok(text) = std::str::from_utf8(body) {
        return validated_utf8(text, CharsetSource::Detected);
    }
    finish(body, detect(body, tld, true), CharsetSource::Detected)
}

/// The body as UTF-8 when bytes declared in a legacy encoding are UTF-8 instead: valid UTF-8
/// and not all ASCII (module docs). UTF-16 and ISO-2022-JP do not read ASCII bytes as ASCII,
/// so a body valid as UTF-8 says nothing against them.
fn utf8_under_legacy_declaration<'b>(
    body: &'b [u8],
    declared: &'static Encoding,
) -> Option<&'b str> {
    if declared == UTF_8 || !declared.is_ascii_compatible() || body.is_ascii() {
        return None;
    }
    std::str::from_utf8(body).ok()
}

/// Text already validated as UTF-8: copied, not validated a second time by encoding_rs.
fn validated_utf8(text: &str, source: CharsetSource) -> DecodedText {
    DecodedText {
        text: text.to_owned(),
        encoding: UTF_8,
        source,
        had_errors: false,
    }
}

/// Whether the bytes hold at least one valid multi-byte UTF-8 sequence.
fn holds_utf8_sequence(body: &[u8]) -> bool {
    body.utf8_chunks().any(|chunk| !chunk.valid().is_ascii())
}

/// chardetng's guess over the first [`DETECT_BYTES`]; `allow_utf8` false when the bytes are
/// known not to be UTF-8.
fn detect(body: &[u8], tld: Option<&str>, allow_utf8: bool) -> &'static Encoding {
    let mut detector = chardetng::EncodingDetector::new();
    let sample = &body[..body.len().min(DETECT_BYTES)];
    detector.feed(sample, sample.len() == body.len());
    let tld = tld.filter(|t| t.bytes().all(|b| b.is_ascii_alphanumeric()));
    detector.guess(tld.map(str::as_bytes), allow_utf8)
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

    #[test]
    fn valid_utf8_under_a_legacy_declaration_is_utf8() {
        // A WordPress page under Apache's old default header, and the same page re-encoded by
        // an archive that left its <meta>.
        let page = "<p>The sect\u{2019}s trust \u{2014} caf\u{e9}</p>";
        for (header, meta) in [
            (Some("ISO-8859-1"), ""),
            (None, "<meta charset=windows-1251>"),
        ] {
            let body = format!("{meta}{page}");
            let out = decode(body.as_bytes(), header, None);
            assert_eq!((out.encoding, out.source), (UTF_8, CharsetSource::Bytes));
            assert!(out.text.contains("sect\u{2019}s trust \u{2014} caf\u{e9}"));
            assert!(!out.had_errors);
        }
    }

    #[test]
    fn a_legacy_declaration_stands_where_the_bytes_allow_it() {
        // Real Latin-1: é then a letter is no UTF-8 sequence.
        let out = decode(
            b"<meta charset=iso-8859-1><p>caf\xE9s et cr\xE8me",
            None,
            None,
        );
        assert_eq!(
            (out.encoding, out.source),
            (WINDOWS_1252, CharsetSource::Meta)
        );
        assert!(out.text.ends_with("caf\u{e9}s et cr\u{e8}me"));
        // Pure ASCII reads alike either way, so the declaration is kept.
        let out = decode(b"<p>caf&eacute;", Some("iso-8859-1"), None);
        assert_eq!(
            (out.encoding, out.source),
            (WINDOWS_1252, CharsetSource::HttpHeader)
        );
        // UTF-16 does not read ASCII bytes as ASCII: no UTF-8 reading contradicts it.
        let out = decode(b"h\0i\0\xE9\0", Some("utf-16le"), None);
        assert_eq!(
            (out.encoding, out.source),
            (UTF_16LE, CharsetSource::HttpHeader)
        );
        assert_eq!(out.text, "hi\u{e9}");
    }

    #[test]
    fn a_utf8_declaration_stands_over_stray_bytes_but_not_over_a_legacy_page() {
        // Stray Latin-1 bytes beside real UTF-8: the declaration stands, each stray byte is
        // U+FFFD and the rest keeps its characters.
        let out = decode(b"<meta charset=utf-8>\xE2\x80\x99s \xE9t\xE9", None, None);
        assert_eq!((out.encoding, out.source), (UTF_8, CharsetSource::Meta));
        assert!(out.had_errors);
        assert!(out.text.ends_with("\u{2019}s \u{fffd}t\u{fffd}"));
        // Not one valid multi-byte sequence: a Latin-1 page under a copied declaration.
        let body = b"<meta charset=utf-8><p>Le caf\xE9 de la gare est ferm\xE9 le dimanche \
            et les jours f\xE9ri\xE9s; la client\xE8le se plaint, \xE0 juste titre.</p>";
        let out = decode(body, Some("utf-8"), Some("fr"));
        assert_eq!(out.source, CharsetSource::Bytes);
        assert_ne!(out.encoding, UTF_8);
        assert!(!out.had_errors);
        assert!(out.text.contains("caf\u{e9} de la gare est ferm\u{e9}"));
    }
}
