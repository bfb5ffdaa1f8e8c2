//! Loaders for the real gold data sets in `../shared/data` (found with
//! [`crate::shared_dir`]; every loader takes the data set's folder as an argument).
//!
//! The data is read in place and never copied into the repository: the folders carry
//! their own licences (dragnet's data is AGPL-3.0), see each folder's README.txt.
//!
//! Page bytes are kept raw (only decompressed and unwrapped): charset detection belongs
//! to the system under test. Gold text is decoded to `String` here because it is only
//! ever compared as text.
//!
//! No loader panics on odd files. A page whose files cannot be read or do not have the
//! expected shape is skipped; the `*_with_skips` variants say which and why, the plain
//! functions print that list to stderr.

use std::collections::BTreeMap;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

/// A real page with its human gold main text.
#[derive(Debug, Clone)]
pub struct GoldPage {
    /// File stem, for messages (`R12`, `bbc.co.uk_news_01`).
    pub id: String,
    /// A unique URL on `host`: the page's real URL when the data set has one, else
    /// `https://{host}/{source}/{id}`.
    pub url: String,
    /// The page's site (see each loader for where it comes from).
    pub host: String,
    /// Page bytes as served: decompressed if stored `.gz`, data-set wrappers removed,
    /// charset untouched.
    pub html: Vec<u8>,
    /// Gold main content (see each loader for what was stripped).
    pub gold_text: String,
}

/// A SWDE page with the attribute values it shows.
#[derive(Debug, Clone)]
pub struct SwdePage {
    /// File stem, `0000`..`1999`.
    pub id: String,
    /// The page's real URL (from its `<base href>` line).
    pub url: String,
    /// Page bytes, decompressed, with SWDE's `<base href>` line removed (the UTF-8 BOM in
    /// front of it is kept).
    pub html: Vec<u8>,
    /// `(attribute, value)` pairs, attributes in name order, values in ground-truth order.
    pub values: Vec<(String, String)>,
}

/// An L3S-GN1 page: the crawled HTML and the same page with the assessors' label spans.
#[derive(Debug, Clone)]
pub struct L3sPage {
    /// The page's uuid (upstream `urn:uuid:<id>`), also its file stem.
    pub id: String,
    /// The page's real URL (`url-mapping.txt`).
    pub url: String,
    /// The URL's host, lower-case, `www.` kept.
    pub host: String,
    /// `original/<id>.html.gz`, gunzipped: the page as crawled, bytes untouched. They are
    /// UTF-8 whatever the page's `<meta>` says (see [`crate::l3s::parse_page`]).
    pub original: Vec<u8>,
    /// `annotated/<id>.html.gz`, gunzipped: the assessed page, a browser's serialization of
    /// the original's DOM with `<span class="x-nc-selN">` around labelled text.
    pub annotated: Vec<u8>,
}

/// A WCXB dev-split page with its gold main text and page type.
#[derive(Debug, Clone)]
pub struct WcxbPage {
    /// The file id, `0001`..`4999` (file stem of `html/<id>.html.gz`).
    pub id: String,
    /// The page's real URL (see [`wcxb_dev_with_skips`] for the three pages without one).
    pub url: String,
    /// The URL's host, lower-case, `www.` kept.
    pub host: String,
    /// `html/<id>.html.gz`, gunzipped, bytes untouched. Every page is valid UTF-8, whatever
    /// its `<meta>` says (five declare iso-8859-1, 103 declare nothing).
    pub html: Vec<u8>,
    /// `ground_truth.main_content`, verbatim; `None` when the field is missing or null (two
    /// pages), which is not the same as an empty gold (the 19 JavaScript shells).
    pub gold_text: Option<String>,
    /// `_internal.page_type.primary`: article, forum, product, collection, listing,
    /// documentation or service.
    pub page_type: String,
    /// `ground_truth.with`: 3-8 word snippets an extraction must contain.
    pub with: Vec<String>,
    /// `ground_truth.without`: snippets an extraction must not contain.
    pub without: Vec<String>,
    /// The manifest's `spa` column is `y`: a JavaScript shell whose HTML holds little text.
    pub spa: bool,
    /// `ground_truth.title`, `author` and `publish_date` (`YYYY-MM-DD`, or `YYYY-MM`); None
    /// where null or missing.
    pub gold_title: Option<String>,
    pub gold_author: Option<String>,
    pub gold_date: Option<String>,
}

/// What a loader returned, with the files it had to skip (`path: reason`).
#[derive(Debug, Clone)]
pub struct Loaded<T> {
    pub pages: Vec<T>,
    pub skipped: Vec<String>,
}

impl<T> Loaded<T> {
    fn new() -> Self {
        Loaded {
            pages: Vec::new(),
            skipped: Vec::new(),
        }
    }

    fn skip(&mut self, path: &Path, reason: impl std::fmt::Display) {
        self.skipped.push(format!("{}: {reason}", path.display()));
    }

    /// What a data set's index holds (its manifest's rows, or a folder's entries): an index
    /// that cannot be read is one skip and an empty list, so its loader finds no pages.
    fn index<R>(&mut self, path: &Path, read: Result<Vec<R>, String>) -> Vec<R> {
        read.unwrap_or_else(|e| {
            self.skip(path, e);
            Vec::new()
        })
    }

    /// The pages, after printing the skipped files (if any) to stderr.
    fn report(self, what: &str) -> Vec<T> {
        if !self.skipped.is_empty() {
            eprintln!(
                "NOTICE: {what}: skipped {} file(s):\n  {}",
                self.skipped.len(),
                self.skipped.join("\n  ")
            );
        }
        self.pages
    }
}

// ------------------------------------------------------------------------------------------
// dragnet

/// The line separating article from user comments in dragnet's gold files. Upstream spells it
/// `!@#$%^&*()  COMMENTS`; the files also have `!!@#…`, `@#…` (no `!`), one or three spaces,
/// tabs, `COMMNENTS`, `CORRECTED` and a bare `!@#$%^&*()`, so any line containing this is one.
const DRAGNET_COMMENTS: &str = "@#$%^&*()";

/// dragnet pages whose host (hosts_guess.tsv, column `host_guess`) has at least `min_pages`
/// pages; see [`dragnet_with_skips`].
pub fn dragnet(dir: &Path, min_pages: usize) -> Vec<GoldPage> {
    dragnet_with_skips(dir, min_pages).report("dragnet")
}

/// dragnet (Moz, 2012): 1,381 pages, each `HTML/<id>.html.gz` (raw HTML as fetched, gzipped
/// by the shared folder) with gold `Corrected/<id>.html.corrected.txt`: text copied by hand
/// from the rendered page, no markup. If a line containing `@#$%^&*()` occurs (415 files; the
/// README counts only the 396 spelled exactly `!@#$%^&*()  COMMENTS`), text before it is the
/// article and text after it is user comments; `gold_text` is the article part only, because
/// that is what upstream scores against. Gold encodings vary per file: UTF-8, windows-1252,
/// and 5 files UTF-16LE with a BOM; line ends are normalised to `\n`.
///
/// The data has no URLs. `hosts_guess.tsv` (`file`, `host_guess`, `method`, `split`) gives a
/// heuristic host per page (og:url, canonical link, else the most frequent link host); `host`
/// is that value verbatim (R427 has none and is never returned) and `url` is
/// `https://{host}/dragnet/{id}`. Hosts are counted over the TSV rows, so a host qualifies
/// even if one of its files cannot be read. Pages come sorted by host, then id.
pub fn dragnet_with_skips(dir: &Path, min_pages: usize) -> Loaded<GoldPage> {
    let mut out = Loaded::new();
    let tsv_path = dir.join("hosts_guess.tsv");
    let rows = out.index(&tsv_path, read_tsv(&tsv_path));
    let mut hosts: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for row in rows {
        let (Some(id), Some(host)) = (row.get("file"), row.get("host_guess")) else {
            continue;
        };
        if !id.is_empty() && !host.is_empty() {
            hosts.entry(host.clone()).or_default().push(id.clone());
        }
    }
    for (host, mut ids) in hosts {
        if ids.len() < min_pages {
            continue;
        }
        ids.sort();
        for id in ids {
            let html_path = first_existing(&[
                dir.join("HTML").join(format!("{id}.html.gz")),
                dir.join("HTML").join(format!("{id}.html")),
            ]);
            let html = match read_maybe_gz(&html_path) {
                Ok(b) => b,
                Err(e) => {
                    out.skip(&html_path, e);
                    continue;
                }
            };
            let gold_path = dir
                .join("Corrected")
                .join(format!("{id}.html.corrected.txt"));
            let gold = match fs::read(&gold_path) {
                Ok(b) => dragnet_article(&decode_text(&b)),
                Err(e) => {
                    out.skip(&gold_path, e);
                    continue;
                }
            };
            out.pages.push(GoldPage {
                url: format!("https://{host}/dragnet/{id}"),
                id,
                host: host.clone(),
                html,
                gold_text: gold,
            });
        }
    }
    out
}

/// The article part of a dragnet gold file: the lines before the comments separator.
fn dragnet_article(text: &str) -> String {
    let mut article = String::new();
    for line in text.lines() {
        if line.contains(DRAGNET_COMMENTS) {
            break;
        }
        article.push_str(line);
        article.push('\n');
    }
    article.trim().to_string()
}

// ------------------------------------------------------------------------------------------
// cleanportaleval

/// cleanportaleval pages; see [`cleanportaleval_with_skips`].
pub fn cleanportaleval(dir: &Path) -> Vec<GoldPage> {
    cleanportaleval_with_skips(dir).report("cleanportaleval")
}

/// CleanPortalEval (Endrédy & Novák 2013): 71 pages of 4 sites in CleanEval format.
///
/// `input/<stem>.html` is the raw page inside CleanEval's wrapper: after optional blank
/// lines, a line `<text id="URL" …>`, and a last line `</text>`. Both lines are removed (the
/// bytes between them are kept as they are); `url` is the `id` attribute, verbatim (one is
/// `http://tv.msnbc.com/&quot;People`, kept so, as in manifest.tsv). A file without the
/// wrapper is skipped. `host` is the URL's host, lower-cased, without a leading `www.` (three
/// washingtonpost.com URLs have `www.`; the site is one), so a system that groups by exact
/// URL host sees `www.washingtonpost.com` as a fifth, 3-page host.
///
/// `GoldStandard/<stem>.txt` (UTF-8) is CleanEval gold: a `URL: …` line, then one block per
/// paragraph, each opened by a marker `<p>`, `<h>` (heading) or `<l>` (list item), with
/// HTML-escaped text (`&#8217;`, `&rsquo;`, `&amp;`…). `gold_text` drops the URL line, the
/// markers (and one stray `</p>`), `<!-- … -->` comments, decodes the entities, and joins
/// blocks with a blank line. Two index pages (bbc.co.uk_news_04 and _05) have no main
/// content: their gold is empty.
pub fn cleanportaleval_with_skips(dir: &Path) -> Loaded<GoldPage> {
    let mut out = Loaded::new();
    let input = dir.join("input");
    let files = out.index(&input, list_dir(&input));
    for path in files {
        let Some(id) = file_name(&path).strip_suffix(".html").map(str::to_string) else {
            continue;
        };
        let raw = match fs::read(&path) {
            Ok(b) => b,
            Err(e) => {
                out.skip(&path, e);
                continue;
            }
        };
        let Some((url, html)) = unwrap_cleaneval(&raw) else {
            out.skip(&path, "no <text id=URL> … </text> wrapper");
            continue;
        };
        let Some(host) = url_host(&url) else {
            out.skip(&path, format!("no host in {url:?}"));
            continue;
        };
        let gold_path = dir.join("GoldStandard").join(format!("{id}.txt"));
        let gold = match fs::read(&gold_path) {
            Ok(b) => cleaneval_gold_text(&decode_text(&b)),
            Err(e) => {
                out.skip(&gold_path, e);
                continue;
            }
        };
        out.pages.push(GoldPage {
            id,
            host: host.strip_prefix("www.").unwrap_or(&host).to_string(),
            url,
            html,
            gold_text: gold,
        });
    }
    out
}

/// `(url, page)` from a CleanEval input file, or `None` without the wrapper.
fn unwrap_cleaneval(raw: &[u8]) -> Option<(String, Vec<u8>)> {
    let start = raw.iter().position(|b| !b.is_ascii_whitespace())?;
    let open_end = match raw[start..].iter().position(|&b| b == b'\n') {
        Some(i) => start + i + 1,
        None => raw.len(),
    };
    let open = &raw[start..open_end];
    if !starts_with_ignore_case(open, b"<text") {
        return None;
    }
    let url = attribute(open, b"id")?;
    let body = &raw[open_end..];
    let end = body.iter().rposition(|b| !b.is_ascii_whitespace())? + 1;
    const CLOSE: &[u8] = b"</text>";
    if end < CLOSE.len() || !body[end - CLOSE.len()..end].eq_ignore_ascii_case(CLOSE) {
        return None;
    }
    // Cut at the start of the `</text>` line (or at the tag if it shares a line).
    let tag = end - CLOSE.len();
    let line_start = body[..tag]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let cut = if body[line_start..tag]
        .iter()
        .all(|b| b.is_ascii_whitespace())
    {
        line_start
    } else {
        tag
    };
    Some((url, body[..cut].to_vec()))
}

/// The value of `name="…"` (or `'…'`, or unquoted) in a start tag.
fn attribute(tag: &[u8], name: &[u8]) -> Option<String> {
    let lower = tag.to_ascii_lowercase();
    let mut from = 0;
    while let Some(i) = find(&lower[from..], name).map(|i| i + from) {
        from = i + 1;
        if i == 0 || !lower[i - 1].is_ascii_whitespace() {
            continue;
        }
        let mut j = i + name.len();
        while tag.get(j).is_some_and(u8::is_ascii_whitespace) {
            j += 1;
        }
        if tag.get(j) != Some(&b'=') {
            continue;
        }
        j += 1;
        while tag.get(j).is_some_and(u8::is_ascii_whitespace) {
            j += 1;
        }
        let value = match tag.get(j) {
            Some(&q) if q == b'"' || q == b'\'' => {
                let rest = &tag[j + 1..];
                &rest[..rest.iter().position(|&b| b == q)?]
            }
            Some(_) => {
                let rest = &tag[j..];
                let n = rest
                    .iter()
                    .position(|&b| b.is_ascii_whitespace() || b == b'>')
                    .unwrap_or(rest.len());
                &rest[..n]
            }
            None => return None,
        };
        return Some(String::from_utf8_lossy(value).trim().to_string());
    }
    None
}

/// CleanEval gold to plain text (see [`cleanportaleval_with_skips`]).
fn cleaneval_gold_text(text: &str) -> String {
    let text = strip_html_comments(text);
    let mut blocks: Vec<String> = Vec::new();
    let mut seen_content = false;
    for line in text.lines() {
        let trimmed = line.trim();
        if !seen_content && trimmed.is_empty() {
            continue;
        }
        if !seen_content && trimmed.starts_with("URL:") {
            seen_content = true;
            continue;
        }
        seen_content = true;
        let mut rest = trimmed;
        let mut opens_block = blocks.is_empty();
        for marker in ["<p>", "<h>", "<l>", "<P>", "<H>", "<L>"] {
            if let Some(r) = rest.strip_prefix(marker) {
                rest = r.trim_start();
                opens_block = true;
                break;
            }
        }
        let mut line = rest.to_string();
        for tag in ["</p>", "</h>", "</l>", "</P>", "</H>", "</L>"] {
            line = line.replace(tag, "");
        }
        let line = decode_entities(&line);
        if opens_block {
            blocks.push(String::new());
        }
        let block = blocks.last_mut().expect("a block was opened");
        if !line.trim().is_empty() {
            if !block.is_empty() {
                block.push('\n');
            }
            block.push_str(line.trim());
        }
    }
    blocks.retain(|b| !b.is_empty());
    blocks.join("\n\n")
}

fn strip_html_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("<!--") {
        out.push_str(&rest[..i]);
        match rest[i..].find("-->") {
            Some(j) => rest = &rest[i + j + 3..],
            None => {
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// Numeric character references and the named entities that occur in gold text. Unknown
/// names are left as they are.
fn decode_entities(text: &str) -> String {
    const NAMED: &[(&str, char)] = &[
        ("amp", '&'),
        ("lt", '<'),
        ("gt", '>'),
        ("quot", '"'),
        ("apos", '\''),
        ("nbsp", '\u{a0}'),
        ("lsquo", '\u{2018}'),
        ("rsquo", '\u{2019}'),
        ("ldquo", '\u{201c}'),
        ("rdquo", '\u{201d}'),
        ("ndash", '\u{2013}'),
        ("mdash", '\u{2014}'),
        ("hellip", '\u{2026}'),
        ("bull", '\u{2022}'),
        ("prime", '\u{2032}'),
        ("copy", '\u{a9}'),
        ("reg", '\u{ae}'),
        ("trade", '\u{2122}'),
        ("eacute", '\u{e9}'),
    ];
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        let decoded = rest[1..].find(';').filter(|&n| n <= 10).and_then(|n| {
            let name = &rest[1..1 + n];
            let c = if let Some(num) = name.strip_prefix('#') {
                let v = match num.strip_prefix(['x', 'X']) {
                    Some(hex) => u32::from_str_radix(hex, 16).ok(),
                    None => num.parse::<u32>().ok(),
                };
                v.and_then(char::from_u32)
            } else {
                NAMED.iter().find(|(k, _)| *k == name).map(|&(_, c)| c)
            };
            c.map(|c| (c, n + 2))
        });
        match decoded {
            Some((c, len)) => {
                out.push(c);
                rest = &rest[len..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

// ------------------------------------------------------------------------------------------
// swde-books

/// SWDE book pages with their attribute values; see [`swde_books_with_skips`].
pub fn swde_books(dir: &Path) -> Vec<SwdePage> {
    swde_books_with_skips(dir).report("swde-books")
}

/// SWDE (Hao et al., SIGIR 2011), the book vertical's booksamillion site: 2,000 pages
/// `testset/book/book-booksamillion-2000/NNNN.htm.gz`. Each page starts with a UTF-8 BOM and
/// a line `<base href="URL"/>` added by SWDE (pages carry no charset declaration, so the BOM
/// is what makes them decode as UTF-8). The `<base>` line is removed and gives `url`; the
/// BOM and every other byte are kept. A page without that line is skipped. (Every
/// `testset/book/book-<site>-<n>/` folder is read the same way; only booksamillion is there.)
///
/// `groundtruth/book/book-<site>-<attr>.txt` (UTF-8 with BOM, CRLF, tab-separated): line 1
/// `vertical site attribute`, line 2 `#pages #pages_with_value #values #distinct`, then
/// `page_id n_values value_1 [value_2 …]`. Pages can have several values (authors: up to 4).
/// A page without a value is written `n_values = 0` with the placeholder `<NULL>` (other
/// sites only; booksamillion has a value for every page and attribute): such rows add no
/// value. Every attribute file of the site is read (title, author, isbn_13, publisher,
/// publication_date). Values are the page's visible text, already unescaped (`&` not
/// `&amp;`); they are trimmed, and the `": "` that isbn_13, publisher and publication_date
/// values start with (the text after `<strong>ISBN-13</strong>`) is removed.
pub fn swde_books_with_skips(dir: &Path) -> Loaded<SwdePage> {
    let mut out = Loaded::new();
    let testset = dir.join("testset").join("book");
    let sites = out.index(&testset, list_dir(&testset));
    for site_dir in sites.into_iter().filter(|p| p.is_dir()) {
        // book-<site>-<n>
        let name = file_name(&site_dir);
        let Some(site) = name
            .strip_prefix("book-")
            .and_then(|s| s.rsplit_once('-'))
            .map(|(site, _)| site.to_string())
        else {
            continue;
        };
        let values = swde_values(&dir.join("groundtruth").join("book"), &site, &mut out);
        let files = match list_dir(&site_dir) {
            Ok(files) => files,
            Err(e) => {
                out.skip(&site_dir, e);
                continue;
            }
        };
        for path in files {
            let fname = file_name(&path);
            let Some(id) = fname
                .strip_suffix(".htm.gz")
                .or_else(|| fname.strip_suffix(".htm"))
                .map(str::to_string)
            else {
                continue;
            };
            let raw = match read_maybe_gz(&path) {
                Ok(b) => b,
                Err(e) => {
                    out.skip(&path, e);
                    continue;
                }
            };
            let Some((url, html)) = unwrap_swde(&raw) else {
                out.skip(&path, "line 1 is not <base href=URL>");
                continue;
            };
            out.pages.push(SwdePage {
                values: values.get(&id).cloned().unwrap_or_default(),
                id,
                url,
                html,
            });
        }
    }
    out
}

/// page id → `(attribute, value)` for one site, attributes in name order.
fn swde_values(
    dir: &Path,
    site: &str,
    out: &mut Loaded<SwdePage>,
) -> BTreeMap<String, Vec<(String, String)>> {
    let mut by_page: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    let prefix = format!("book-{site}-");
    let files = match list_dir(dir) {
        Ok(files) => files,
        Err(e) => {
            out.skip(dir, e);
            return by_page;
        }
    };
    for path in files {
        let Some(attr) = file_name(&path)
            .strip_prefix(&prefix)
            .and_then(|s| s.strip_suffix(".txt"))
            .map(str::to_string)
        else {
            continue;
        };
        let text = match fs::read(&path) {
            Ok(b) => decode_text(&b),
            Err(e) => {
                out.skip(&path, e);
                continue;
            }
        };
        for line in text.lines().skip(2) {
            let mut fields = line.split('\t');
            let (Some(page), Some(n)) = (fields.next(), fields.next()) else {
                continue;
            };
            if n.trim() == "0" {
                continue; // `<NULL>` placeholder
            }
            for value in fields {
                let value = value.trim();
                let value = value.strip_prefix(':').map_or(value, str::trim_start);
                if value.is_empty() || value == "<NULL>" {
                    continue;
                }
                by_page
                    .entry(page.trim().to_string())
                    .or_default()
                    .push((attr.clone(), value.to_string()));
            }
        }
    }
    // Files are listed in name order, so attributes already are; keep it explicit.
    for values in by_page.values_mut() {
        values.sort_by(|a, b| a.0.cmp(&b.0));
    }
    by_page
}

/// `(url, page)`: line 1 (after a UTF-8 BOM, which stays) must be `<base href="URL"…>`.
fn unwrap_swde(raw: &[u8]) -> Option<(String, Vec<u8>)> {
    const BOM: &[u8] = b"\xef\xbb\xbf";
    let bom = if raw.starts_with(BOM) { BOM.len() } else { 0 };
    let rest = &raw[bom..];
    let line_end = rest
        .iter()
        .position(|&b| b == b'\n')
        .map_or(rest.len(), |i| i + 1);
    let line = &rest[..line_end];
    if !starts_with_ignore_case(line, b"<base") {
        return None;
    }
    let url = attribute(line, b"href").filter(|u| !u.is_empty())?;
    let mut html = raw[..bom].to_vec();
    html.extend_from_slice(&rest[line_end..]);
    Some((url, html))
}

// ------------------------------------------------------------------------------------------
// l3s-gn1

/// L3S-GN1 pages with their annotated twins; see [`l3s_gn1_with_skips`].
pub fn l3s_gn1(dir: &Path) -> Vec<L3sPage> {
    l3s_gn1_with_skips(dir).report("l3s-gn1")
}

/// L3S-GN1 (Kohlschütter et al., WSDM 2010): 621 news pages of 407 hosts (Google News, first
/// half of 2008), each as `original/<uuid>.html.gz` (the page as crawled) and
/// `annotated/<uuid>.html.gz` (the assessors' browser DOM with label spans; see
/// [`crate::l3s`]). Both are kept raw (gunzipped only). `manifest.tsv` (`file`, `url`, `host`,
/// derived from upstream's `url-mapping.txt`) lists the pages: `id` is the file name without
/// `.html.gz`, `url` and `host` are verbatim (`host` is the URL's host, `www.` kept; derived
/// from the URL if the column is empty). A row whose file is missing from either folder, or
/// whose URL has no host, is skipped. Pages come in manifest order (sorted by uuid).
pub fn l3s_gn1_with_skips(dir: &Path) -> Loaded<L3sPage> {
    let mut out = Loaded::new();
    let tsv_path = dir.join("manifest.tsv");
    let rows = out.index(&tsv_path, read_tsv(&tsv_path));
    for (line, row) in rows.into_iter().enumerate() {
        let file = row.get("file").map_or("", String::as_str);
        let url = row.get("url").map_or("", String::as_str);
        let Some(id) = file
            .strip_suffix(".html.gz")
            .or_else(|| file.strip_suffix(".html"))
            .filter(|id| !id.is_empty() && !id.contains(['/', '\\']))
        else {
            out.skip(
                &tsv_path,
                format!("row {}: file {file:?} is not <uuid>.html.gz", line + 2),
            );
            continue;
        };
        let Some(url_host) = url_host(url) else {
            out.skip(&tsv_path, format!("row {}: no host in {url:?}", line + 2));
            continue;
        };
        let host = row
            .get("host")
            .filter(|h| !h.is_empty())
            .cloned()
            .unwrap_or(url_host);
        let mut read = |folder: &str| {
            let path = first_existing(&[
                dir.join(folder).join(format!("{id}.html.gz")),
                dir.join(folder).join(format!("{id}.html")),
            ]);
            read_maybe_gz(&path).map_err(|e| out.skip(&path, e)).ok()
        };
        let (Some(original), Some(annotated)) = (read("original"), read("annotated")) else {
            continue;
        };
        out.pages.push(L3sPage {
            id: id.to_string(),
            url: url.to_string(),
            host,
            original,
            annotated,
        });
    }
    out
}

// ------------------------------------------------------------------------------------------
// wcxb-dev

/// WCXB dev pages; see [`wcxb_dev_with_skips`].
pub fn wcxb_dev(dir: &Path) -> Vec<WcxbPage> {
    wcxb_dev_with_skips(dir).report("wcxb-dev")
}

/// WCXB v1.0's dev split (Foley 2026, CC-BY-4.0): 1,358 pages of seven page types, mostly
/// one page per site (1,181 hosts). `manifest.tsv` (`file_id`, `page_type`, `domain`, `spa`,
/// `gold_chars`, `url`) lists them; each is `html/<id>.html.gz` with gold
/// `ground-truth/<id>.json`.
///
/// `gold_text` is `ground_truth.main_content` verbatim (headings on their own lines,
/// paragraphs split by blank lines; the tool-drafted, human-reviewed gold of the README); it is
/// `None` on the two pages whose JSON has no `main_content` (4802, 4893: their `with` snippets
/// show there is content, the gold was just not written), and empty on the 19 `spa` pages.
/// `page_type` is the JSON's `_internal.page_type.primary`, else the manifest's column; a page
/// with neither is skipped. `with` / `without` are `ground_truth.with[]` / `without[]`.
///
/// `url` is the manifest's `url`, else the JSON's `url`. Three pages have neither (0551,
/// 4281, 4314); their URL is the page's own `<link rel=canonical>` or `og:url` when it has one
/// (4281, 4314), else `https://wcxb-dev.invalid/{id}` (0551, a bot-challenge page). `host`
/// is the URL's host, lower-case, `www.` kept (the manifest's `domain` drops `www.`). Pages
/// come in manifest order (by id). A row whose files cannot be read or parsed is skipped.
pub fn wcxb_dev_with_skips(dir: &Path) -> Loaded<WcxbPage> {
    let mut out = Loaded::new();
    let tsv_path = dir.join("manifest.tsv");
    let rows = out.index(&tsv_path, read_tsv(&tsv_path));
    for (line, row) in rows.into_iter().enumerate() {
        let field = |name: &str| row.get(name).map_or("", String::as_str);
        let id = field("file_id");
        if id.is_empty() || id.contains(['/', '\\']) || id.starts_with('.') {
            out.skip(&tsv_path, format!("row {}: file_id {id:?}", line + 2));
            continue;
        }
        let html_path = first_existing(&[
            dir.join("html").join(format!("{id}.html.gz")),
            dir.join("html").join(format!("{id}.html")),
        ]);
        let html = match read_maybe_gz(&html_path) {
            Ok(b) => b,
            Err(e) => {
                out.skip(&html_path, e);
                continue;
            }
        };
        let gold_path = dir.join("ground-truth").join(format!("{id}.json"));
        let json: serde_json::Value = match fs::read(&gold_path)
            .map_err(|e| e.to_string())
            .and_then(|b| serde_json::from_slice(&b).map_err(|e| e.to_string()))
        {
            Ok(v) => v,
            Err(e) => {
                out.skip(&gold_path, e);
                continue;
            }
        };
        let truth = &json["ground_truth"];
        let page_type = json["_internal"]["page_type"]["primary"]
            .as_str()
            .unwrap_or(field("page_type"))
            .trim()
            .to_string();
        if page_type.is_empty() {
            out.skip(&gold_path, "no page type");
            continue;
        }
        let url = [field("url"), json["url"].as_str().unwrap_or("")]
            .into_iter()
            .map(str::trim)
            .find(|u| url_host(u).is_some())
            .map(str::to_string)
            .or_else(|| declared_url(&html))
            .unwrap_or_else(|| format!("https://wcxb-dev.invalid/{id}"));
        let Some(host) = url_host(&url) else {
            out.skip(&tsv_path, format!("row {}: no host in {url:?}", line + 2));
            continue;
        };
        let snippets = |key: &str| -> Vec<String> {
            truth[key]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|v| v.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default()
        };
        out.pages.push(WcxbPage {
            id: id.to_string(),
            url,
            host,
            html,
            gold_text: truth["main_content"].as_str().map(str::to_string),
            page_type,
            with: snippets("with"),
            without: snippets("without"),
            gold_title: truth["title"].as_str().map(str::to_string),
            gold_author: truth["author"].as_str().map(str::to_string),
            gold_date: truth["publish_date"].as_str().map(str::to_string),
            spa: field("spa").eq_ignore_ascii_case("y"),
        });
    }
    out
}

/// The absolute http(s) URL a page declares for itself: its first `<link rel=canonical
/// href>`, else its first `<meta property=og:url content>`.
fn declared_url(html: &[u8]) -> Option<String> {
    let lower = &html.to_ascii_lowercase()[..];
    let tags = |open: &'static [u8]| {
        let mut from = 0;
        std::iter::from_fn(move || {
            let start = from + find(&lower[from..], open)?;
            let end = lower[start..]
                .iter()
                .position(|&b| b == b'>')
                .map_or(lower.len(), |i| start + i);
            from = end;
            Some(&html[start..end])
        })
    };
    let absolute = |u: String| {
        let u = decode_entities(u.trim());
        (u.starts_with("http://") || u.starts_with("https://"))
            .then_some(u)
            .filter(|u| url_host(u).is_some())
    };
    let canonical = tags(b"<link")
        .filter(|tag| {
            attribute(tag, b"rel").is_some_and(|rel| {
                rel.split_ascii_whitespace()
                    .any(|r| r.eq_ignore_ascii_case("canonical"))
            })
        })
        .find_map(|tag| attribute(tag, b"href").and_then(absolute));
    canonical.or_else(|| {
        tags(b"<meta")
            .filter(|tag| {
                attribute(tag, b"property").is_some_and(|p| p.eq_ignore_ascii_case("og:url"))
            })
            .find_map(|tag| attribute(tag, b"content").and_then(absolute))
    })
}

// ------------------------------------------------------------------------------------------
// tokens

// The token metric lives with the content model, which is trained and judged by it.
pub use stencil_operators::page_models::content::align::{tokens, TokenOverlap};

// ------------------------------------------------------------------------------------------
// helpers

/// Gold text bytes to a `String`: a BOM decides (UTF-8, UTF-16LE/BE), else UTF-8 when valid,
/// else windows-1252 (as textf1.py falls back to cp1252). Line ends become `\n`.
fn decode_text(bytes: &[u8]) -> String {
    let text = match encoding_rs::Encoding::for_bom(bytes) {
        Some((encoding, bom_len)) => encoding
            .decode_without_bom_handling(&bytes[bom_len..])
            .0
            .into_owned(),
        None => match std::str::from_utf8(bytes) {
            Ok(s) => s.to_string(),
            Err(_) => encoding_rs::WINDOWS_1252
                .decode_without_bom_handling(bytes)
                .0
                .into_owned(),
        },
    };
    if text.contains('\r') {
        text.replace("\r\n", "\n").replace('\r', "\n")
    } else {
        text
    }
}

/// The file's bytes, gunzipped when its name ends in `.gz`.
fn read_maybe_gz(path: &Path) -> Result<Vec<u8>, String> {
    let bytes = fs::read(path).map_err(|e| e.to_string())?;
    if path.extension().is_some_and(|e| e == "gz") {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(&bytes[..])
            .read_to_end(&mut out)
            .map_err(|e| format!("gunzip: {e}"))?;
        Ok(out)
    } else {
        Ok(bytes)
    }
}

/// The first path that exists, else the first one (so the error names it).
fn first_existing(paths: &[PathBuf]) -> PathBuf {
    paths
        .iter()
        .find(|p| p.exists())
        .unwrap_or(&paths[0])
        .clone()
}

/// A folder's entries, sorted by name.
fn list_dir(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut paths: Vec<PathBuf> = fs::read_dir(dir)
        .map_err(|e| e.to_string())?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .collect();
    paths.sort();
    Ok(paths)
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Rows of a tab-separated file with a header line, as column → value.
fn read_tsv(path: &Path) -> Result<Vec<BTreeMap<String, String>>, String> {
    let text = decode_text(&fs::read(path).map_err(|e| e.to_string())?);
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().ok_or("empty file")?.split('\t').collect();
    Ok(lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            header
                .iter()
                .zip(l.split('\t'))
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .collect()
        })
        .collect())
}

/// The lower-cased host of an absolute URL (no user info, no port).
fn url_host(url: &str) -> Option<String> {
    let rest = &url[url.find("://")? + 3..];
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = match host_port.rsplit_once(':') {
        Some((h, port)) if port.bytes().all(|b| b.is_ascii_digit()) => h,
        _ => host_port,
    };
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

fn starts_with_ignore_case(hay: &[u8], prefix: &[u8]) -> bool {
    hay.len() >= prefix.len() && hay[..prefix.len()].eq_ignore_ascii_case(prefix)
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Distinct hosts of some pages, with their page counts.
pub fn host_counts(pages: &[GoldPage]) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for page in pages {
        *counts.entry(page.host.clone()).or_insert(0) += 1;
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_like_python_word_regex() {
        assert_eq!(
            tokens("Hello, World_1! It's 2012—naïve CAFÉ"),
            ["hello", "world_1", "it", "s", "2012", "naïve", "café"]
        );
        assert_eq!(tokens("e\u{301}t\u{e9}"), ["e\u{301}té"]);
        assert_eq!(tokens("  "), Vec::<String>::new());
        assert_eq!(tokens("日本語 ½"), ["日本語", "½"]);
    }

    #[test]
    fn dragnet_article_stops_at_any_separator() {
        let gold = "Title\nBody text\n\n!@#$%^&*()  COMMENTS\nnice post\n";
        assert_eq!(dragnet_article(gold), "Title\nBody text");
        assert_eq!(dragnet_article("a\n@#$%^&*() COMMENTS\nb"), "a");
        assert_eq!(dragnet_article("just text\r"), "just text");
    }

    #[test]
    fn cleaneval_gold_is_unmarked_and_unescaped() {
        let gold = "\nURL: http://x.test/a\n<h>Head&#039;s\n \n<p>One\n two</p>\n\n<l>&rsquo;item &amp; &bogus;\n";
        assert_eq!(
            cleaneval_gold_text(gold),
            "Head's\n\nOne\ntwo\n\n\u{2019}item & &bogus;"
        );
        assert_eq!(
            cleaneval_gold_text("\nURL: http://x\n\n<!-- this page contains no article -->\n"),
            ""
        );
    }

    #[test]
    fn cleaneval_wrapper_is_removed() {
        let raw = b"\r\n<text id=\"http://Www.X.test/p?q=1\" title=\"\"> \r\n\r\n<html>x</html>\r\n\r\n</text>\r\n";
        let (url, html) = unwrap_cleaneval(raw).unwrap();
        assert_eq!(url, "http://Www.X.test/p?q=1");
        assert_eq!(html, b"\r\n<html>x</html>\r\n\r\n");
        assert_eq!(url_host(&url).as_deref(), Some("www.x.test"));
        assert!(unwrap_cleaneval(b"<html></html>").is_none());
    }

    #[test]
    fn swde_base_line_is_removed_bom_kept() {
        let raw = b"\xef\xbb\xbf<base href=\"http://www.b.test/product/1\"/>\n<!DOCTYPE html>";
        let (url, html) = unwrap_swde(raw).unwrap();
        assert_eq!(url, "http://www.b.test/product/1");
        assert_eq!(html, b"\xef\xbb\xbf<!DOCTYPE html>");
        assert!(unwrap_swde(b"<html>").is_none());
    }

    #[test]
    fn l3s_odd_rows_are_skipped() {
        let dir = std::env::temp_dir().join(format!("stencil-l3s-{}", std::process::id()));
        for folder in ["original", "annotated"] {
            fs::create_dir_all(dir.join(folder)).unwrap();
            fs::write(dir.join(folder).join("a.html"), b"<p>a</p>").unwrap();
        }
        fs::write(dir.join("original/b.html.gz"), b"not gzip").unwrap();
        fs::write(dir.join("annotated/b.html.gz"), b"not gzip").unwrap();
        fs::write(dir.join("original/c.html"), b"<p>c</p>").unwrap();
        fs::write(
            dir.join("manifest.tsv"),
            "file\turl\thost\n\
             a.html.gz\thttp://A.test/x\t\n\
             b.html.gz\thttp://b.test/\tb.test\n\
             c.html.gz\thttp://c.test/\tc.test\n\
             ../d.html.gz\thttp://d.test/\td.test\n\
             e.html.gz\tnot a url\t\n",
        )
        .unwrap();
        let loaded = l3s_gn1_with_skips(&dir);
        fs::remove_dir_all(&dir).unwrap();
        assert_eq!(loaded.pages.len(), 1);
        let a = &loaded.pages[0];
        assert_eq!((a.id.as_str(), a.host.as_str()), ("a", "a.test"));
        assert_eq!(
            (&a.original[..], &a.annotated[..]),
            (&b"<p>a</p>"[..], &b"<p>a</p>"[..])
        );
        // b: two bad gzip files; c: no annotated file; d: a path; e: no host.
        assert_eq!(loaded.skipped.len(), 5, "{:?}", loaded.skipped);
        assert_eq!(l3s_gn1_with_skips(&dir).skipped.len(), 1);
    }

    #[test]
    fn wcxb_pages_declare_their_url() {
        let page = concat!(
            r#"<html><head><meta property="og:url" content="https://b.test/og">"#,
            r#"<link href="/rel" rel=canonical>"#,
            r#"<LINK REL="alternate canonical" HREF="https://A.test/x?a=1&amp;b=2">"#,
        );
        assert_eq!(
            declared_url(page.as_bytes()).as_deref(),
            Some("https://A.test/x?a=1&b=2")
        );
        assert_eq!(
            declared_url(br#"<meta property='og:url' content='http://b.test/og'>"#).as_deref(),
            Some("http://b.test/og")
        );
        assert_eq!(declared_url(b"<link rel=canonical href=/x><title>x"), None);
    }

    /// The counts `../shared/data/wcxb-dev/README.txt` and `manifest.tsv` promise.
    #[test]
    fn wcxb_dev_pages_and_types() {
        let Some(dir) = crate::shared_dir("data/wcxb-dev") else {
            return;
        };
        let loaded = wcxb_dev_with_skips(&dir);
        assert!(loaded.skipped.is_empty(), "skipped: {:?}", loaded.skipped);
        let pages = loaded.pages;
        assert_eq!(pages.len(), 1_358);
        let mut types: BTreeMap<&str, usize> = BTreeMap::new();
        for page in &pages {
            assert!(!page.page_type.is_empty(), "{} has no page type", page.id);
            *types.entry(page.page_type.as_str()).or_default() += 1;
        }
        let expected = [
            ("article", 711),
            ("collection", 91),
            ("documentation", 89),
            ("forum", 112),
            ("listing", 98),
            ("product", 92),
            ("service", 165),
        ];
        assert_eq!(types, BTreeMap::from(expected));
        assert_eq!(pages.iter().filter(|p| p.spa).count(), 19);
        // Gold: missing on two pages, empty on the JavaScript shells only.
        let missing: Vec<&str> = pages
            .iter()
            .filter(|p| p.gold_text.is_none())
            .map(|p| p.id.as_str())
            .collect();
        assert_eq!(missing, ["4802", "4893"]);
        for page in &pages {
            if page
                .gold_text
                .as_deref()
                .is_some_and(|g| g.trim().is_empty())
            {
                assert!(page.spa, "{}: empty gold on a non-spa page", page.id);
            }
        }
        assert!(pages.iter().all(|p| !p.html.is_empty()));
        assert!(pages.iter().filter(|p| !p.with.is_empty()).count() > 1_300);
        // URLs distinct, three not in the manifest.
        let urls: std::collections::BTreeSet<&str> = pages.iter().map(|p| p.url.as_str()).collect();
        assert_eq!(urls.len(), pages.len());
        let url = |id: &str| pages.iter().find(|p| p.id == id).unwrap().url.as_str();
        assert_eq!(url("0551"), "https://wcxb-dev.invalid/0551");
        assert_eq!(
            url("4281"),
            "https://www.protiviti.com/us-en/cybersecurity-consulting"
        );
        assert_eq!(url("0001").split('/').nth(2), Some("scratchculinary.com"));
    }

    #[test]
    fn gold_text_encodings() {
        assert_eq!(decode_text(b"\xff\xfeA\0\r\0\n\0B\0"), "A\nB");
        assert_eq!(decode_text(b"\xef\xbb\xbfcaf\xc3\xa9"), "café");
        assert_eq!(decode_text(b"caf\xe9 \x93q\x94"), "café \u{201c}q\u{201d}");
    }
}
