//! Text blocks: the units the main-content model judges.
//!
//! A block is the visible text whose nearest line-breaking ancestor (a `<p>`, `<li>`, `<td>`,
//! `<div>`, heading, … — the elements after which `cleaned_text` starts a new line) is one
//! element, its *owner*. `<div>Intro <p>Body</p> tail</div>` has two blocks: the `<p>`'s, and
//! the `<div>`'s own "Intro … tail". Every visible text node belongs to exactly one block, so a
//! page's cleaned text is the text of the blocks called content, and a block is what a reader
//! sees as one line or paragraph: boilerplate detectors since boilerpipe classify at this grain
//! because smaller units (text nodes) split sentences at every link and larger ones (elements)
//! mix a story with its share bar.
//!
//! Everything is computed in one forward pass over the arena (ancestors come before their
//! descendants in pre-order), never by walking a subtree per node.

use html5ever::local_name;

use super::words::for_each_word;
use crate::dom::normalize::{is_ascii_text_space, text_units, TextUnit};
use crate::dom::text::breaks_line;
use crate::dom::Dom;

/// No block (a node that is not visible text).
pub const NONE: u32 = u32::MAX;

/// What one block's own text measures. Counts are over the block's own text nodes only.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BlockStats {
    /// Visible characters, white space collapsed: one per gap between words of a text node
    /// (gaps between text nodes are not counted).
    pub chars: u32,
    pub words: u32,
    /// Characters inside links (`<a href>`).
    pub anchor_chars: u32,
    /// Links that start inside the block.
    pub links: u32,
    /// `.` `!` `?` `;` `:` and `,` (sentence and clause marks).
    pub stops: u32,
    pub commas: u32,
    /// Other punctuation and symbols (`|`, `»`, `·`, `©`, …): what menus and footers are made of.
    pub symbols: u32,
    pub digits: u32,
    /// Words that start with an upper-case letter.
    pub capitalized: u32,
    /// Characters of the words (for the mean word length).
    pub word_chars: u32,
    /// Whether the text ends with a sentence mark.
    pub ends_sentence: bool,
    /// Characters of the page's visible text before the block's first text.
    pub text_start: u32,
    /// Currency signs next to a digit (`$12`, `12 €`).
    pub prices: u32,
}

/// A page's blocks, in document order of their first text.
#[derive(Clone, Debug, Default)]
pub struct Blocks {
    /// The owner element of each block (the document node for text outside any element).
    pub owners: Vec<u32>,
    pub stats: Vec<BlockStats>,
    /// The block of every visible text node; [`NONE`] for every other node.
    pub of_node: Vec<u32>,
    /// Whether each node is inside a link (`<a href>`, the link itself included).
    pub in_link: Vec<bool>,
    /// Visible characters of the whole page (the sum of `stats[..].chars`).
    pub page_chars: u32,
    /// (block, word hash) for every word of every block as the lexicon reads words
    /// ([`super::words::for_each_word`]; words too long to look up left out), in document
    /// order. Hashed here, while each text node is at hand, because the lexicon's scores, the
    /// repeats rule and the reviews rule all read a block's words: one walk over the page's text
    /// serves all three, where a walk per reader would cost a good share of the content model's
    /// time.
    pub words: Vec<(u32, u64)>,
}

impl Blocks {
    pub fn len(&self) -> usize {
        self.owners.len()
    }

    pub fn is_empty(&self) -> bool {
        self.owners.is_empty()
    }
}

/// Splits a page into blocks.
pub fn blocks(dom: &Dom) -> Blocks {
    let n = dom.len();
    let mut owner_of = vec![0u32; n];
    let mut in_link = vec![false; n];
    let mut of_node = vec![NONE; n];
    let mut block_of_owner: Vec<u32> = vec![NONE; n];
    // Pages have about one block per ten nodes: sized so that few pages grow them.
    let mut out = Blocks {
        owners: Vec::with_capacity(n / 8),
        stats: Vec::with_capacity(n / 8),
        ..Blocks::default()
    };
    let mut position = 0u32;
    for i in 0..n {
        let parent = dom.parent(i);
        let inherited_owner = parent.map_or(0, |p| owner_of[p]);
        let inherited_link = parent.is_some_and(|p| in_link[p]);
        if dom.element(i).is_some() {
            owner_of[i] = if breaks_line(dom, i) {
                i as u32
            } else {
                inherited_owner
            };
            in_link[i] = inherited_link
                || (dom.tag(i).is_some_and(|t| *t == local_name!("a")) && dom.href(i).is_some());
            if in_link[i] && !inherited_link {
                let owner = owner_of[i] as usize;
                if block_of_owner[owner] != NONE {
                    out.stats[block_of_owner[owner] as usize].links += 1;
                }
                // A link that opens its block is counted when its text opens the block.
            }
            continue;
        }
        owner_of[i] = inherited_owner;
        in_link[i] = inherited_link;
        let Some(text) = dom.visible_text(i) else {
            continue;
        };
        let measure = measure(text);
        if measure.words == 0 {
            continue;
        }
        let owner = owner_of[i] as usize;
        let block = match block_of_owner[owner] {
            NONE => {
                let block = out.owners.len() as u32;
                block_of_owner[owner] = block;
                out.owners.push(owner as u32);
                out.stats.push(BlockStats {
                    text_start: position,
                    links: u32::from(in_link[i]),
                    ..BlockStats::default()
                });
                block
            }
            block => block,
        };
        of_node[i] = block;
        let words = &mut out.words;
        for_each_word(text, |hash| {
            if let Some(hash) = hash {
                words.push((block, hash));
            }
        });
        let stats = &mut out.stats[block as usize];
        stats.chars += measure.chars;
        stats.words += measure.words;
        stats.stops += measure.stops;
        stats.commas += measure.commas;
        stats.symbols += measure.symbols;
        stats.digits += measure.digits;
        stats.capitalized += measure.capitalized;
        stats.word_chars += measure.word_chars;
        stats.prices += measure.prices;
        stats.ends_sentence = measure.ends_sentence;
        if in_link[i] {
            stats.anchor_chars += measure.chars;
        }
        position += measure.chars;
    }
    out.page_chars = position;
    out.of_node = of_node;
    out.in_link = in_link;
    out
}

/// One text node's contribution to its block.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Measure {
    chars: u32,
    words: u32,
    stops: u32,
    commas: u32,
    symbols: u32,
    digits: u32,
    capitalized: u32,
    word_chars: u32,
    prices: u32,
    ends_sentence: bool,
}

/// The characters of `text` that [`BlockStats::chars`] counts: white space collapsed, one per
/// gap between words.
pub(super) fn visible_chars(text: &str) -> u32 {
    measure(text).chars
}

/// What a character is to [`measure`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum Byte {
    /// White space ([`is_ascii_text_space`]).
    Space,
    Capital,
    Letter,
    Digit,
    /// [`SENTENCE_STOPS`]
    Stop,
    /// [`is_comma`]
    Comma,
    Dollar,
    Symbol,
}

/// Every byte's class, looked up once per byte instead of asked in a chain of comparisons.
const BYTES: [Byte; 256] = {
    let mut table = [Byte::Symbol; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] = match c {
            _ if is_ascii_text_space(c) => Byte::Space,
            b'A'..=b'Z' => Byte::Capital,
            b'a'..=b'z' => Byte::Letter,
            b'0'..=b'9' => Byte::Digit,
            _ if is_sentence_stop(c as char) => Byte::Stop,
            _ if is_comma(c as char) => Byte::Comma,
            b'$' => Byte::Dollar,
            _ => Byte::Symbol,
        };
        b += 1;
    }
    table
};

/// A text node's counts ([`measure_chars`] defines them), byte by byte over ASCII — nearly all
/// of a page's characters, also in the many text nodes with one curly quote or non-breaking
/// space — and by decoded character over the rest.
fn measure(text: &str) -> Measure {
    let mut m = Measure::default();
    let mut previous = Byte::Space;
    let mut in_word = false;
    let mut unspaced_run = 0u32;
    for unit in text_units(text) {
        let (class, capital, unspaced) = match unit {
            TextUnit::Ascii(b) => {
                let class = BYTES[usize::from(b)];
                (class, class == Byte::Capital, false)
            }
            TextUnit::Other(c) => (class_of(c), c.is_uppercase(), is_unspaced(c)),
        };
        if class == Byte::Space {
            in_word = false;
            unspaced_run = 0;
            continue;
        }
        if !in_word {
            in_word = true;
            m.words += 1;
            m.chars += 1;
            m.capitalized += u32::from(capital);
        } else if unspaced && unspaced_run.is_multiple_of(UNSPACED_WORD_CHARS) {
            m.words += 1;
        }
        unspaced_run = if unspaced { unspaced_run + 1 } else { 0 };
        m.chars += 1;
        match class {
            Byte::Capital | Byte::Letter => m.word_chars += 1,
            Byte::Digit => {
                m.word_chars += 1;
                m.digits += 1;
                m.prices += u32::from(previous == Byte::Dollar);
            }
            Byte::Stop => m.stops += 1,
            Byte::Comma => m.commas += 1,
            Byte::Dollar => m.prices += u32::from(previous == Byte::Digit),
            Byte::Space | Byte::Symbol => m.symbols += 1,
        }
        previous = class;
    }
    // The first gap is not a character; a text of one word has as many chars as letters.
    m.chars = m.chars.saturating_sub(1);
    m.ends_sentence = ends_sentence(text);
    m
}

/// Whether the text's last visible character ends a sentence.
fn ends_sentence(text: &str) -> bool {
    text.trim_end()
        .chars()
        .last()
        .is_some_and(|c| SENTENCE_ENDS.contains(&c))
}

/// What may close a sentence: its stop, or a quote or bracket after it. Beside ASCII's, the
/// full stops and question and exclamation marks of Chinese and Japanese (full-width), Hindi
/// (the danda) and Arabic and Urdu, so that prose in those scripts reads as sentences.
const SENTENCE_ENDS: &[char] = &[
    '.', '!', '?', '"', '”', ')', '。', '．', '！', '？', '」', '』', '）', '।', '॥', '؟', '۔',
];

/// What [`Measure::stops`] counts: sentence stops, and semicolons and colons, in the same
/// scripts as [`SENTENCE_ENDS`].
const SENTENCE_STOPS: &[char] = &[
    '.', '!', '?', ';', ':', '。', '．', '！', '？', '；', '：', '।', '॥', '؟', '۔', '؛',
];

/// `const` so that [`BYTES`] takes its ASCII stops from [`SENTENCE_STOPS`] too.
const fn is_sentence_stop(c: char) -> bool {
    let mut i = 0;
    while i < SENTENCE_STOPS.len() {
        if SENTENCE_STOPS[i] == c {
            return true;
        }
        i += 1;
    }
    false
}

/// Commas: ASCII's and the full-width, ideographic (enumeration) and Arabic ones.
const fn is_comma(c: char) -> bool {
    matches!(c, ',' | '，' | '、' | '،')
}

/// Chinese and Japanese are written without spaces between words, so a paragraph of them would
/// count as one word of a few hundred letters, which no prose the content model learned from
/// looks like. In those scripts (Han ideographs, kana) a word is counted per
/// [`UNSPACED_WORD_CHARS`] characters: Chinese words average 1.5–2 characters.
fn is_unspaced(c: char) -> bool {
    matches!(
        c,
        '\u{3040}'..='\u{30ff}'
            | '\u{3400}'..='\u{4dbf}'
            | '\u{4e00}'..='\u{9fff}'
            | '\u{f900}'..='\u{faff}'
            | '\u{20000}'..='\u{2fa1f}'
    )
}

/// Characters per word in a script written without spaces ([`is_unspaced`]).
const UNSPACED_WORD_CHARS: u32 = 2;

/// What a character beyond ASCII is to [`measure`] (its capital is asked apart: the ASCII
/// classes fold it in).
fn class_of(c: char) -> Byte {
    if c.is_whitespace() {
        Byte::Space
    } else if is_sentence_stop(c) {
        Byte::Stop
    } else if is_comma(c) {
        Byte::Comma
    } else if c.is_numeric() {
        Byte::Digit
    } else if c.is_alphanumeric() {
        Byte::Letter
    } else if is_currency(c) {
        Byte::Dollar
    } else {
        Byte::Symbol
    }
}

/// The definition of a text node's counts, character by character; [`measure`] computes the
/// same faster.
#[cfg(test)]
fn measure_chars(text: &str) -> Measure {
    let mut m = Measure::default();
    let mut previous: Option<char> = None;
    for word in text.split_whitespace() {
        m.words += 1;
        m.chars += 1;
        if word.chars().next().is_some_and(char::is_uppercase) {
            m.capitalized += 1;
        }
        let mut unspaced_run = 0u32;
        for (k, c) in word.chars().enumerate() {
            if k > 0 && is_unspaced(c) && unspaced_run.is_multiple_of(UNSPACED_WORD_CHARS) {
                m.words += 1;
            }
            unspaced_run = if is_unspaced(c) { unspaced_run + 1 } else { 0 };
            m.chars += 1;
            if c.is_alphanumeric() {
                m.word_chars += 1;
                if c.is_numeric() {
                    m.digits += 1;
                    if previous.is_some_and(is_currency) {
                        m.prices += 1;
                    }
                }
            } else if is_sentence_stop(c) {
                m.stops += 1;
            } else if is_comma(c) {
                m.commas += 1;
            } else if is_currency(c) {
                if previous.is_some_and(|p| p.is_numeric()) {
                    m.prices += 1;
                }
            } else {
                m.symbols += 1;
            }
            previous = Some(c);
        }
    }
    // The first gap is not a character; a text of one word has as many chars as letters.
    m.chars = m.chars.saturating_sub(1);
    m.ends_sentence = ends_sentence(text);
    m
}

fn is_currency(c: char) -> bool {
    matches!(c, '$' | '€' | '£' | '¥' | '₹' | '₽' | '¢')
}

/// Each block's text, white space collapsed (for tests that name blocks by their text).
#[cfg(test)]
pub(crate) fn texts(dom: &Dom, blocks: &Blocks) -> Vec<String> {
    let mut out = vec![String::new(); blocks.len()];
    for i in 0..dom.len() {
        if blocks.of_node[i] != NONE {
            let text = dom.visible_text(i).unwrap_or("");
            let slot = &mut out[blocks.of_node[i] as usize];
            slot.push_str(text);
        }
    }
    out.iter()
        .map(|t| t.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dom;

    #[test]
    fn the_byte_measure_agrees_with_the_character_one() {
        let pieces = [
            " ",
            "\t",
            "\n",
            "\x0b",
            "\x0c",
            "\r",
            "a",
            "Z",
            "7",
            "$",
            ".",
            "!",
            "?",
            ";",
            ":",
            ",",
            "|",
            "\"",
            ")",
            "-",
            "(",
            "word",
            "Word",
            "\u{a0}",
            "\u{2019}",
            "\u{201d}",
            "€",
            "É",
            "é",
            "½",
            "\u{663}",
            "ß",
            "»",
            "\u{3000}",
            "\u{5317}",
            "\u{4eac}",
            "\u{3042}",
            "\u{3002}",
            "\u{ff0c}",
            "\u{0964}",
            "\u{1f600}",
            "\u{24b6}",
        ];
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..20_000 {
            let mut text = String::new();
            let len = crate::xorshift(&mut state) % 12;
            for k in 0..len {
                let pick = (state.rotate_left(5 * k as u32) % pieces.len() as u64) as usize;
                text.push_str(pieces[pick]);
            }
            assert_eq!(measure(&text), measure_chars(&text), "{text:?}");
        }
    }

    #[test]
    fn prose_without_spaces_between_words_reads_as_sentences() {
        // 北京是中国的首都，也是一座历史悠久的城市。 (Beijing is China's capital, and a city
        // with a long history.) Nineteen ideographs, a comma and a full stop, no space.
        let chinese = measure("北京是中国的首都，也是一座历史悠久的城市。");
        assert_eq!(
            chinese.words,
            4 + 6,
            "a word per two ideographs, a new one after the comma"
        );
        assert_eq!((chinese.stops, chinese.commas), (1, 1));
        assert!(chinese.ends_sentence);
        assert_eq!(chinese.chars, 21, "characters are counted as they are");
        // Japanese kana count the same way; punctuation ends a word.
        let japanese = measure("これはペンです。Rust は速い！");
        assert_eq!(japanese.stops, 2);
        assert!(japanese.ends_sentence);
        assert_eq!(japanese.words, 4 + 2);
        // Hindi is written with spaces; its full stop (the danda) ends a sentence.
        let hindi = measure("यह एक वाक्य है।");
        assert_eq!((hindi.words, hindi.stops), (4, 1));
        assert!(hindi.ends_sentence);
    }

    #[test]
    fn a_block_is_the_text_under_one_line_breaking_element() {
        let dom = dom::parse(
            "<body><div>Intro <b>bold</b><p>Body <a href=/x>link</a> text.</p> tail</div>\
             <ul><li>One</li><li>Two</li></ul></body>",
            512,
        );
        let blocks = blocks(&dom);
        assert_eq!(
            texts(&dom, &blocks),
            ["Intro bold tail", "Body link text.", "One", "Two"]
        );
        let body = &blocks.stats[1];
        assert_eq!(body.words, 3);
        assert_eq!(body.links, 1);
        assert_eq!(
            body.anchor_chars, 4,
            "'link': gaps count within a text node only"
        );
        assert!(body.ends_sentence);
        assert_eq!(body.stops, 1);
        // Every visible character is in exactly one block.
        assert_eq!(
            blocks.page_chars,
            blocks.stats.iter().map(|s| s.chars).sum::<u32>()
        );
        assert!(blocks
            .stats
            .windows(2)
            .all(|w| w[0].text_start <= w[1].text_start));
    }

    #[test]
    fn prices_and_symbols_are_counted() {
        let dom = dom::parse("<p>Now $12.99 or 10 € | Home » Shop</p>", 512);
        let blocks = blocks(&dom);
        let stats = blocks.stats[0];
        assert_eq!(stats.prices, 2);
        assert_eq!(stats.symbols, 2, "| and »");
    }
}
