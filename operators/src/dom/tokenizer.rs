//! The HTML tokenizer [`super::builder`] reads: the standard's tokenization (HTML §13.2.5)
//! over one `&str`, handing out tags, text, comments and doctypes one at a time.
//!
//! Why not html5ever's tokenizer? It reads its input a character at a time through a queue of
//! reference-counted buffers, and copies every text run, tag name and attribute value into buffers
//! of its own: driving a tree builder, it costs several times what this one does
//! (docs/benchmarks.md). Here the whole page is one slice: text runs, names and attribute values
//! are found with `memchr` and borrowed from the input, and only text holding a character
//! reference, a carriage return or a NUL is copied (into one reused buffer). The states are the
//! standard's; where several of them only differ in the parse error they report, they are folded
//! into one loop.
//!
//! It is pull-based: the tree builder asks for the next token and, after a start tag that
//! opens raw text (`<script>`, `<title>`, ...), says how the content is to be read
//! ([`Tokenizer::read_content_as`]); that content comes back as one text token. What it does not
//! keep: comment text and tag positions, which nothing downstream reads. Parse errors are
//! counted where the input is malformed, not named.
//!
//! html5ever's tokenizer stays the reference: the unit tests compare token streams on tricky
//! inputs, and `tests/tests/builders.rs` compares whole trees on every page of the corpora.

use std::borrow::Cow;
use std::collections::HashSet;

use html5ever::data::{C1_REPLACEMENTS, NAMED_ENTITIES};
use html5ever::{local_name, LocalName};
use memchr::{memchr, memchr3, memmem};

use super::raw_text;

/// How the content after a start tag is read (the standard's tokenizer states it switches to).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Content {
    /// Markup, as everywhere else.
    Markup,
    /// Text with character references up to the matching end tag (`title`, `textarea`).
    Rcdata,
    /// Text as it is up to the matching end tag (`style`, `iframe`, `noscript`, ...).
    Rawtext,
    /// A script: text up to its end tag, with the script escape states.
    ScriptData,
    /// Everything up to the end of the input (`plaintext`).
    Plaintext,
}

/// The tokenizer state a start tag switches to, for tags whose content is not markup.
pub(super) fn raw_text_kind(tag: &LocalName) -> Content {
    match *tag {
        local_name!("title") | local_name!("textarea") => Content::Rcdata,
        local_name!("style")
        | local_name!("noframes")
        | local_name!("noscript")
        | local_name!("iframe")
        | local_name!("noembed")
        | local_name!("xmp") => Content::Rawtext,
        local_name!("script") => Content::ScriptData,
        local_name!("plaintext") => Content::Plaintext,
        _ => Content::Markup,
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum TagKind {
    Start,
    End,
}

/// An attribute of a tag: its lower-case name and its value, character references decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Attribute<'a> {
    pub name: LocalName,
    pub value: Cow<'a, str>,
}

#[derive(Debug)]
pub(super) struct Tag<'a> {
    pub kind: TagKind,
    pub name: LocalName,
    pub self_closing: bool,
    /// In source order, the first of each name only (as the standard drops repeated names).
    pub attrs: Vec<Attribute<'a>>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Doctype {
    pub name: Option<String>,
    pub public_id: Option<String>,
    pub system_id: Option<String>,
    pub force_quirks: bool,
}

/// What [`Tokenizer::next_token`] found; its content is in [`Tokenizer::tag`],
/// [`Tokenizer::text`] or [`Tokenizer::doctype`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Token {
    Tag,
    Text,
    Comment,
    Doctype,
    Eof,
}

/// Where the current text token is.
#[derive(Clone, Copy)]
enum TextAt {
    Input(usize, usize),
    Buffer,
}

pub(super) struct Tokenizer<'a> {
    input: &'a str,
    pos: usize,
    content: Content,
    /// The tag whose end tag ends raw content (lower case).
    content_of: LocalName,
    pub tag: Tag<'a>,
    text: TextAt,
    buffer: String,
    pub doctype: Doctype,
    pub errors: u32,
    /// The current tag's attribute names, once it has more than [`SCAN_LIMIT`].
    names: HashSet<LocalName>,
}

const SCAN_LIMIT: usize = 16;

fn is_space(b: u8) -> bool {
    // CR counts: the standard turns it into LF before tokenizing.
    matches!(b, b'\t' | b'\n' | b'\x0c' | b'\r' | b' ')
}

/// The first index from `i` on that is not a space (or the end of `b`).
fn skip_spaces(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && is_space(b[i]) {
        i += 1;
    }
    i
}

/// How text is decoded: the three places character references and NUL differ.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Decode {
    /// Between tags: references decoded, NUL dropped (the tree builder ignores it).
    Data,
    /// In RCDATA: references decoded, NUL replaced.
    Rcdata,
    /// In an attribute value: references decoded with the attribute rule, NUL replaced.
    Attribute,
}

impl<'a> Tokenizer<'a> {
    pub(super) fn new(input: &'a str) -> Tokenizer<'a> {
        Tokenizer {
            input,
            pos: 0,
            content: Content::Markup,
            content_of: LocalName::from(""),
            tag: Tag {
                kind: TagKind::Start,
                name: LocalName::from(""),
                self_closing: false,
                attrs: Vec::new(),
            },
            text: TextAt::Input(0, 0),
            buffer: String::new(),
            doctype: Doctype::default(),
            errors: 0,
            names: HashSet::new(),
        }
    }

    /// The text of the last [`Token::Text`].
    pub(super) fn text(&self) -> &str {
        match self.text {
            TextAt::Input(start, end) => &self.input[start..end],
            TextAt::Buffer => &self.buffer,
        }
    }

    /// Reads what follows the start tag just returned as `content`, up to that tag's end tag:
    /// what the tree builder asks for after `<script>`, `<title>` and the like.
    pub(super) fn read_content_as(&mut self, content: Content) {
        if content != Content::Markup {
            self.content = content;
            self.content_of = self.tag.name.clone();
        }
    }

    /// The next token. `foreign`: the tree builder's current node is an SVG or MathML element,
    /// where `<![CDATA[` opens text instead of a comment.
    pub(super) fn next_token(&mut self, foreign: bool) -> Token {
        if self.content != Content::Markup && self.raw_content() {
            return Token::Text;
        }
        loop {
            let input = self.input;
            let b = input.as_bytes();
            if self.pos >= b.len() {
                return Token::Eof;
            }
            let start = self.pos;
            if b[start] == b'<' && starts_markup(b, start) {
                if let Some(token) = self.markup(start, foreign) {
                    return token;
                }
                continue;
            }
            // Text runs to the next `<` that starts markup.
            let mut end = start + 1;
            loop {
                match memchr(b'<', &b[end..]) {
                    Some(at) if starts_markup(b, end + at) => {
                        end += at;
                        break;
                    }
                    Some(at) => end += at + 1,
                    None => {
                        end = b.len();
                        break;
                    }
                }
            }
            self.pos = end;
            if self.set_text(start, end, Decode::Data) {
                return Token::Text;
            }
        }
    }

    /// Takes raw content up to its end tag as the current text; false if it is empty.
    fn raw_content(&mut self) -> bool {
        let content = std::mem::replace(&mut self.content, Content::Markup);
        let rest = &self.input[self.pos..];
        let len = match content {
            Content::Plaintext => rest.len(),
            _ => raw_text::content_end(rest, &self.content_of),
        };
        let (start, end) = (self.pos, self.pos + len);
        self.pos = end;
        match content {
            Content::Rcdata => self.set_text(start, end, Decode::Rcdata),
            _ => self.set_verbatim_text(start, end),
        }
    }

    /// Makes `input[start..end]` the current text, decoded; false if nothing is left of it.
    fn set_text(&mut self, start: usize, end: usize, how: Decode) -> bool {
        let raw = &self.input[start..end];
        if !needs_decoding(raw) {
            self.text = TextAt::Input(start, end);
            return end > start;
        }
        let mut buffer = std::mem::take(&mut self.buffer);
        buffer.clear();
        self.errors += decode(raw, how, &mut buffer);
        self.buffer = buffer;
        self.text = TextAt::Buffer;
        !self.buffer.is_empty()
    }

    /// Makes `input[start..end]` the current text with no references decoded (raw text,
    /// CDATA): only line breaks normalized and NUL replaced. False if it is empty.
    fn set_verbatim_text(&mut self, start: usize, end: usize) -> bool {
        match raw_text::normalized(&self.input[start..end]) {
            Cow::Borrowed(_) => self.text = TextAt::Input(start, end),
            Cow::Owned(text) => {
                self.buffer = text;
                self.text = TextAt::Buffer;
            }
        }
        end > start
    }

    /// Tokenizes the markup starting with the `<` at `lt`. None: nothing to emit (an end tag
    /// `</>`, a tag cut off by the end of the input).
    fn markup(&mut self, lt: usize, foreign: bool) -> Option<Token> {
        let b = self.input.as_bytes();
        match b[lt + 1] {
            b'/' => {
                let next = b[lt + 2];
                if next.is_ascii_alphabetic() {
                    self.tag(lt + 2, TagKind::End)
                } else if next == b'>' {
                    self.errors += 1;
                    self.pos = lt + 3;
                    None
                } else {
                    Some(self.bogus_comment(lt + 2))
                }
            }
            b'!' => {
                let rest = &b[lt + 2..];
                if rest.starts_with(b"--") {
                    Some(self.comment(lt + 4))
                } else if rest.len() >= 7 && rest[..7].eq_ignore_ascii_case(b"doctype") {
                    Some(self.doctype(lt + 9))
                } else if foreign && rest.starts_with(b"[CDATA[") {
                    self.cdata(lt + 9)
                } else {
                    self.errors += 1;
                    Some(self.bogus_comment(lt + 2))
                }
            }
            b'?' => {
                self.errors += 1;
                Some(self.bogus_comment(lt + 1))
            }
            _ => self.tag(lt + 1, TagKind::Start),
        }
    }

    /// A start or end tag whose name starts at `at`.
    fn tag(&mut self, at: usize, kind: TagKind) -> Option<Token> {
        let input = self.input;
        let b = input.as_bytes();
        let n = b.len();
        let mut i = at;
        while i < n && !is_space(b[i]) && !matches!(b[i], b'/' | b'>') {
            i += 1;
        }
        self.tag.kind = kind;
        self.tag.name = name_atom(&input[at..i]);
        self.tag.self_closing = false;
        self.tag.attrs.clear();
        if !self.names.is_empty() {
            self.names.clear();
        }
        loop {
            i = skip_spaces(b, i);
            if i >= n {
                // The end of the input inside a tag drops the tag.
                self.errors += 1;
                self.pos = n;
                return None;
            }
            match b[i] {
                b'>' => {
                    self.pos = i + 1;
                    return Some(Token::Tag);
                }
                b'/' => {
                    i += 1;
                    if b.get(i) == Some(&b'>') {
                        self.tag.self_closing = true;
                        self.pos = i + 1;
                        return Some(Token::Tag);
                    }
                    // A stray slash: the standard goes on with the next attribute.
                    self.errors += 1;
                    continue;
                }
                _ => {}
            }
            // An attribute name; a leading `=` belongs to it.
            let name_start = i;
            if b[i] == b'=' {
                i += 1;
            }
            while i < n && !is_space(b[i]) && !matches!(b[i], b'/' | b'>' | b'=') {
                i += 1;
            }
            let name = &input[name_start..i];
            i = skip_spaces(b, i);
            let mut value = Cow::Borrowed("");
            if i < n && b[i] == b'=' {
                i = skip_spaces(b, i + 1);
                if i >= n {
                    continue;
                }
                match b[i] {
                    quote @ (b'"' | b'\'') => {
                        let Some(len) = memchr(quote, &b[i + 1..]) else {
                            i = n;
                            continue;
                        };
                        value = self.attribute_value(i + 1, i + 1 + len);
                        i += len + 2;
                    }
                    b'>' => self.errors += 1,
                    _ => {
                        let from = i;
                        while i < n && !is_space(b[i]) && b[i] != b'>' {
                            i += 1;
                        }
                        value = self.attribute_value(from, i);
                    }
                }
            }
            let name = name_atom(name);
            if self.repeated(&name) {
                self.errors += 1;
            } else {
                self.tag.attrs.push(Attribute { name, value });
            }
        }
    }

    /// Whether the current tag already has an attribute `name`. A tag has a handful, so a
    /// scan answers; past [`SCAN_LIMIT`] a set does, or a hostile tag with a million
    /// attributes would take a trillion comparisons.
    fn repeated(&mut self, name: &LocalName) -> bool {
        let attrs = &self.tag.attrs;
        if attrs.len() < SCAN_LIMIT {
            return attrs.iter().any(|a| a.name == *name);
        }
        if self.names.is_empty() {
            self.names.extend(attrs.iter().map(|a| a.name.clone()));
        }
        !self.names.insert(name.clone())
    }

    fn attribute_value(&mut self, start: usize, end: usize) -> Cow<'a, str> {
        let raw = &self.input[start..end];
        if !needs_decoding(raw) {
            return Cow::Borrowed(raw);
        }
        let mut value = String::with_capacity(raw.len());
        self.errors += decode(raw, Decode::Attribute, &mut value);
        Cow::Owned(value)
    }

    /// A comment whose text starts at `at` (after `<!--`): it ends at `-->` (any number of
    /// dashes before the `>`), `--!>`, at once for `<!-->` and `<!--->`, or at the end of
    /// the input.
    fn comment(&mut self, at: usize) -> Token {
        let b = self.input.as_bytes();
        let rest = &b[at..];
        if rest.starts_with(b">") || rest.starts_with(b"->") {
            self.errors += 1;
            self.pos = at + rest.iter().position(|&c| c == b'>').map_or(0, |p| p + 1);
            return Token::Comment;
        }
        let mut from = at;
        self.pos = b.len();
        while let Some(found) = memmem::find(&b[from..], b"--") {
            let mut i = from + found + 2;
            while b.get(i) == Some(&b'-') {
                i += 1;
            }
            match b.get(i) {
                Some(b'>') => {
                    self.pos = i + 1;
                    break;
                }
                Some(b'!') if b.get(i + 1) == Some(&b'>') => {
                    self.errors += 1;
                    self.pos = i + 2;
                    break;
                }
                Some(_) => from = i,
                None => break,
            }
        }
        Token::Comment
    }

    /// `<?...>`, `</ ...>`, `<!...>`: a comment up to the next `>`.
    fn bogus_comment(&mut self, at: usize) -> Token {
        let b = self.input.as_bytes();
        self.pos = memchr(b'>', &b[at..]).map_or(b.len(), |p| at + p + 1);
        Token::Comment
    }

    /// A CDATA section in foreign content: its text as it is, up to `]]>`; an empty one is
    /// nothing at all (the texts around it are one).
    fn cdata(&mut self, at: usize) -> Option<Token> {
        let b = self.input.as_bytes();
        let end = memmem::find(&b[at..], b"]]>").map_or(b.len(), |p| at + p);
        self.pos = (end + 3).min(b.len());
        self.set_verbatim_text(at, end).then_some(Token::Text)
    }

    /// A doctype whose text starts at `at` (after `<!DOCTYPE`), by the standard's doctype
    /// states: the name, then a public and a system identifier, each optional; anything out
    /// of place forces quirks mode.
    fn doctype(&mut self, at: usize) -> Token {
        let input = self.input;
        let b = input.as_bytes();
        let n = b.len();
        let mut doctype = Doctype::default();
        let mut i = skip_spaces(b, at);
        // Ends the doctype at `i` (a `>` or the end of the input), forcing quirks at the end.
        let finish = |this: &mut Self, mut doctype: Doctype, i: usize| {
            if i >= n {
                doctype.force_quirks = true;
            }
            this.pos = (i + 1).min(n);
            this.doctype = doctype;
            Token::Doctype
        };
        // Anything unexpected: skip to the `>` (the bogus doctype state).
        let bogus = |this: &mut Self, doctype: Doctype, i: usize, quirks: bool| {
            this.errors += 1;
            let end = memchr(b'>', &b[i..]).map_or(n, |p| i + p);
            let mut doctype = doctype;
            doctype.force_quirks |= quirks;
            this.pos = (end + 1).min(n);
            this.doctype = doctype;
            Token::Doctype
        };
        if i >= n || b[i] == b'>' {
            doctype.force_quirks = true;
            return finish(self, doctype, i);
        }
        let name_start = i;
        while i < n && !is_space(b[i]) && b[i] != b'>' {
            i += 1;
        }
        doctype.name = Some(lower_case(&input[name_start..i]).into_owned());
        i = skip_spaces(b, i);
        if i >= n || b[i] == b'>' {
            return finish(self, doctype, i);
        }
        let keyword = |word: &[u8]| b.len() >= i + 6 && b[i..i + 6].eq_ignore_ascii_case(word);
        let public = keyword(b"public");
        if !public && !keyword(b"system") {
            return bogus(self, doctype, i, true);
        }
        i = skip_spaces(b, i + 6);
        // One quoted identifier. Err: the doctype ends at the index (a `>` inside the quotes
        // or the end of the input, keeping what the quotes held so far), or, with `true`,
        // goes astray there.
        type Astray = (Option<String>, usize, bool);
        let quoted = |i: usize| -> Result<(String, usize), Astray> {
            match b.get(i) {
                Some(&quote @ (b'"' | b'\'')) => {
                    let from = i + 1;
                    // A `>` before the closing quote ends the doctype there. The quote is
                    // looked for before it only, so that a page of unclosed doctypes is read
                    // once, not once per doctype.
                    let gt = memchr(b'>', &b[from..]).map_or(n, |p| from + p);
                    match memchr(quote, &b[from..gt]) {
                        Some(p) => Ok((identifier(&input[from..from + p]), from + p + 1)),
                        None => Err((Some(identifier(&input[from..gt])), gt, false)),
                    }
                }
                Some(b'>') => Err((None, i, false)),
                None => Err((None, n, false)),
                Some(_) => Err((None, i, true)),
            }
        };
        let (first, after) = match quoted(i) {
            Ok(found) => found,
            Err((partial, at, astray)) => {
                doctype.force_quirks = true;
                if public {
                    doctype.public_id = partial;
                } else {
                    doctype.system_id = partial;
                }
                return if astray {
                    bogus(self, doctype, at, true)
                } else {
                    finish(self, doctype, at)
                };
            }
        };
        i = skip_spaces(b, after);
        if !public {
            doctype.system_id = Some(first);
            return if i >= n || b[i] == b'>' {
                finish(self, doctype, i)
            } else {
                // Text after the system identifier is ignored, quirks or not.
                bogus(self, doctype, i, false)
            };
        }
        doctype.public_id = Some(first);
        if i >= n || b[i] == b'>' {
            return finish(self, doctype, i);
        }
        match quoted(i) {
            Ok((system, after)) => {
                doctype.system_id = Some(system);
                let i = skip_spaces(b, after);
                if i >= n || b[i] == b'>' {
                    finish(self, doctype, i)
                } else {
                    bogus(self, doctype, i, false)
                }
            }
            Err((partial, at, astray)) => {
                doctype.force_quirks = true;
                doctype.system_id = partial;
                if astray {
                    bogus(self, doctype, at, true)
                } else {
                    finish(self, doctype, at)
                }
            }
        }
    }
}

/// Every token of `html`, counted and dropped; raw content is read as the tree builder would
/// have it read (outside SVG and MathML).
pub(super) fn count_tokens(html: &str) -> usize {
    let mut tokenizer = Tokenizer::new(html);
    let mut count = 0;
    loop {
        match tokenizer.next_token(false) {
            Token::Eof => return count,
            Token::Tag if tokenizer.tag.kind == TagKind::Start => {
                tokenizer.read_content_as(raw_text_kind(&tokenizer.tag.name));
            }
            _ => {}
        }
        count += 1;
    }
}

/// Whether the `<` at `lt` starts markup (a tag, comment, doctype or bogus comment) rather
/// than being text: it does before a letter, `!`, `?`, and `/` with anything after it.
fn starts_markup(b: &[u8], lt: usize) -> bool {
    match b.get(lt + 1) {
        Some(c) if c.is_ascii_alphabetic() => true,
        Some(b'!' | b'?') => true,
        Some(b'/') => lt + 2 < b.len(),
        _ => false,
    }
}

/// A tag or attribute name as the standard reads it: ASCII letters lower-cased, NUL replaced.
fn name_atom(name: &str) -> LocalName {
    LocalName::from(lower_case(name))
}

fn lower_case(name: &str) -> Cow<'_, str> {
    if name.bytes().any(|c| c.is_ascii_uppercase() || c == 0) {
        Cow::Owned(name.to_ascii_lowercase().replace('\0', "\u{fffd}"))
    } else {
        Cow::Borrowed(name)
    }
}

/// A doctype identifier: line breaks normalized, NUL replaced.
fn identifier(text: &str) -> String {
    raw_text::normalized(text).into_owned()
}

/// Whether [`decode`] would change `raw`: only then is text copied out of the input.
fn needs_decoding(raw: &str) -> bool {
    memchr3(b'&', b'\r', b'\0', raw.as_bytes()).is_some()
}

/// Appends `raw` to `out` decoded as `how` says: character references, line breaks, NUL.
/// Returns the parse errors met (references without `;`, unknown or invalid ones).
fn decode(raw: &str, how: Decode, out: &mut String) -> u32 {
    let b = raw.as_bytes();
    let mut errors = 0;
    let mut copied = 0;
    let mut i = 0;
    while let Some(found) = memchr3(b'&', b'\r', b'\0', &b[i..]) {
        let at = i + found;
        out.push_str(&raw[copied..at]);
        match b[at] {
            b'\r' => {
                out.push('\n');
                i = if b.get(at + 1) == Some(&b'\n') {
                    at + 2
                } else {
                    at + 1
                };
            }
            b'\0' => {
                errors += 1;
                if how != Decode::Data {
                    out.push('\u{fffd}');
                }
                i = at + 1;
            }
            _ => {
                let (consumed, error) = char_ref(&raw[at + 1..], how == Decode::Attribute, out);
                errors += u32::from(error);
                if consumed == 0 {
                    out.push('&');
                }
                i = at + 1 + consumed;
            }
        }
        copied = i;
    }
    out.push_str(&raw[copied..]);
    errors
}

/// The character reference after a `&` (`rest` starts after it), appended to `out`. Returns the
/// bytes consumed (0: not a reference, the `&` stays text) and whether it was malformed.
fn char_ref(rest: &str, in_attribute: bool, out: &mut String) -> (usize, bool) {
    let b = rest.as_bytes();
    match b.first() {
        Some(b'#') => numeric_ref(b, out),
        Some(c) if c.is_ascii_alphanumeric() => named_ref(rest, in_attribute, out),
        _ => (0, false),
    }
}

fn numeric_ref(b: &[u8], out: &mut String) -> (usize, bool) {
    let hex = matches!(b.get(1), Some(b'x' | b'X'));
    let digits_start = if hex { 2 } else { 1 };
    let base = if hex { 16 } else { 10 };
    let mut value: u32 = 0;
    let mut too_big = false;
    let mut i = digits_start;
    while let Some(digit) = b.get(i).and_then(|&c| char::from(c).to_digit(base)) {
        value = value.saturating_mul(base).saturating_add(digit);
        too_big |= value > 0x10FFFF;
        i += 1;
    }
    if i == digits_start {
        // `&#` without digits stays text.
        return (0, true);
    }
    let mut error = b.get(i) != Some(&b';');
    if !error {
        i += 1;
    }
    let c = match value {
        _ if too_big => None,
        0 | 0xD800..=0xDFFF => None,
        0x80..=0x9F => {
            error = true;
            Some(C1_REPLACEMENTS[(value - 0x80) as usize].unwrap_or_else(|| {
                // Not in the windows-1252 table: the C1 control itself.
                char::from_u32(value).unwrap_or('\u{fffd}')
            }))
        }
        _ => char::from_u32(value),
    };
    if c.is_none() {
        error = true;
    }
    out.push(c.unwrap_or('\u{fffd}'));
    (i, error)
}

/// A named reference: the longest name in the standard's table that `rest` starts with. In an
/// attribute, a name without `;` followed by `=` or a letter or digit is left as text (the
/// standard's historical rule, so that `?a=1&copy=2` in a URL survives).
fn named_ref(rest: &str, in_attribute: bool, out: &mut String) -> (usize, bool) {
    let b = rest.as_bytes();
    // The table holds every prefix of every name (prefixes map to (0, 0)), so matching can
    // stop at the first prefix it does not hold.
    let mut best: Option<(usize, (u32, u32))> = None;
    let mut len = 0;
    while len < b.len() {
        let c = b[len];
        if !(c.is_ascii_alphanumeric() || c == b';') {
            break;
        }
        len += 1;
        match NAMED_ENTITIES.get(&rest[..len]) {
            Some(&(0, _)) => {}
            Some(&found) => best = Some((len, found)),
            None => break,
        }
        if c == b';' {
            break;
        }
    }
    let Some((len, (first, second))) = best else {
        // Unknown: text, and an error if it looks like a reference (letters then `;`).
        let alnum = b.iter().take_while(|c| c.is_ascii_alphanumeric()).count();
        return (0, b.get(alnum) == Some(&b';'));
    };
    let terminated = b[len - 1] == b';';
    if !terminated && in_attribute {
        if let Some(&next) = b.get(len) {
            if next == b'=' || next.is_ascii_alphanumeric() {
                return (0, false);
            }
        }
    }
    for code in [first, second] {
        if let Some(c) = char::from_u32(code).filter(|_| code != 0) {
            out.push(c);
        }
    }
    (len, !terminated)
}

#[cfg(test)]
mod tests {
    use super::*;
    use html5ever::tokenizer::{
        BufferQueue, TagKind as H5TagKind, Token as H5Token, TokenSink, TokenSinkResult,
        Tokenizer as H5Tokenizer, TokenizerOpts,
    };
    use std::cell::RefCell;

    /// Tokens as strings, adjacent text joined, in one notation for both tokenizers.
    fn ours(html: &str) -> Vec<String> {
        let mut tokenizer = Tokenizer::new(html);
        let mut out: Vec<String> = Vec::new();
        loop {
            match tokenizer.next_token(false) {
                Token::Eof => break,
                Token::Text => push_text(&mut out, tokenizer.text()),
                Token::Comment => out.push("comment".into()),
                Token::Doctype => out.push(format!("{:?}", tokenizer.doctype)),
                Token::Tag => {
                    let tag = &tokenizer.tag;
                    let attrs: Vec<(String, String)> = tag
                        .attrs
                        .iter()
                        .map(|a| (a.name.to_string(), a.value.to_string()))
                        .collect();
                    out.push(format!(
                        "{:?} {} {} {:?}",
                        tag.kind, tag.name, tag.self_closing, attrs
                    ));
                    if tag.kind == TagKind::Start {
                        tokenizer.read_content_as(raw_text_kind(&tag.name));
                    }
                }
            }
        }
        out
    }

    fn push_text(out: &mut Vec<String>, text: &str) {
        match out.last_mut() {
            Some(last) if last.starts_with("text ") => last.push_str(text),
            _ => out.push(format!("text {text}")),
        }
    }

    struct Collect(RefCell<Vec<String>>);

    impl TokenSink for Collect {
        type Handle = ();
        fn process_token(&self, token: H5Token, _line: u64) -> TokenSinkResult<()> {
            let mut out = self.0.borrow_mut();
            match token {
                H5Token::CharacterTokens(text) => push_text(&mut out, &text),
                H5Token::CommentToken(_) => out.push("comment".into()),
                H5Token::DoctypeToken(d) => out.push(format!(
                    "{:?}",
                    Doctype {
                        name: d.name.map(|s| s.to_string()),
                        public_id: d.public_id.map(|s| s.to_string()),
                        system_id: d.system_id.map(|s| s.to_string()),
                        force_quirks: d.force_quirks,
                    }
                )),
                H5Token::TagToken(tag) => {
                    let kind = match tag.kind {
                        H5TagKind::StartTag => TagKind::Start,
                        H5TagKind::EndTag => TagKind::End,
                    };
                    let attrs: Vec<(String, String)> = tag
                        .attrs
                        .iter()
                        .map(|a| (a.name.local.to_string(), a.value.to_string()))
                        .collect();
                    out.push(format!(
                        "{:?} {} {} {:?}",
                        kind, tag.name, tag.self_closing, attrs
                    ));
                    if kind == TagKind::Start {
                        use html5ever::tokenizer::states::RawKind;
                        return match raw_text_kind(&tag.name) {
                            Content::Rcdata => TokenSinkResult::RawData(RawKind::Rcdata),
                            Content::Rawtext => TokenSinkResult::RawData(RawKind::Rawtext),
                            Content::ScriptData => TokenSinkResult::RawData(RawKind::ScriptData),
                            Content::Plaintext => TokenSinkResult::Plaintext,
                            Content::Markup => TokenSinkResult::Continue,
                        };
                    }
                }
                // The tree builder drops NUL between tags; so does `Decode::Data`.
                H5Token::NullCharacterToken | H5Token::EOFToken | H5Token::ParseError(_) => {}
            }
            TokenSinkResult::Continue
        }
    }

    fn html5ever(html: &str) -> Vec<String> {
        let tokenizer =
            H5Tokenizer::new(Collect(RefCell::new(Vec::new())), TokenizerOpts::default());
        let input = BufferQueue::default();
        input.push_back(html.into());
        let _ = tokenizer.feed(&input);
        tokenizer.end();
        tokenizer.sink.0.into_inner()
    }

    #[test]
    fn token_streams_match_html5evers() {
        let cases = [
            "<!DOCTYPE html><html lang=en><head><title>A &amp; B</title></head><body>x</body>",
            "<p class='a b' id=\"x\" data-x=1 hidden>text</P><BR/><img src=a.png alt=\"\">",
            "a < b and c <= d, 1<2 <3 </ x> <> </> <? pi ?> e",
            "<div a=1 a=2 B=3 =x c d = 'q' e=\"r\"f=s/ g/>",
            "&amp; &amp &ampx &notit; &notin; &#65;&#x42;&#X43 &#; &#x; &#0; &#x80; &#x9F; &#xD800; &#1114112; &bogus; &&",
            "<a href='?a=1&copy=2&amp=3&lt;4&notit&gt'>x</a><a title=&quot;q&quot>",
            "<!-- c --> <!--> <!---> <!-- a -- b --> <!-- x --!> <!-- y ---> <!-- z --!-->t",
            "<!-- unterminated",
            "<!doctype html public \"-//W3C//DTD HTML 4.01 Transitional//EN\" 'http://www.w3.org/TR/html4/loose.dtd'>",
            "<!DOCTYPE html SYSTEM 'about:legacy-compat'>",
            "<!DOCTYPE>",
            "<!DOCTYPE html PUBLIC>",
            "<!DOCTYPE html PUBLIC \"abc>",
            "<!DOCTYPE html bogus stuff>",
            "<!DOCTYPE html PUBLIC 'a' 'b' junk>",
            "<!DOCTYPE HTML PUBLIC\"a\"\"b\">",
            "<script>if (a<b) document.write('</scr'+'ipt>');</script><p>",
            "<script><!-- <script>x</script> --></script>after",
            "<style>p>a{}</style ><textarea>a &lt; b</textarea><title>t</titlex></title>",
            "<xmp><b></xmp><plaintext><a>&amp;",
            "line\r\nbreaks\rhere<a title='x\r\ny'>\r</a>",
            "nul\0here<a\0b c\0d='e\0f'>\0</a\0b>",
            "<div\n  class=x\n>unclosed <span",
            "<a href=x",
            "<a href='x",
            "text &",
            "<",
            "</",
            "</a",
            "<!",
            "<![CDATA[x]]>",
            "<p/ class=x>",
            "é<b é=ü>ü</b>€&euro;",
        ];
        for html in cases {
            assert_eq!(ours(html), html5ever(html), "tokens of {html:?}");
        }
        // The notation itself, so that agreement above means something.
        assert_eq!(
            ours("<a HREF='?a=1&copy=2&lt;'>&amp;x</a>"),
            [
                r#"Start a false [("href", "?a=1&copy=2<")]"#,
                "text &x",
                "End a false []",
            ]
        );
    }

    /// Random soups of the pieces the tokenizer's states turn on, compared with html5ever's
    /// tokens: malformed markup is where a hand-written tokenizer goes wrong.
    #[test]
    fn token_streams_match_html5evers_on_random_markup() {
        const PIECES: [&str; 48] = [
            "<",
            ">",
            "/",
            "!",
            "?",
            "-",
            "--",
            "=",
            "'",
            "\"",
            " ",
            "\n",
            "\r",
            "\r\n",
            "\t",
            "\0",
            "a",
            "B",
            "x1",
            "é",
            "€",
            "&",
            "&amp",
            "&amp;",
            "&lt",
            "&notin",
            "&not",
            "&#",
            "&#x",
            "&#38;",
            "&#x26",
            "&#128;",
            "&#0;",
            ";",
            "<!--",
            "-->",
            "<!DOCTYPE",
            " PUBLIC ",
            " SYSTEM ",
            "]]>",
            "<![CDATA[",
            "<a",
            "</a",
            "<p ",
            "<script>",
            "</script>",
            "<title>",
            "</title>",
        ];
        // A fixed xorshift generator: the same cases on every run.
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for case in 0..20000 {
            let len = 1 + (next() % 32) as usize;
            let html: String = (0..len)
                .map(|_| PIECES[(next() % PIECES.len() as u64) as usize])
                .collect();
            assert_eq!(ours(&html), html5ever(&html), "case {case}: {html:?}");
        }
    }

    #[test]
    fn repeated_attributes_are_dropped_however_many_there_are() {
        let names: Vec<String> = (0..40).map(|i| format!("a{i}")).collect();
        let tag = |names: &[String]| {
            let attrs: Vec<String> = names.iter().map(|n| format!("{n}=1")).collect();
            format!("<p {}>", attrs.join(" "))
        };
        // Two tags, the second with the first's names repeated: the set of names starts
        // afresh with each tag.
        let mut repeated = names[..20].to_vec();
        repeated.extend(names[..20].iter().cloned());
        let html = format!("{}{}{}", tag(&names), tag(&repeated), tag(&names[20..]));
        assert_eq!(ours(&html), html5ever(&html));
        let mut tokenizer = Tokenizer::new(&html);
        let counts: Vec<usize> = (0..3)
            .map(|_| {
                tokenizer.next_token(false);
                tokenizer.tag.attrs.len()
            })
            .collect();
        assert_eq!(counts, [40, 20, 20]);
    }

    #[test]
    fn cdata_is_text_in_foreign_content_only() {
        let mut tokenizer = Tokenizer::new("<![CDATA[a<b]]>c");
        assert_eq!(tokenizer.next_token(true), Token::Text);
        assert_eq!(tokenizer.text(), "a<b");
        assert_eq!(tokenizer.next_token(true), Token::Text);
        assert_eq!(tokenizer.text(), "c");
        let mut tokenizer = Tokenizer::new("<![CDATA[a<b]]>c");
        assert_eq!(tokenizer.next_token(false), Token::Comment);
        let mut tokenizer = Tokenizer::new("a<![CDATA[]]>b");
        assert_eq!(tokenizer.next_token(true), Token::Text);
        assert_eq!(tokenizer.text(), "a");
        assert_eq!(tokenizer.next_token(true), Token::Text);
        assert_eq!(tokenizer.text(), "b");
        assert_eq!(tokenizer.next_token(true), Token::Eof);
    }

    #[test]
    fn plain_text_and_values_are_borrowed_from_the_input() {
        let html = "<a href='/x' class=c>plain text</a>";
        let mut tokenizer = Tokenizer::new(html);
        assert_eq!(tokenizer.next_token(false), Token::Tag);
        assert!(tokenizer
            .tag
            .attrs
            .iter()
            .all(|a| matches!(a.value, Cow::Borrowed(_))));
        assert_eq!(tokenizer.next_token(false), Token::Text);
        assert!(matches!(tokenizer.text, TextAt::Input(..)));
    }
}
