//! The content of `<script>` and `<style>`-like elements, taken from the input in one piece.
//!
//! Scripts are a large share of crawled HTML's bytes, and nothing downstream reads their text but
//! its length: the tokenizer hands it over as one text token. Finding where the content ends is
//! simpler than tokenizing it: the end tag is the first `</script` (`</style`, ...) followed by
//! whitespace, `/` or `>`, except that in a script `<!--` ... `-->` changes the rules (the
//! standard's script-data escape states, reproduced here): inside it, `<script` opens a section
//! where `</script` does not end the script.

use std::borrow::Cow;

use memchr::{memchr, memchr2};

/// The byte offset where the content of a raw-text element named `tag` (lower case) ends: at
/// the `<` of its end tag, or the text's length if there is none.
pub(super) fn content_end(text: &str, tag: &str) -> usize {
    if tag == "script" {
        script_end(text.as_bytes())
    } else {
        rawtext_end(text.as_bytes(), tag.as_bytes())
    }
}

/// The content as the tokenizer would give it: line breaks normalized to `\n`, NUL replaced.
pub(super) fn normalized(content: &str) -> Cow<'_, str> {
    if memchr2(b'\r', b'\0', content.as_bytes()).is_none() {
        return Cow::Borrowed(content);
    }
    Cow::Owned(
        content
            .replace("\r\n", "\n")
            .replace('\r', "\n")
            .replace('\0', "\u{fffd}"),
    )
}

fn rawtext_end(b: &[u8], tag: &[u8]) -> usize {
    let mut at = 0;
    while let Some(lt) = memchr(b'<', &b[at..]) {
        let i = at + lt;
        if b.get(i + 1) == Some(&b'/') && names_tag(b, i + 2, tag) {
            return i;
        }
        at = i + 1;
    }
    b.len()
}

/// Whether `b[from..]` is `tag` (ASCII case-insensitive) followed by a character that ends a
/// tag name.
fn names_tag(b: &[u8], from: usize, tag: &[u8]) -> bool {
    let end = from + tag.len();
    end < b.len()
        && b[from..end].eq_ignore_ascii_case(tag)
        && matches!(b[end], b'\t' | b'\n' | b'\x0c' | b'\r' | b' ' | b'/' | b'>')
}

/// The standard's script-data states, folded: the dash states only count dashes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Script {
    Data,
    /// Inside `<!--`, with how many dashes were just seen (0, 1, 2 or more).
    Escaped(u8),
    /// Inside `<script` within an escaped section.
    DoubleEscaped(u8),
}

fn script_end(b: &[u8]) -> usize {
    const SCRIPT: &[u8] = b"script";
    let mut state = Script::Data;
    let mut i = 0;
    while i < b.len() {
        match state {
            Script::Data => {
                let Some(lt) = memchr(b'<', &b[i..]) else {
                    return b.len();
                };
                i += lt;
                if b.get(i + 1) == Some(&b'/') && names_tag(b, i + 2, SCRIPT) {
                    return i;
                }
                if b[i + 1..].starts_with(b"!--") {
                    // The dashes of `<!--` count: `<!-->` closes at once.
                    state = Script::Escaped(2);
                    i += 4;
                } else {
                    i += 1;
                }
            }
            Script::Escaped(dashes) => {
                match b[i] {
                    b'-' => state = Script::Escaped(dashes.saturating_add(1).min(2)),
                    b'>' if dashes >= 2 => state = Script::Data,
                    b'<' => {
                        if b.get(i + 1) == Some(&b'/') && names_tag(b, i + 2, SCRIPT) {
                            return i;
                        }
                        state = if names_tag(b, i + 1, SCRIPT) {
                            i += SCRIPT.len();
                            Script::DoubleEscaped(0)
                        } else {
                            Script::Escaped(0)
                        };
                    }
                    _ => {
                        // Nothing changes until the next dash or `<`.
                        match memchr2(b'-', b'<', &b[i..]) {
                            Some(next) if next > 0 => {
                                i += next;
                                state = Script::Escaped(0);
                                continue;
                            }
                            Some(_) => {}
                            None => return b.len(),
                        }
                        state = Script::Escaped(0);
                    }
                }
                i += 1;
            }
            Script::DoubleEscaped(dashes) => {
                match b[i] {
                    b'-' => state = Script::DoubleEscaped(dashes.saturating_add(1).min(2)),
                    b'>' if dashes >= 2 => state = Script::Data,
                    b'<' if b.get(i + 1) == Some(&b'/') && names_tag(b, i + 2, SCRIPT) => {
                        // `</script` here ends the inner script, not this one.
                        i += 1 + SCRIPT.len();
                        state = Script::Escaped(0);
                    }
                    _ => state = Script::DoubleEscaped(0),
                }
                i += 1;
            }
        }
    }
    b.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn script(text: &str) -> &str {
        &text[..content_end(text, "script")]
    }

    #[test]
    fn a_script_ends_at_its_end_tag_whatever_its_case() {
        assert_eq!(script("if (a<b) x();</SCRIPT >rest"), "if (a<b) x();");
        assert_eq!(script("a</scripts></script>"), "a</scripts>");
        assert_eq!(script("no end"), "no end");
        assert_eq!(script("</script"), "</script");
    }

    #[test]
    fn comments_in_scripts_follow_the_escape_states() {
        // An escaped section ends the script at a plain end tag...
        assert_eq!(script("<!-- x </script> y"), "<!-- x ");
        // ... but `<script` inside it opens a section its own `</script` closes.
        let text = "<!-- document.write('<script>a</script>') --></script>tail";
        assert_eq!(
            script(text),
            "<!-- document.write('<script>a</script>') -->"
        );
        // `-->` returns to plain script data, `<!-->` at once.
        assert_eq!(
            script("<!-- a --> <script> </script>"),
            "<!-- a --> <script> "
        );
        assert_eq!(script("<!--><script></script>"), "<!--><script>");
    }

    #[test]
    fn other_raw_text_ends_at_the_first_end_tag_of_its_name() {
        let text = "p { x: '</div>' } </style>rest";
        assert_eq!(&text[..content_end(text, "style")], "p { x: '</div>' } ");
    }

    #[test]
    fn line_breaks_and_nul_become_what_the_tokenizer_gives() {
        assert_eq!(normalized("a\r\nb\rc\0"), "a\nb\nc\u{fffd}");
        assert!(matches!(normalized("plain"), Cow::Borrowed(_)));
    }
}
