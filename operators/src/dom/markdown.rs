//! A page's visible text as Markdown (CommonMark, with GitHub's pipe tables): the same words as
//! [`crate::dom::text::readable`], in the same order, from the same walk
//! ([`crate::dom::text::walk`]), with the structure a reader sees kept: headings, paragraphs,
//! lists, block quotes, code blocks, tables, and emphasis; links and images when asked for.
//!
//! The words are the point: rendered back to text by any CommonMark parser, the Markdown gives
//! exactly the cleaned text's tokens (`tests` below check it with pulldown-cmark on generated
//! pages, and `tests/tests/markdown.rs` on every dev page), so the quality figures of the
//! cleaned text hold for the Markdown too. That is why text is escaped wherever Markdown would
//! read it as markup (`*`, `_` at a word's edge, `` ` ``, a `#` or `1.` opening a line, ...),
//! and why an emphasis that CommonMark would not read as one (`**"a"**b`: a closing run after
//! punctuation, before a letter) is left out rather than written.
//!
//! Markdown is written in one pass with no lookahead but a table's: where a block or an
//! emphasis starts is known when its first word arrives, so a block or emphasis with no kept
//! words (the content model drops words, not elements) writes nothing. A table is written as
//! a pipe table when it reads as data (rows of short cells, no table, list, heading, quote or
//! code inside; [`is_pipe_table`]); any other table (a page laid out with one) is read as
//! blocks.
//!
//! Written by hand, not with an HTML-to-Markdown crate: those convert HTML, and what is
//! converted here is the walk's view of a page (the dropped words, the blocks, the words kept
//! apart), which must stay word for word the cleaned text's.

use std::ops::Range;

use html5ever::local_name;

use crate::dom::tags::heading_rank;
use crate::dom::text::{walk, Sink};
use crate::dom::{Dom, NodeKind};

/// What the Markdown holds besides the text and its structure.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// Links as `[text](href)`, the href as the page gives it.
    pub links: bool,
    /// Images as `![alt](src)`, where `keep_image` holds.
    pub images: bool,
}

/// A table cell longer than this (in bytes of text) is no data table's: the table is read as
/// blocks (a page laid out with a table holds whole articles in its cells).
const MAX_CELL_BYTES: usize = 400;

/// Block quotes, lists, items and headings nested deeper than this are written as paragraphs.
const MAX_BLOCKS: usize = 24;

/// The visible text of `nodes` as Markdown: [`crate::dom::text::readable`]'s words, for the
/// same `dropped`, with their structure. `keep_image` says which images to write (with
/// `options.images`): the content model drops text nodes, not elements, so the caller decides
/// which images belong to what it kept.
pub fn markdown(
    dom: &Dom,
    nodes: Range<usize>,
    dropped: impl Fn(usize) -> bool,
    keep_image: impl Fn(usize) -> bool,
    options: Options,
) -> String {
    let mut sink = Markdown {
        options,
        keep_image,
        out: String::new(),
        last_char: None,
        space_pending: false,
        break_pending: false,
        prev_line_in_list: false,
        prev_quotes: 0,
        first_word: None,
        last_code_closer: None,
        blocks: Vec::new(),
        inlines: Vec::new(),
        closing: Vec::new(),
        table: None,
    };
    walk(dom, nodes, dropped, &mut sink, usize::MAX);
    sink.end_line();
    let trimmed = sink.out.trim_end().len();
    sink.out.truncate(trimmed);
    sink.out
}

/// An element that shapes the lines inside it.
enum Block {
    Quote,
    List {
        ordered: bool,
        next: u32,
    },
    /// A list item: its marker, whether its first line (the one that carries the marker)
    /// has been written, and the ordered list (its index in the open blocks) that numbers it.
    /// An item is numbered when its marker is written: numbers count the items written, so
    /// that a list whose first items had no kept words still starts at 1 (CommonMark lets
    /// only a list starting at 1 follow a paragraph's line).
    Item {
        marker: String,
        written: bool,
        list: Option<usize>,
    },
    Heading {
        level: u8,
        written: bool,
    },
    /// `<pre>`: a fenced code block of `fence` backticks, once its first word arrives;
    /// `line_empty` while its current line holds nothing.
    Code {
        fence: usize,
        started: bool,
        line_empty: bool,
    },
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum InlineKind {
    Strong,
    Emphasis,
    /// Inline code, delimited by this many backticks.
    Code(usize),
    Link,
}

/// An open inline element: where its opening delimiter was written (into the current line or
/// cell), once a word arrived; `dead` when it can't be written as Markdown reads it.
struct Inline {
    node: u32,
    kind: InlineKind,
    at: Option<usize>,
    dead: bool,
    href: String,
}

/// An emphasis closed after punctuation: whether CommonMark reads its closing delimiter as one
/// depends on the next character (`**"a"** b` is emphasis, `**"a"**b` is not).
struct Closing {
    at: usize,
    opener: usize,
    closer: &'static str,
}

/// A pipe table being collected: written when it ends, if any cell has words.
struct Table {
    node: u32,
    /// Text in the table outside any cell (its caption), written before it.
    caption: String,
    rows: Vec<Vec<String>>,
    /// The cell being written, if any.
    cell: Option<u32>,
}

struct Markdown<K> {
    options: Options,
    keep_image: K,
    out: String,
    last_char: Option<char>,
    space_pending: bool,
    /// A block started or ended since the last word.
    break_pending: bool,
    prev_line_in_list: bool,
    /// The end of the last code span's closing backticks (in its target), and their number.
    last_code_closer: Option<(usize, usize)>,
    /// Where the first word of the line being written starts, until a space follows it.
    first_word: Option<usize>,
    /// The block quotes the last line started in.
    prev_quotes: usize,
    blocks: Vec<(u32, Block)>,
    inlines: Vec<Inline>,
    closing: Vec<Closing>,
    table: Option<Table>,
}

fn is_punctuation(c: char) -> bool {
    c.is_ascii_punctuation() || (!c.is_alphanumeric() && !c.is_whitespace())
}

impl<K: Fn(usize) -> bool> Markdown<K> {
    /// Where words go: the cell (or caption) of the table being collected, or the page.
    fn target(&mut self) -> &mut String {
        match &mut self.table {
            // Text outside the cells (a caption, or words a broken table left between them)
            // goes before the first cell, or into the cell before it: in its place.
            Some(table) => match table.rows.iter_mut().rev().find_map(|row| row.last_mut()) {
                Some(cell) => cell,
                None => &mut table.caption,
            },
            None => &mut self.out,
        }
    }

    fn in_code_block(&self) -> bool {
        self.table.is_none()
            && matches!(
                self.blocks.last(),
                Some((_, Block::Code { started: true, .. }))
            )
    }

    fn in_list(&self) -> bool {
        self.blocks
            .iter()
            .any(|(_, block)| matches!(block, Block::Item { .. }))
    }

    /// The prefix of a line: block quotes' `> `, list markers (on an item's first line) or
    /// their indent, and a heading's `#`s.
    fn write_prefix(&mut self) {
        for k in 0..self.blocks.len() {
            let Block::Item {
                list: Some(list),
                written: false,
                ..
            } = self.blocks[k].1
            else {
                continue;
            };
            let number = match &mut self.blocks[list].1 {
                Block::List { next, .. } => {
                    let number = *next;
                    *next = next.saturating_add(1);
                    number
                }
                _ => 1,
            };
            if let Block::Item { marker, .. } = &mut self.blocks[k].1 {
                *marker = format!("{number}. ");
            }
        }
        for (_, block) in &mut self.blocks {
            match block {
                Block::Quote => self.out.push_str("> "),
                Block::Item {
                    marker, written, ..
                } => {
                    if *written {
                        self.out.extend(std::iter::repeat_n(' ', marker.len()));
                    } else {
                        self.out.push_str(marker);
                        *written = true;
                    }
                }
                Block::Heading { level, written } if !*written => {
                    self.out
                        .extend(std::iter::repeat_n('#', usize::from(*level)));
                    self.out.push(' ');
                    *written = true;
                }
                _ => {}
            }
        }
    }

    /// Starts a new line of the page: the separator from the last one (a blank line between
    /// blocks, a line break between a list's lines) and the line's prefix.
    fn start_line(&mut self) {
        let in_list = self.in_list();
        if !self.out.is_empty() {
            if in_list && self.prev_line_in_list {
                self.out.push('\n');
            } else {
                self.out.push('\n');
                // A blank line inside a block quote stays inside it.
                let quotes = self.quotes().min(self.prev_quotes);
                self.out.extend(std::iter::repeat_n('>', quotes));
                self.out.push('\n');
            }
        }
        self.prev_line_in_list = in_list;
        self.prev_quotes = self.quotes();
        self.write_prefix();
    }

    fn quotes(&self) -> usize {
        self.blocks
            .iter()
            .filter(|(_, block)| matches!(block, Block::Quote))
            .count()
    }

    /// Writes the closing delimiters waiting for the next character, `next` (None: a line or
    /// cell ends, or white space follows), or takes back their openers where CommonMark would
    /// not close them.
    fn resolve_closing(&mut self, next: Option<char>) {
        if self.closing.is_empty() {
            return;
        }
        let closes = next.is_none_or(is_punctuation);
        let closing = std::mem::take(&mut self.closing);
        let target = self.target();
        if closes {
            for c in &closing {
                target.push_str(c.closer);
            }
        } else {
            // The innermost's opener is the last written: taken back first, the others'
            // positions stay true.
            for c in &closing {
                if target.get(c.at..c.at + c.opener).is_some() {
                    target.replace_range(c.at..c.at + c.opener, "");
                }
            }
        }
    }

    /// Closes every open inline element that has written its opener (at a line or cell's
    /// end); each opens again before its next word.
    fn suspend_inlines(&mut self) {
        self.resolve_closing(None);
        let mut closers = Vec::new();
        for inline in self.inlines.iter_mut().rev() {
            if inline.at.take().is_some() {
                closers.push(closer(inline));
            }
        }
        let target = self.target();
        for c in closers {
            target.push_str(&c);
        }
        // The next words go to another line or cell: no code span goes on from here.
        self.last_code_closer = None;
    }

    /// Ends the line being written, if any.
    fn end_line(&mut self) {
        self.suspend_inlines();
        self.break_pending = true;
        self.space_pending = false;
    }

    /// Everything a word needs before it: the line's start or a space, closing delimiters
    /// waiting for it, and the openers of the inline elements it is the first word of.
    /// Returns whether the word starts a line (so that line-start markup in it is escaped).
    fn begin_word(&mut self, first: char) -> bool {
        let mut line_start = false;
        let space = self.space_pending;
        if self.table.is_some() {
            if self.target().is_empty() {
                line_start = true;
            } else if space {
                self.resolve_closing(None);
                self.target().push(' ');
            }
        } else if self.break_pending || self.out.is_empty() {
            self.resolve_closing(None);
            self.start_line();
            line_start = true;
            self.first_word = Some(self.out.len());
        } else if space {
            self.resolve_closing(None);
            self.out.push(' ');
            self.first_word = None;
        }
        self.resolve_closing(Some(first));
        self.break_pending = false;
        self.space_pending = false;
        let before_space = line_start || space;
        // CommonMark's left-flanking rule, over the characters around the delimiter as
        // written: a code span's or a link's opener after it is punctuation.
        let last = self.target().chars().next_back();
        let waiting: Vec<usize> = (0..self.inlines.len())
            .filter(|&k| self.inlines[k].at.is_none() && !self.inlines[k].dead)
            .collect();
        let mut openers = Vec::new();
        for (n, &k) in waiting.iter().enumerate() {
            let markup_follows = waiting[n + 1..]
                .iter()
                .any(|&j| matches!(self.inlines[j].kind, InlineKind::Code(_) | InlineKind::Link));
            let next = if markup_follows { '`' } else { first };
            let flanking = before_space
                || !is_punctuation(next)
                || last.is_none_or(|c| is_punctuation(c) || c.is_whitespace());
            openers.push((k, flanking));
        }
        for (k, flanking) in openers {
            let kind = self.inlines[k].kind;
            let last_code_closer = self.last_code_closer;
            let target = self.target();
            let ends_with_delimiter = ends_with_unescaped(target, '*');
            if matches!(kind, InlineKind::Strong | InlineKind::Emphasis)
                && (!flanking || ends_with_delimiter)
            {
                self.inlines[k].dead = true;
                continue;
            }
            if kind == InlineKind::Link && ends_with_unescaped(target, '!') {
                target.pop();
                target.push_str("\\!");
            }
            if let InlineKind::Code(n) = kind {
                // Backticks in a row are one delimiter: a code span right after another is
                // the same span, and after any other backtick it is written as text.
                let after_code = target.ends_with('`')
                    && last_code_closer.is_some_and(|(end, _)| end == target.len());
                if after_code || ends_with_unescaped(target, '`') {
                    let closer_at = target.len().saturating_sub(closer_len(kind));
                    if last_code_closer == Some((target.len(), n)) {
                        target.truncate(closer_at);
                        self.inlines[k].at = Some(closer_at);
                    } else {
                        self.inlines[k].dead = true;
                    }
                    continue;
                }
            }
            let at = target.len();
            target.push_str(&opener(kind));
            self.inlines[k].at = Some(at);
        }
        line_start
    }

    fn in_inline_code(&self) -> bool {
        self.inlines
            .iter()
            .any(|i| matches!(i.kind, InlineKind::Code(_)) && i.at.is_some())
    }

    fn in_link(&self) -> bool {
        self.inlines.iter().any(|i| i.kind == InlineKind::Link)
    }

    /// Writes one word (no white space in it).
    fn word(&mut self, word: &str) {
        let Some(first) = word.chars().next() else {
            return;
        };
        let line_start = self.begin_word(first);
        let code = self.in_inline_code();
        let cell = self
            .table
            .as_ref()
            .is_some_and(|t| t.rows.iter().any(|row| !row.is_empty()));
        let link = self.in_link();
        let first_word = self.first_word;
        let target = self.target();
        // `1` and then `. ` glued to it from the next text: an ordered list's marker.
        let digits_written = first_word
            .filter(|_| !line_start && !code)
            .and_then(|start| target.get(start..))
            .filter(|written| written.bytes().all(|b| b.is_ascii_digit()))
            .map_or(0, str::len);
        let digits = word.bytes().take_while(u8::is_ascii_digit).count();
        if digits_written > 0
            && digits_written + digits <= 9
            && matches!(&word[digits..], "." | ")")
        {
            target.push_str(&word[..digits]);
            target.push('\\');
            target.push_str(&word[digits..]);
        } else if code && cell {
            target.push_str(&word.replace('|', "\\|"));
        } else if code {
            target.push_str(word);
        } else {
            escape(target, word, line_start, cell, link);
        }
        self.last_char = word.chars().next_back();
    }

    /// Text inside a code block: as it is, each line with the block's prefix.
    fn code_text(&mut self, text: &str) -> bool {
        let mut wrote = false;
        for (n, line) in text.split('\n').enumerate() {
            if n > 0 {
                self.code_newline();
            }
            let line = line.strip_suffix('\r').unwrap_or(line);
            if line.is_empty() {
                continue;
            }
            self.out.push_str(line);
            if let Some((_, Block::Code { line_empty, .. })) = self.blocks.last_mut() {
                *line_empty = false;
            }
            if let Some(c) = line.chars().rev().find(|c| !c.is_whitespace()) {
                self.last_char = Some(c);
                wrote = true;
            }
        }
        wrote
    }

    fn code_newline(&mut self) {
        self.out.push('\n');
        self.write_prefix();
        if let Some((_, Block::Code { line_empty, .. })) = self.blocks.last_mut() {
            *line_empty = true;
        }
    }

    /// The first words of a `<pre>`: the fence opens on a line of its own.
    fn start_code(&mut self) {
        let Some(&(_, Block::Code { fence, .. })) = self.blocks.last() else {
            return;
        };
        self.suspend_inlines();
        self.start_line();
        self.break_pending = false;
        self.space_pending = false;
        self.out.extend(std::iter::repeat_n('`', fence));
        if let Some((_, Block::Code { started, .. })) = self.blocks.last_mut() {
            *started = true;
        }
        self.code_newline();
    }

    fn close_table(&mut self) {
        let Some(table) = self.table.take() else {
            return;
        };
        let caption = table.caption.trim().to_string();
        if !caption.is_empty() {
            self.break_pending = true;
            self.start_line();
            self.out.push_str(&caption);
        }
        let rows: Vec<Vec<String>> = table
            .rows
            .into_iter()
            .filter(|row| !row.is_empty())
            .collect();
        let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
        if rows.iter().flatten().all(|cell| cell.trim().is_empty()) {
            self.break_pending = true;
            return;
        }
        for (r, row) in rows.iter().enumerate() {
            if r == 0 {
                // A table interrupts no paragraph: a blank line before it, in a list too.
                self.prev_line_in_list = false;
                self.start_line();
            } else {
                self.out.push('\n');
                self.prev_line_in_list = self.in_list();
                self.write_prefix();
            }
            self.out.push('|');
            for c in 0..columns {
                let cell = row.get(c).map_or("", |cell| cell.trim());
                self.out.push(' ');
                self.out.push_str(cell);
                self.out.push_str(if cell.is_empty() { "|" } else { " |" });
            }
            if r == 0 {
                self.out.push('\n');
                self.write_prefix();
                self.out.push('|');
                for _ in 0..columns {
                    self.out.push_str(" --- |");
                }
            }
        }
        self.break_pending = true;
        self.space_pending = false;
    }
}

fn opener(kind: InlineKind) -> String {
    match kind {
        InlineKind::Strong => "**".into(),
        InlineKind::Emphasis => "*".into(),
        InlineKind::Code(n) => "`".repeat(n) + if n > 1 { " " } else { "" },
        InlineKind::Link => "[".into(),
    }
}

/// Whether `written` ends with `c` as markup: not escaped by an odd run of backslashes.
fn ends_with_unescaped(written: &str, c: char) -> bool {
    let Some(before) = written.strip_suffix(c) else {
        return false;
    };
    let backslashes = before.bytes().rev().take_while(|&b| b == b'\\').count();
    backslashes % 2 == 0
}

fn closer_len(kind: InlineKind) -> usize {
    match kind {
        InlineKind::Code(n) => n + usize::from(n > 1),
        _ => 0,
    }
}

fn closer(inline: &Inline) -> String {
    match inline.kind {
        InlineKind::Strong => "**".into(),
        InlineKind::Emphasis => "*".into(),
        InlineKind::Code(n) => (if n > 1 { " " } else { "" }).to_string() + &"`".repeat(n),
        InlineKind::Link => link_destination(&inline.href),
    }
}

/// `](href)`, the href in angle brackets where it has white space or brackets in it.
fn link_destination(href: &str) -> String {
    let href = href.trim();
    if href.contains(|c: char| c.is_whitespace() || "()<>".contains(c)) {
        let escaped: String = href
            .chars()
            .map(|c| match c {
                '<' => "%3C".to_string(),
                '>' => "%3E".to_string(),
                c if c.is_whitespace() => "%20".to_string(),
                c => c.to_string(),
            })
            .collect();
        format!("](<{escaped}>)")
    } else {
        format!("]({href})")
    }
}

/// Appends `word` with what Markdown would read as markup escaped. `line_start`: the word
/// opens a line (after its prefix), where `#`, `>`, `-`, `+`, `1.` and rules open blocks;
/// `cell`: inside a pipe table; `link`: inside a link's text.
fn escape(out: &mut String, word: &str, line_start: bool, cell: bool, link: bool) {
    let bytes = word.as_bytes();
    // Most words hold none of the characters escaped inside a line: copied whole.
    if !line_start && !bytes.iter().any(|&b| MAY_ESCAPE[usize::from(b)]) {
        out.push_str(word);
        return;
    }
    let mut marker = false;
    if line_start {
        let first = bytes[0];
        let all_rule = bytes.iter().all(|&b| b == first) && matches!(first, b'-' | b'=' | b'_');
        marker = matches!(first, b'#' | b'>' | b'+' | b'-' | b'=' | b'|')
            && (bytes.len() == 1 || all_rule || first == b'#' || first == b'>');
        if marker {
            out.push('\\');
        }
        // `1.` or `1)` opens an ordered list.
        let digits = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
        if (1..=9).contains(&digits)
            && digits + 1 == bytes.len()
            && matches!(bytes[digits], b'.' | b')')
        {
            out.push_str(&word[..digits]);
            out.push('\\');
            out.push_str(&word[digits..]);
            return;
        }
    }
    let chars: Vec<(usize, char)> = word.char_indices().collect();
    for (k, &(_, c)) in chars.iter().enumerate() {
        let prev = k.checked_sub(1).map(|p| chars[p].1);
        let next = chars.get(k + 1).map(|&(_, c)| c);
        let escaped = match c {
            '\\' | '*' | '`' => true,
            // A heading's closing sequence, wherever the word is.
            '#' => k == 0 && !marker && bytes.iter().all(|&b| b == b'#'),
            '_' => {
                !prev.is_some_and(char::is_alphanumeric) || !next.is_some_and(char::is_alphanumeric)
            }
            // Raw HTML or an autolink, perhaps with the next text node's words.
            '<' => true,
            '&' => next.is_some_and(|n| n.is_ascii_alphanumeric() || n == '#'),
            '[' => link || (line_start && k == 0) || next == Some('^'),
            ']' => link || matches!(next, Some('(' | '[' | ':')),
            '|' => cell && !(k == 0 && marker),
            '~' => next == Some('~') || prev == Some('~'),
            '!' => next == Some('['),
            _ => false,
        };
        if escaped {
            out.push('\\');
        }
        out.push(c);
    }
}

/// The bytes [`escape`] may escape inside a line (all ASCII).
const MAY_ESCAPE: [bool; 256] = {
    let mut table = [false; 256];
    let special = b"\\*_`<&[]|~!#";
    let mut k = 0;
    while k < special.len() {
        table[special[k] as usize] = true;
        k += 1;
    }
    table
};

/// Whether table `t` reads as data, to be written as a pipe table: at least two rows, a row
/// of at least two cells, no cell longer than [`MAX_CELL_BYTES`], and no table, list,
/// heading, quote or code inside.
pub(crate) fn is_pipe_table(dom: &Dom, t: usize) -> bool {
    let end = dom.node(t).end as usize;
    let (mut rows, mut cells_in_row, mut widest) = (0usize, 0usize, 0usize);
    let (mut cell_end, mut cell_bytes) = (0usize, 0usize);
    for j in t + 1..end.min(dom.len()) {
        match dom.node(j).kind {
            NodeKind::Element(_) => match dom.tag(j) {
                Some(&local_name!("tr")) => {
                    rows += 1;
                    cells_in_row = 0;
                }
                Some(&local_name!("td") | &local_name!("th")) => {
                    cells_in_row += 1;
                    widest = widest.max(cells_in_row);
                    cell_end = dom.node(j).end as usize;
                    cell_bytes = 0;
                }
                Some(
                    &local_name!("table")
                    | &local_name!("ul")
                    | &local_name!("ol")
                    | &local_name!("dl")
                    | &local_name!("blockquote")
                    | &local_name!("pre"),
                ) => return false,
                Some(tag) if heading_rank(tag).is_some() => return false,
                _ => {}
            },
            NodeKind::Text { .. } if j < cell_end => {
                cell_bytes += dom.visible_text(j).map_or(0, |t| t.trim().len());
                if cell_bytes > MAX_CELL_BYTES {
                    return false;
                }
            }
            _ => {}
        }
    }
    rows >= 2 && widest >= 2
}

/// The longest run of backticks in the text of `nodes`, a run going on from one text node
/// into the next (as the Markdown writes them).
fn longest_backtick_run(dom: &Dom, nodes: Range<usize>) -> usize {
    let (mut longest, mut run) = (0, 0);
    for j in nodes {
        if let Some(text) = dom.text(j) {
            for b in text.bytes() {
                run = if b == b'`' { run + 1 } else { 0 };
                longest = longest.max(run);
            }
        }
    }
    longest
}

impl<K: Fn(usize) -> bool> Sink for Markdown<K> {
    fn len(&self) -> usize {
        self.out.len()
    }

    fn last_char(&self) -> Option<char> {
        self.last_char
    }

    fn wants_close(&self, dom: &Dom, i: usize) -> bool {
        matches!(
            dom.tag(i),
            Some(
                &local_name!("b")
                    | &local_name!("strong")
                    | &local_name!("i")
                    | &local_name!("em")
                    | &local_name!("code")
                    | &local_name!("kbd")
                    | &local_name!("samp")
                    | &local_name!("tt")
                    | &local_name!("a")
            )
        )
    }

    fn open(&mut self, dom: &Dom, i: usize, block: bool) {
        let Some(tag) = dom.tag(i) else {
            return;
        };
        let node = i as u32;
        let in_code = self
            .blocks
            .iter()
            .any(|(_, b)| matches!(b, Block::Code { .. }));
        if let Some(table) = &mut self.table {
            match *tag {
                local_name!("tr") => table.rows.push(Vec::new()),
                local_name!("td") | local_name!("th") => {
                    self.suspend_inlines();
                    let Some(table) = &mut self.table else {
                        return;
                    };
                    if table.rows.is_empty() {
                        table.rows.push(Vec::new());
                    }
                    if let Some(row) = table.rows.last_mut() {
                        row.push(String::new());
                    }
                    table.cell = Some(node);
                }
                _ => {}
            }
        }
        if block {
            // Structure deeper than this is written as paragraphs: a line's prefix stays
            // short however deep a hostile page nests its lists.
            // A heading is one line: what is inside it is read as its words.
            let in_heading = self
                .blocks
                .iter()
                .any(|(_, b)| matches!(b, Block::Heading { .. }));
            if self.table.is_some() || in_code || in_heading || self.blocks.len() >= MAX_BLOCKS {
                return;
            }
            let pushed = match *tag {
                local_name!("blockquote") => Some(Block::Quote),
                local_name!("ul") | local_name!("menu") | local_name!("dir") => Some(Block::List {
                    ordered: false,
                    next: 1,
                }),
                local_name!("ol") => Some(Block::List {
                    ordered: true,
                    next: 1,
                }),
                local_name!("li") => {
                    // Numbered by its own list (not a list around an item it is inside of).
                    let list = self
                        .blocks
                        .iter()
                        .rposition(|(_, b)| matches!(b, Block::List { .. } | Block::Item { .. }))
                        .filter(|&k| matches!(self.blocks[k].1, Block::List { ordered: true, .. }));
                    Some(Block::Item {
                        marker: "- ".to_string(),
                        written: false,
                        list,
                    })
                }
                local_name!("pre") => Some(Block::Code {
                    fence: (longest_backtick_run(dom, dom.subtree(i)) + 1).max(3),
                    started: false,
                    line_empty: true,
                }),
                local_name!("table") if is_pipe_table(dom, i) => {
                    self.table = Some(Table {
                        node,
                        caption: String::new(),
                        rows: Vec::new(),
                        cell: None,
                    });
                    None
                }
                ref t => heading_rank(t).map(|level| Block::Heading {
                    level,
                    written: false,
                }),
            };
            if let Some(block) = pushed {
                self.blocks.push((node, block));
            }
            return;
        }
        if in_code {
            return;
        }
        let in_inline_code = self
            .inlines
            .iter()
            .any(|open| matches!(open.kind, InlineKind::Code(_)));
        let kind = match *tag {
            _ if in_inline_code => return,
            local_name!("b") | local_name!("strong") => InlineKind::Strong,
            local_name!("i") | local_name!("em") => InlineKind::Emphasis,
            local_name!("code") | local_name!("kbd") | local_name!("samp") | local_name!("tt") => {
                InlineKind::Code(longest_backtick_run(dom, dom.subtree(i)) + 1)
            }
            local_name!("a")
                if self.options.links && dom.href(i).is_some_and(|h| !h.trim().is_empty()) =>
            {
                InlineKind::Link
            }
            local_name!("img") => {
                if self.options.images && (self.keep_image)(i) {
                    if let Some(src) = dom.src(i).filter(|s| !s.trim().is_empty()) {
                        let alt = dom
                            .alt(i)
                            .unwrap_or("")
                            .split_whitespace()
                            .collect::<Vec<_>>()
                            .join(" ");
                        self.begin_word('!');
                        let mut image = String::from("![");
                        for c in alt.chars() {
                            if "[]\\*`_<&|".contains(c) {
                                image.push('\\');
                            }
                            image.push(c);
                        }
                        image.push_str(&link_destination(src));
                        // Not text: the words around it stay as they were.
                        self.target().push_str(&image);
                    }
                }
                return;
            }
            _ => return,
        };
        // `**` inside `**` would close it; a link inside a link is not one.
        if self.inlines.iter().any(|open| open.kind == kind) {
            return;
        }
        let href = match kind {
            InlineKind::Link => dom.href(i).unwrap_or("").to_string(),
            _ => String::new(),
        };
        self.inlines.push(Inline {
            node,
            kind,
            at: None,
            dead: false,
            href,
        });
    }

    fn close(&mut self, _dom: &Dom, i: usize, _block: bool) {
        let node = i as u32;
        if self.inlines.last().is_some_and(|open| open.node == node) {
            let Some(inline) = self.inlines.pop() else {
                return;
            };
            if inline.at.is_some() {
                // The character before the closing delimiter: the text's, or a code span's or
                // link's closer (another emphasis's closer is the same delimiter run).
                let last_char = self.last_char;
                let punctuation_before = match self.target().chars().next_back() {
                    Some('*') => last_char.is_some_and(is_punctuation),
                    last => last.is_some_and(is_punctuation),
                };
                match inline.kind {
                    InlineKind::Strong | InlineKind::Emphasis if punctuation_before => {
                        let closer = if inline.kind == InlineKind::Strong {
                            "**"
                        } else {
                            "*"
                        };
                        self.closing.push(Closing {
                            at: inline.at.unwrap_or(0),
                            opener: closer.len(),
                            closer,
                        });
                    }
                    _ => {
                        let closer = closer(&inline);
                        self.resolve_closing(None);
                        let target = self.target();
                        target.push_str(&closer);
                        if let InlineKind::Code(n) = inline.kind {
                            self.last_code_closer = Some((self.target().len(), n));
                        }
                    }
                }
            }
            return;
        }
        if let Some(table) = &self.table {
            if table.node == node {
                self.suspend_inlines();
                self.close_table();
                return;
            }
            if table.cell == Some(node) {
                self.suspend_inlines();
                if let Some(table) = &mut self.table {
                    table.cell = None;
                }
            }
            return;
        }
        if self.blocks.last().is_some_and(|(open, _)| *open == node) {
            if let Some((
                _,
                Block::Code {
                    started: true,
                    fence,
                    ..
                },
            )) = self.blocks.pop()
            {
                self.out.push('\n');
                self.write_prefix();
                self.out.extend(std::iter::repeat_n('`', fence));
                self.break_pending = true;
                self.space_pending = false;
            }
        }
    }

    fn line_break(&mut self) {
        if self.table.is_some() {
            if !self.target().is_empty() {
                self.space_pending = true;
            }
            return;
        }
        if self.in_code_block() {
            if !matches!(
                self.blocks.last(),
                Some((
                    _,
                    Block::Code {
                        line_empty: true,
                        ..
                    }
                ))
            ) {
                self.code_newline();
            }
            return;
        }
        let in_written_heading = self
            .blocks
            .iter()
            .any(|(_, b)| matches!(b, Block::Heading { written: true, .. }));
        if in_written_heading {
            self.space_pending = true;
            return;
        }
        self.end_line();
    }

    fn text(&mut self, text: &str, split: bool) -> bool {
        if self.table.is_none() && matches!(self.blocks.last(), Some((_, Block::Code { .. }))) {
            if !self.in_code_block() {
                if text.trim().is_empty() {
                    return false;
                }
                self.start_code();
                return self.code_text(text.trim_start_matches(['\n', '\r']));
            }
            return self.code_text(text);
        }
        self.space_pending |= split || text.starts_with(char::is_whitespace);
        let mut wrote = false;
        for word in text.split_whitespace() {
            self.word(word);
            self.space_pending = true;
            wrote = true;
        }
        self.space_pending = text.ends_with(char::is_whitespace) || (!wrote && self.space_pending);
        wrote
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn md(html: &str, options: Options) -> String {
        let dom = crate::dom::parse(html, 512);
        markdown(&dom, 0..dom.len(), |_| false, |_| true, options)
    }

    #[test]
    fn structure_is_kept() {
        let html = "<body><h1>Title <b>here</b></h1><p>One <em>two</em> three.</p>\
            <ul><li>first</li><li>second<ol><li>inner</li><li>more</li></ol></li></ul>\
            <blockquote><p>Said</p><p>twice</p></blockquote>\
            <pre>fn main() {\n    x();\n}</pre>\
            <table><tr><th>Name</th><th>Age</th></tr><tr><td>Ann</td><td>3|4</td></tr></table>\
            <p>Use <code>a*b</code> now</p></body>";
        assert_eq!(
            md(html, Options::default()),
            "# Title **here**\n\nOne *two* three.\n\n- first\n- second\n  1. inner\n  2. more\n\n\
             > Said\n>\n> twice\n\n```\nfn main() {\n    x();\n}\n```\n\n\
             | Name | Age |\n| --- | --- |\n| Ann | 3\\|4 |\n\nUse `a*b` now"
        );
    }

    #[test]
    fn links_and_images_only_when_asked() {
        let html = "<body><p>See <a href='/x y'>the <b>docs</b></a> and \
            <img src='a.png' alt='A [cat]'> here</p></body>";
        assert_eq!(md(html, Options::default()), "See the **docs** and here");
        assert_eq!(
            md(
                html,
                Options {
                    links: true,
                    images: true
                }
            ),
            "See [the **docs**](</x%20y>) and ![A \\[cat\\]](a.png) here"
        );
    }

    #[test]
    fn blocks_without_kept_words_write_nothing() {
        let html = "<body><h2 id=h>Gone</h2><ul><li><span id=s>gone</span></li></ul>\
            <p>Kept <b><span id=t>gone</span></b></p></body>";
        let dom = crate::dom::parse(html, 512);
        let dropped_ids = ["h", "s", "t"];
        let dropped = |i: usize| {
            dom.parent(i)
                .and_then(|p| dom.id(p))
                .is_some_and(|id| dropped_ids.contains(&id))
        };
        let out = markdown(&dom, 0..dom.len(), dropped, |_| true, Options::default());
        assert_eq!(out, "Kept");
    }

    #[test]
    fn a_layout_table_is_read_as_blocks() {
        let long = "word ".repeat(100);
        let html = format!(
            "<body><table><tr><td>Menu</td><td><p>{long}</p></td></tr>\
             <tr><td>x</td><td>y</td></tr></table></body>"
        );
        let out = md(&html, Options::default());
        assert!(!out.contains('|'), "{out}");
        assert!(out.starts_with("Menu\n\nword"), "{out}");
    }
}
