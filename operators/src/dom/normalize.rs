//! The text normalization behind content hashes.
//!
//! Two pages that share a header must give it the same hash, so the hash sees the text as a
//! reader does and ignores what varies between renderings of the same template:
//!
//! - **Whitespace** runs (any Unicode white space, `&nbsp;` included) collapse to one space and
//!   ends are trimmed: indentation and line breaks in markup are invisible, and templating
//!   engines emit them differently from page to page.
//! - **Case** is folded (lower case): CSS `text-transform` makes case a styling choice, and the
//!   same menu entry appears as "Home" and "HOME" in one site's templates.
//! - **Digits are kept.** Folding digit runs would let a header survive a date change, but it
//!   also makes every `ISBN: 978…`, price, score and date line of a site one block, and
//!   SiteLevel(θ) then calls those data values templates (on a book shop, every page's ISBN
//!   line). Losing content costs more than missing a template: the header whose date changes
//!   still has its menu and logo found as templates one level down.
//! - Punctuation and letters are otherwise kept: a one-word change is a different block.
//!
//! Character and word counts are of the whitespace-collapsed text (before case folding),
//! i.e. what a reader sees.

/// What the reader sees of a piece of text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TextMeasure {
    /// Characters after whitespace collapsing and trimming.
    pub chars: u32,
    /// Whitespace-separated words.
    pub words: u32,
}

/// Writes the hash form of `text` into `out` (cleared first) and measures the visible text.
///
/// Runs over every character of every page: ASCII bytes take a byte path and only the others
/// are decoded (the same answers either way; a test checks them against `char`'s).
pub fn normalize_for_hash(text: &str, out: &mut Vec<u8>) -> TextMeasure {
    out.clear();
    let mut measure = TextMeasure::default();
    // Pending separator: a space is only written between two words.
    let mut in_word = false;
    let mut pending_space = false;
    for unit in text_units(text) {
        let space = match unit {
            TextUnit::Ascii(b) => is_ascii_text_space(b),
            TextUnit::Other(c) => c.is_whitespace(),
        };
        if space {
            if in_word {
                pending_space = true;
                in_word = false;
            }
            continue;
        }
        if pending_space {
            out.push(b' ');
            measure.chars += 1;
            pending_space = false;
        }
        if !in_word {
            measure.words += 1;
            in_word = true;
        }
        measure.chars += 1;
        match unit {
            TextUnit::Ascii(b) => out.push(b.to_ascii_lowercase()),
            TextUnit::Other(c) => push_lowercase(c, out),
        }
    }
    measure
}

/// One character of page text as the byte loops over it read it: an ASCII byte (nearly every
/// character of a page, classified by table) or another character (decoded, and asked the
/// Unicode questions).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TextUnit {
    Ascii(u8),
    Other(char),
}

/// The characters of `text` as [`TextUnit`]s. The walks over every character of every page
/// (hash normalization, the template features' scan, the content blocks' measure, the
/// lexicon's words) share it, so that each has one ASCII path and one Unicode path.
#[inline]
pub(crate) fn text_units(text: &str) -> impl Iterator<Item = TextUnit> + '_ {
    text.chars().map(|c| match u8::try_from(c) {
        Ok(b) if b.is_ascii() => TextUnit::Ascii(b),
        _ => TextUnit::Other(c),
    })
}

/// `char::is_whitespace` on an ASCII byte: what the byte-wise fast paths over ASCII text treat
/// as white space, so that they split text where the general paths split it
/// (`u8::is_ascii_whitespace` leaves out the vertical tab).
pub(crate) const fn is_ascii_text_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t'..=b'\r')
}

/// Appends `c` in lower case, as UTF-8, with a fast path for ASCII. Called per character of
/// every page (twice: hashes and features), hence `inline`.
#[inline]
pub fn push_lowercase(c: char, out: &mut Vec<u8>) {
    if c.is_ascii() {
        out.push((c as u8).to_ascii_lowercase());
    } else {
        let mut utf8 = [0u8; 4];
        for lower in c.to_lowercase() {
            out.extend_from_slice(lower.encode_utf8(&mut utf8).as_bytes());
        }
    }
}

/// Folds a class token for structure hashes: lower case and digit runs to `0`, so that
/// `post-1234` and `post-987` are the same class of node.
pub fn fold_token(token: &str, out: &mut Vec<u8>) {
    out.clear();
    let mut in_digits = false;
    for b in token.bytes() {
        if b.is_ascii_digit() {
            if !in_digits {
                out.push(b'0');
            }
            in_digits = true;
        } else {
            in_digits = false;
            out.push(b.to_ascii_lowercase());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(text: &str) -> (String, TextMeasure) {
        let mut out = Vec::new();
        let measure = normalize_for_hash(text, &mut out);
        (String::from_utf8(out).unwrap(), measure)
    }

    #[test]
    fn collapses_whitespace_and_folds_case_but_keeps_digits() {
        let (text, measure) = norm("\n   Home\u{a0}\t|  NEWS  ©2026 Acme  ");
        assert_eq!(text, "home | news ©2026 acme");
        assert_eq!(
            measure,
            TextMeasure {
                chars: 22,
                words: 5
            }
        );
        assert_eq!(norm("Ünïcode ÄÖ 12.5").0, "ünïcode äö 12.5");
        assert_eq!(norm(" \n\t ").1, TextMeasure::default());
    }

    #[test]
    fn the_byte_path_normalizes_as_the_characters_do() {
        // The definition: collapse `char::is_whitespace` runs, trim, lower-case each char.
        fn by_chars(text: &str) -> (String, TextMeasure) {
            let words: Vec<&str> = text.split_whitespace().collect();
            let joined = words.join(" ");
            let mut out = Vec::new();
            for c in joined.chars() {
                push_lowercase(c, &mut out);
            }
            let measure = TextMeasure {
                chars: joined.chars().count() as u32,
                words: words.len() as u32,
            };
            (String::from_utf8(out).unwrap(), measure)
        }
        let every_ascii: String = (0u8..128).map(char::from).collect();
        for text in [
            every_ascii.as_str(),
            "  It\u{2019}s  \u{2003}CAF\u{c9}\u{a0}\u{a0}ok\u{85}x\u{3000} ",
            "\u{130}stanbul \u{1f600} \u{5317}\u{4eac}",
            "\u{b}a\u{c}B\r\n",
            "",
        ] {
            assert_eq!(norm(text), by_chars(text), "{text:?}");
        }
    }

    #[test]
    fn ascii_text_space_is_char_white_space() {
        for b in 0..128u8 {
            assert_eq!(is_ascii_text_space(b), char::from(b).is_whitespace(), "{b}");
        }
    }

    #[test]
    fn tokens_fold_digits() {
        let mut out = Vec::new();
        fold_token("Post-1234", &mut out);
        assert_eq!(out, b"post-0");
    }
}
