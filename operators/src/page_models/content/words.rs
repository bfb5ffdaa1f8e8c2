//! The words of a text as the content model reads them: runs of letters, digits and `_`,
//! lower-cased and hashed, each handed to a callback without allocating. The blocks hash their
//! words once ([`super::blocks`]); the lexicon ([`super::lexicon`]) and the repeats and reviews
//! rules ([`super::rules`]) read those hashes.

use xxhash_rust::xxh3::xxh3_64;

use crate::dom::normalize::{text_units, TextUnit};

/// Words longer than this (in bytes) are not looked up: URLs, hashes and run-together text.
const LONGEST_WORD: usize = 40;

/// Calls `f` with the hash of every word of `text` (`None` for a word too long to look up),
/// lower-casing into a buffer on the stack: no allocation per word. ASCII bytes, most of the
/// text, are handled without decoding characters.
pub(crate) fn for_each_word(text: &str, mut f: impl FnMut(Option<u64>)) {
    if text.is_ascii() {
        for_each_ascii_word(text.as_bytes(), f);
        return;
    }
    let mut buffer = [0u8; LONGEST_WORD];
    let mut len = 0usize;
    let mut too_long = false;
    let mut flush = |len: &mut usize, too_long: &mut bool, buffer: &[u8]| {
        if *len > 0 || *too_long {
            f((!*too_long).then(|| xxh3_64(&buffer[..*len])));
        }
        *len = 0;
        *too_long = false;
    };
    for unit in text_units(text) {
        let c = match unit {
            TextUnit::Ascii(b) => {
                if !(b.is_ascii_alphanumeric() || b == b'_') {
                    flush(&mut len, &mut too_long, &buffer);
                } else if len < LONGEST_WORD {
                    buffer[len] = b.to_ascii_lowercase();
                    len += 1;
                } else {
                    too_long = true;
                }
                continue;
            }
            TextUnit::Other(c) => c,
        };
        if !c.is_alphanumeric() {
            flush(&mut len, &mut too_long, &buffer);
            continue;
        }
        for lower in c.to_lowercase() {
            let mut utf8 = [0u8; 4];
            let encoded = lower.encode_utf8(&mut utf8).as_bytes();
            if too_long || len + encoded.len() > LONGEST_WORD {
                too_long = true;
                break;
            }
            buffer[len..len + encoded.len()].copy_from_slice(encoded);
            len += encoded.len();
        }
    }
    flush(&mut len, &mut too_long, &buffer);
}

/// [`for_each_word`] for ASCII text, most of the text: a word already in lower case (most words)
/// is hashed where it stands, and only a word with a capital is copied to be lower-cased.
fn for_each_ascii_word(text: &[u8], mut f: impl FnMut(Option<u64>)) {
    let word_byte = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut i = 0;
    while i < text.len() {
        while i < text.len() && !word_byte(text[i]) {
            i += 1;
        }
        let start = i;
        let mut capital = false;
        while i < text.len() && word_byte(text[i]) {
            capital |= text[i].is_ascii_uppercase();
            i += 1;
        }
        let word = &text[start..i];
        if word.is_empty() {
            break;
        }
        if word.len() > LONGEST_WORD {
            f(None);
        } else if capital {
            let mut lower = [0u8; LONGEST_WORD];
            let lower = &mut lower[..word.len()];
            lower.copy_from_slice(word);
            lower.make_ascii_lowercase();
            f(Some(xxh3_64(lower)));
        } else {
            f(Some(xxh3_64(word)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<Option<u64>> {
        let mut out = Vec::new();
        for_each_word(text, |h| out.push(h));
        out
    }

    #[test]
    fn words_are_lower_cased_runs_of_word_characters() {
        let hash = |w: &str| Some(xxh3_64(w.as_bytes()));
        assert_eq!(
            words("Add to CART, snake_case 42!"),
            [
                hash("add"),
                hash("to"),
                hash("cart"),
                hash("snake_case"),
                hash("42")
            ]
        );
        assert_eq!(words("Ünïcode ÄÖ"), [hash("ünïcode"), hash("äö")]);
        assert_eq!(words("  ,;  "), []);
        let long = "x".repeat(LONGEST_WORD + 1);
        assert_eq!(words(&format!("a {long} b")), [hash("a"), None, hash("b")]);
        // Exactly as long as the buffer: still a word.
        let fits = "y".repeat(LONGEST_WORD);
        assert_eq!(words(&fits), [hash(&fits)]);
    }

    /// The words as `\w+` on lower-cased text finds them, the plain way.
    fn reference(text: &str) -> Vec<Option<u64>> {
        text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .map(|w| {
                let lower: String = w.chars().flat_map(char::to_lowercase).collect();
                (lower.len() <= LONGEST_WORD).then(|| xxh3_64(lower.as_bytes()))
            })
            .collect()
    }

    #[test]
    fn the_fast_path_agrees_with_the_plain_way() {
        let unicode: Vec<char> =
            "aZ9_ .,-\u{e9}\u{c9}\u{df}\u{130}\u{3a3}\u{4e2d}\u{1f600}\u{a0}\t"
                .chars()
                .collect();
        // ASCII text takes its own path.
        let ascii: Vec<char> = "aZq9_ .,-\t\n".chars().collect();
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for round in 0..40_000 {
            let alphabet = if round % 2 == 0 { &unicode } else { &ascii };
            let mut text = String::new();
            for _ in 0..crate::xorshift(&mut state) % 60 {
                let r = crate::xorshift(&mut state);
                let c = alphabet[(r % alphabet.len() as u64) as usize];
                // Runs of one letter sometimes make words longer than the buffer.
                for _ in 0..1 + (r >> 60) as usize * 3 {
                    text.push(c);
                }
            }
            assert_eq!(words(&text), reference(&text), "{text:?}");
        }
    }
}
