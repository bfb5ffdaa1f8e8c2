//! What a page says about itself: its canonical URL, its own title, author, dates, site,
//! description, language and type, read from the page's `<head>` and markup.
//!
//! Sources, each field taking the first that gives a value in this order: JSON-LD
//! (`<script type="application/ld+json">`, with `@graph`, arrays and nested objects), OpenGraph
//! and other `<meta>` names (`og:*`, `article:*`, `twitter:*`, `citation_*`, Dublin Core,
//! `author`, `description`, the date names publishers use), microdata (`itemprop` within an
//! `itemtype`), `<link rel=canonical>`, `<html lang>`, and as fallbacks the first
//! `<time datetime>`, the first date written out in a short visible text (`March 3, 2024`: a
//! dateline), and a byline (`rel="author"`, or an element whose class names the author).
//!
//! The title is the page's own: `<title>` without the site's name that sites add before or
//! after it (" | Site", " - Site", " — Site"), recognised by the site name the page gives, by its
//! host name, or by a headline the page gives elsewhere (OpenGraph, JSON-LD, `<h1>`) that is one
//! part of the `<title>`.
//!
//! One forward pass over the arena collects the candidates; nothing recurses (JSON-LD is walked
//! with an explicit stack, and serde_json limits how deep it parses).

use std::collections::HashMap;

use serde_json::Value;

use super::Dom;

/// What a page says about itself. Every field is None when the page does not say it.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Metadata {
    /// `<link rel=canonical>`, else `og:url`, made absolute against the page's URL.
    pub canonical_url: Option<String>,
    /// The page's own title, without the site name (see the module comment).
    pub title: Option<String>,
    /// The author or authors (`"; "` between names), as the page names them.
    pub author: Option<String>,
    /// When the page was first published: ISO 8601, a date (`2024-03-01`) or a date-time with
    /// the offset the page gives (`2024-03-01T09:30:00+01:00`).
    pub published: Option<String>,
    /// When the page was last modified, as [`Metadata::published`].
    pub modified: Option<String>,
    /// The site's name (`og:site_name`, JSON-LD `publisher` / `WebSite` name).
    pub site_name: Option<String>,
    /// The page's summary (`<meta name=description>`, `og:description`).
    pub description: Option<String>,
    /// The language the page declares (`<html lang>`, `Content-Language`, `og:locale`), as a
    /// BCP 47 tag: lower-case language, upper-case region (`en-US`).
    pub lang: Option<String>,
    /// What the page is: `og:type` (`article`), else the JSON-LD or microdata type
    /// (`NewsArticle`, `Product`).
    pub page_type: Option<String>,
}

/// Longest text a field keeps; longer values are cut at a character boundary.
const MAX_FIELD_BYTES: usize = 2048;
/// JSON-LD scripts read per page, and the bytes of each: enough for any real page's, little
/// work on pages that embed a whole application's state.
const MAX_JSON_LD_SCRIPTS: usize = 16;
const MAX_JSON_LD_BYTES: usize = 1 << 20;
/// JSON-LD objects looked at per page.
const MAX_JSON_LD_OBJECTS: usize = 4096;
/// Text bytes read from one element (a headline, a microdata value, a byline).
const MAX_ELEMENT_TEXT: usize = 1024;
/// Longest visible text read for a written-out date: a byline or a dateline, not prose.
const MAX_DATE_TEXT: usize = 120;
/// What [`detected_language`] reads of the text.
const DETECTION_BYTES: usize = 1024;
/// Text shorter than this is not worth a guess.
const MIN_DETECTION_CHARS: usize = 40;

/// Reads what page `dom` says about itself; `url` is the page's URL ("" when unknown), which
/// makes the canonical URL absolute and names the host the title's site suffix may repeat.
pub fn of_page(dom: &Dom, url: &str) -> Metadata {
    let found = Found::collect(dom);
    let ld = JsonLd::read(&found.json_ld);
    let meta = |names: &[&str]| names.iter().find_map(|name| found.meta(name));

    let site_name = ld
        .site_name
        .clone()
        .or_else(|| meta(&["og:site_name", "application-name", "dc.publisher"]))
        .or_else(|| found.micro("publisher").map(str::to_string));
    let host = host_label(url);

    let canonical_url = found
        .canonical
        .clone()
        .or_else(|| meta(&["og:url"]))
        .map(|href| absolute(&href, url));

    let headlines: Vec<String> = [
        ld.headline.clone(),
        meta(&["og:title", "twitter:title", "dc.title", "citation_title"]),
        found.micro("headline").map(str::to_string),
        found.h1.clone(),
    ]
    .into_iter()
    .flatten()
    .collect();
    let raw_title = dom.title().map(clean).filter(|t| !t.is_empty());
    let title = own_title(
        raw_title.as_deref(),
        &headlines,
        site_name.as_deref(),
        &host,
    );

    let author = ld
        .author
        .clone()
        .or_else(|| found.all_meta("citation_author"))
        .or_else(|| {
            meta(&[
                "author",
                "article:author",
                "dc.creator",
                "dcterms.creator",
                "parsely-author",
                "sailthru.author",
                "byl",
            ])
        })
        .filter(|a| !looks_like_url(a))
        .map(|a| a.strip_prefix("By ").map_or(a.clone(), str::to_string))
        .or_else(|| found.micro("author").map(str::to_string))
        .or_else(|| found.byline.clone());

    let published = ld
        .published
        .as_deref()
        .and_then(iso_date)
        .or_else(|| {
            meta(&[
                "article:published_time",
                "og:published_time",
                "published_time",
                "citation_publication_date",
                "citation_date",
                "citation_online_date",
                "dc.date.issued",
                "dcterms.issued",
                "dc.date",
                "dcterms.date",
                "dcterms.created",
                "date",
                "pubdate",
                "publishdate",
                "publish_date",
                "publish-date",
                "article.published",
                "datepublished",
                "parsely-pub-date",
                "sailthru.date",
                "og:article:published_time",
            ])
            .as_deref()
            .and_then(iso_date)
        })
        .or_else(|| found.micro("datePublished").and_then(iso_date))
        .or_else(|| found.time.as_deref().and_then(iso_date))
        .or_else(|| found.text_date.clone());

    let modified = ld
        .modified
        .as_deref()
        .and_then(iso_date)
        .or_else(|| {
            meta(&[
                "article:modified_time",
                "og:updated_time",
                "og:modified_time",
                "modified_time",
                "dcterms.modified",
                "dc.date.modified",
                "last-modified",
                "lastmod",
                "datemodified",
            ])
            .as_deref()
            .and_then(iso_date)
        })
        .or_else(|| found.micro("dateModified").and_then(iso_date));

    let description = meta(&[
        "description",
        "og:description",
        "twitter:description",
        "dc.description",
    ])
    .or_else(|| ld.description.clone());

    let lang = found
        .lang
        .clone()
        .or_else(|| meta(&["content-language", "language", "dc.language", "og:locale"]))
        .or_else(|| ld.language.clone())
        .and_then(|l| language_tag(&l));

    let page_type = meta(&["og:type"])
        .or_else(|| ld.page_type.clone())
        .or_else(|| found.item_type.clone());

    let keep = |s: Option<String>| s.map(|s| cut(clean(&s))).filter(|s| !s.is_empty());
    Metadata {
        canonical_url: keep(canonical_url),
        title: keep(title),
        author: keep(author),
        published,
        modified,
        site_name: keep(site_name),
        description: keep(description),
        lang,
        page_type: keep(page_type),
    }
}

/// The language of `text` (a page's cleaned text), as an ISO 639-1 code where the language has
/// one and ISO 639-3 otherwise; None when the text is too short or the detector is unsure.
/// Reads at most the first 1 KB: on WCXB's dev pages it agrees with every declared language it
/// is given one for (docs/evaluation.md), and the detector's time grows with the text.
pub fn detected_language(text: &str) -> Option<String> {
    let mut end = text.len().min(DETECTION_BYTES);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let text = &text[..end];
    if text.chars().filter(|c| c.is_alphabetic()).count() < MIN_DETECTION_CHARS {
        return None;
    }
    let info = whatlang::detect(text)?;
    if !info.is_reliable() {
        return None;
    }
    let code = info.lang().code();
    Some(iso_639_1(code).unwrap_or(code).to_string())
}

/// The two-letter code of each language whatlang knows (all of them have one).
fn iso_639_1(code: &str) -> Option<&'static str> {
    const CODES: &[(&str, &str)] = &[
        ("afr", "af"),
        ("aka", "ak"),
        ("amh", "am"),
        ("ara", "ar"),
        ("aze", "az"),
        ("bel", "be"),
        ("ben", "bn"),
        ("bul", "bg"),
        ("cat", "ca"),
        ("ces", "cs"),
        ("cmn", "zh"),
        ("dan", "da"),
        ("deu", "de"),
        ("ell", "el"),
        ("eng", "en"),
        ("epo", "eo"),
        ("est", "et"),
        ("fin", "fi"),
        ("fra", "fr"),
        ("guj", "gu"),
        ("heb", "he"),
        ("hin", "hi"),
        ("hrv", "hr"),
        ("hun", "hu"),
        ("hye", "hy"),
        ("ind", "id"),
        ("ita", "it"),
        ("jav", "jv"),
        ("jpn", "ja"),
        ("kan", "kn"),
        ("kat", "ka"),
        ("khm", "km"),
        ("kor", "ko"),
        ("lat", "la"),
        ("lav", "lv"),
        ("lit", "lt"),
        ("mal", "ml"),
        ("mar", "mr"),
        ("mkd", "mk"),
        ("mya", "my"),
        ("nep", "ne"),
        ("nld", "nl"),
        ("nob", "nb"),
        ("ori", "or"),
        ("pan", "pa"),
        ("pes", "fa"),
        ("pol", "pl"),
        ("por", "pt"),
        ("ron", "ro"),
        ("rus", "ru"),
        ("sin", "si"),
        ("slk", "sk"),
        ("slv", "sl"),
        ("sna", "sn"),
        ("spa", "es"),
        ("srp", "sr"),
        ("swe", "sv"),
        ("tam", "ta"),
        ("tel", "te"),
        ("tgl", "tl"),
        ("tha", "th"),
        ("tuk", "tk"),
        ("tur", "tr"),
        ("ukr", "uk"),
        ("urd", "ur"),
        ("uzb", "uz"),
        ("vie", "vi"),
        ("yid", "yi"),
        ("zul", "zu"),
    ];
    CODES
        .binary_search_by(|(three, _)| three.cmp(&code))
        .ok()
        .map(|at| CODES[at].1)
}

/// What one pass over the arena finds.
#[derive(Default)]
struct Found {
    /// `<meta>` values by lower-case name (name, property, itemprop or http-equiv), in page
    /// order.
    meta: HashMap<String, Vec<String>>,
    canonical: Option<String>,
    lang: Option<String>,
    json_ld: Vec<String>,
    /// Microdata values by itemprop, the first of each; `name` is filed under what the
    /// enclosing item is (`author` in a Person, `publisher` in an Organization, `headline` in
    /// anything else).
    micro: HashMap<String, String>,
    /// The first microdata item's type (the last segment of its itemtype URL).
    item_type: Option<String>,
    h1: Option<String>,
    time: Option<String>,
    /// The first date written out in a short visible text (`March 3, 2024`, `3 Mar 2024`).
    text_date: Option<String>,
    byline: Option<String>,
}

impl Found {
    fn collect(dom: &Dom) -> Found {
        let mut found = Found::default();
        let mut i = 0;
        while i < dom.len() {
            let Some(tag) = dom.tag(i) else {
                if found.text_date.is_none() {
                    found.text_date = dom
                        .visible_text(i)
                        .filter(|t| t.len() <= MAX_DATE_TEXT)
                        .and_then(written_date);
                }
                i += 1;
                continue;
            };
            let attr = |name: &str| dom.kept_attribute(i, name);
            match &**tag {
                "meta" => {
                    if let Some(content) = attr("content") {
                        for key in ["name", "property", "itemprop", "http-equiv"] {
                            if let Some(name) = attr(key) {
                                found
                                    .meta
                                    .entry(name.trim().to_ascii_lowercase())
                                    .or_default()
                                    .push(content.to_string());
                            }
                        }
                    }
                }
                "link" => {
                    let canonical = attr("rel").is_some_and(|rel| {
                        rel.split_ascii_whitespace()
                            .any(|r| r.eq_ignore_ascii_case("canonical"))
                    });
                    if canonical && found.canonical.is_none() {
                        found.canonical = dom.href(i).filter(|h| !h.is_empty()).map(String::from);
                    }
                }
                "html" if found.lang.is_none() => {
                    found.lang = attr("lang")
                        .or_else(|| attr("xml:lang"))
                        .filter(|l| !l.is_empty())
                        .map(String::from);
                }
                "script" => {
                    let ld = attr("type")
                        .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/ld+json"));
                    if ld && found.json_ld.len() < MAX_JSON_LD_SCRIPTS {
                        found.json_ld.push(raw_text(dom, i, MAX_JSON_LD_BYTES));
                    }
                }
                "h1" if found.h1.is_none() => {
                    found.h1 = Some(visible_text(dom, i)).filter(|t| !t.is_empty());
                }
                "time" if found.time.is_none() => {
                    found.time = attr("datetime").map(String::from);
                }
                _ => {}
            }
            if let Some(prop) = attr("itemprop") {
                found.microdata(dom, i, prop);
            }
            if found.item_type.is_none() {
                found.item_type = attr("itemtype").and_then(type_name);
            }
            if found.byline.is_none() {
                found.byline = byline(dom, i);
            }
            i += 1;
        }
        found
    }

    fn microdata(&mut self, dom: &Dom, i: usize, props: &str) {
        for prop in props.split_ascii_whitespace() {
            let key = match prop {
                "name" => {
                    // The type of the item this property belongs to: the nearest ancestor's.
                    let owner = dom
                        .ancestors_or_self(i)
                        .skip(1)
                        .find_map(|a| dom.kept_attribute(a, "itemtype"))
                        .and_then(type_name)
                        .unwrap_or_default();
                    match owner.as_str() {
                        "Person" => "author",
                        "Organization" | "NewsMediaOrganization" | "Corporation" => "publisher",
                        _ => "headline",
                    }
                }
                // An author item names its author in its own `name`.
                "author" | "publisher" | "creator"
                    if dom.kept_attribute(i, "itemtype").is_some() =>
                {
                    continue
                }
                "creator" => "author",
                "headline" | "author" | "publisher" | "datePublished" | "dateModified"
                | "dateCreated" => prop,
                _ => continue,
            };
            if self.micro.contains_key(key) {
                continue;
            }
            let value = dom
                .kept_attribute(i, "content")
                .or_else(|| dom.kept_attribute(i, "datetime"))
                .map(clean)
                .unwrap_or_else(|| visible_text(dom, i));
            if !value.is_empty() {
                self.micro.insert(key.to_string(), value);
            }
        }
    }

    /// The first non-empty value of `<meta>` `name`.
    fn meta(&self, name: &str) -> Option<String> {
        self.meta
            .get(name)?
            .iter()
            .map(|v| clean(v))
            .find(|v| !v.is_empty())
    }

    /// Every value of `<meta>` `name`, `"; "` between them (for names given once per author).
    fn all_meta(&self, name: &str) -> Option<String> {
        let values: Vec<String> = self
            .meta
            .get(name)?
            .iter()
            .map(|v| clean(v))
            .filter(|v| !v.is_empty())
            .collect();
        (!values.is_empty()).then(|| values.join("; "))
    }

    fn micro(&self, key: &str) -> Option<&str> {
        self.micro.get(key).map(String::as_str)
    }
}

/// A byline element's text: a `rel="author"` link, or an element whose class or itemprop names
/// the author (`author`, `byline`, `author-name`), short enough to be a name.
fn byline(dom: &Dom, i: usize) -> Option<String> {
    let rel_author = dom
        .kept_attribute(i, "rel")
        .is_some_and(|rel| rel.split_ascii_whitespace().any(|r| r == "author"));
    let class_author = dom.classes(i).any(|c| {
        let c = c.to_ascii_lowercase();
        matches!(
            c.as_str(),
            "author" | "byline" | "author-name" | "byline-name" | "authorname" | "post-author"
        )
    });
    if !(rel_author || class_author) {
        return None;
    }
    let text = visible_text(dom, i);
    let text = text
        .strip_prefix("By ")
        .or_else(|| text.strip_prefix("by "))
        .unwrap_or(&text)
        .trim();
    let words = text.split_whitespace().count();
    (1..=6).contains(&words).then(|| text.to_string())
}

/// The visible text inside node `i`, whitespace collapsed, at most [`MAX_ELEMENT_TEXT`] bytes.
fn visible_text(dom: &Dom, i: usize) -> String {
    let mut text = String::new();
    for node in dom.subtree(i) {
        if let Some(t) = dom.visible_text(node) {
            text.push_str(t);
            text.push(' ');
            if text.len() > MAX_ELEMENT_TEXT {
                break;
            }
        }
    }
    cut_to(clean(&text), MAX_ELEMENT_TEXT)
}

/// The text inside node `i` whether visible or not (a script's), at most `max` bytes.
fn raw_text(dom: &Dom, i: usize, max: usize) -> String {
    let mut text = String::new();
    for node in dom.subtree(i) {
        if let Some(t) = dom.text(node) {
            if text.len() + t.len() > max {
                break;
            }
            text.push_str(t);
        }
    }
    text
}

/// What the page's JSON-LD says.
#[derive(Default)]
struct JsonLd {
    headline: Option<String>,
    author: Option<String>,
    published: Option<String>,
    modified: Option<String>,
    site_name: Option<String>,
    description: Option<String>,
    language: Option<String>,
    page_type: Option<String>,
}

impl JsonLd {
    fn read(scripts: &[String]) -> JsonLd {
        let mut items: Vec<&serde_json::Map<String, Value>> = Vec::new();
        let values: Vec<Value> = scripts.iter().filter_map(|s| parse_json(s)).collect();
        let mut stack: Vec<&Value> = values.iter().rev().collect();
        let mut seen = 0;
        while let Some(value) = stack.pop() {
            seen += 1;
            if seen > MAX_JSON_LD_OBJECTS {
                break;
            }
            match value {
                Value::Array(list) => stack.extend(list.iter().rev()),
                Value::Object(object) => {
                    if object.contains_key("@type") {
                        items.push(object);
                    }
                    // Items nest in @graph and mainEntity; authors and publishers are read
                    // from the item that holds them.
                    for key in ["mainEntity", "mainEntityOfPage", "@graph"].iter().rev() {
                        if let Some(inner) = object.get(*key) {
                            stack.push(inner);
                        }
                    }
                }
                _ => {}
            }
        }
        let types = |item: &serde_json::Map<String, Value>| -> Vec<String> {
            match item.get("@type") {
                Some(Value::String(t)) => vec![t.clone()],
                Some(Value::Array(list)) => list
                    .iter()
                    .filter_map(|t| t.as_str().map(String::from))
                    .collect(),
                _ => Vec::new(),
            }
        };
        let is = |item: &serde_json::Map<String, Value>, pred: fn(&str) -> bool| {
            types(item).iter().any(|t| pred(t))
        };
        // The page's main item: an article-like one, else one with a headline, else a web page.
        let main = items
            .iter()
            .find(|item| is(item, is_creative_work))
            .or_else(|| items.iter().find(|item| item.contains_key("headline")))
            .or_else(|| items.iter().find(|item| is(item, |t| t.ends_with("Page"))))
            .copied();
        let website = items.iter().find(|item| is(item, |t| t == "WebSite"));
        let mut ld = JsonLd::default();
        if let Some(main) = main {
            let text = |key: &str| main.get(key).and_then(first_text);
            ld.headline = text("headline")
                .or_else(|| is(main, is_creative_work).then(|| text("name")).flatten());
            ld.author = main
                .get("author")
                .or_else(|| main.get("creator"))
                .and_then(names);
            ld.published = text("datePublished").or_else(|| text("dateCreated"));
            ld.modified = text("dateModified");
            ld.description = text("description");
            ld.language = text("inLanguage");
            ld.page_type = types(main).into_iter().next();
            ld.site_name = main
                .get("publisher")
                .and_then(|p| p.get("name").or(Some(p)))
                .and_then(first_text);
        }
        if let Some(site) = website {
            let name = site.get("name").and_then(first_text);
            ld.site_name = ld.site_name.or(name);
            if ld.language.is_none() {
                ld.language = site.get("inLanguage").and_then(first_text);
            }
        }
        if ld.page_type.is_none() {
            ld.page_type = items
                .first()
                .and_then(|item| types(item).into_iter().next());
        }
        ld
    }
}

/// Parses a JSON-LD script, forgiving what pages commonly get wrong: an HTML comment or CDATA
/// wrapper, and raw line breaks and tabs inside strings.
fn parse_json(script: &str) -> Option<Value> {
    let text = script.trim();
    let text = text.strip_prefix("<!--").unwrap_or(text);
    let text = text.strip_suffix("-->").unwrap_or(text);
    let text = text
        .trim()
        .strip_prefix("//<![CDATA[")
        .unwrap_or(text.trim());
    let text = text.strip_suffix("//]]>").unwrap_or(text).trim();
    serde_json::from_str(text).ok().or_else(|| {
        let spaced: String = text
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        serde_json::from_str(&spaced).ok()
    })
}

/// schema.org types whose item is what the page is about.
fn is_creative_work(t: &str) -> bool {
    t.ends_with("Article")
        || t.ends_with("Posting")
        || matches!(
            t,
            "Report"
                | "Recipe"
                | "Product"
                | "Review"
                | "Event"
                | "VideoObject"
                | "Course"
                | "Book"
                | "Question"
                | "QAPage"
                | "HowTo"
                | "Thesis"
                | "CreativeWork"
                | "JobPosting"
                | "SoftwareApplication"
                | "Movie"
        )
}

/// A string, or the first string of a list, or an object's `name` / `@value`.
fn first_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(decode_entities(s)).filter(|s| !s.trim().is_empty()),
        Value::Array(list) => list.iter().find_map(first_text),
        Value::Object(o) => o
            .get("name")
            .or_else(|| o.get("@value"))
            .and_then(|v| v.as_str())
            .map(decode_entities)
            .filter(|s| !s.trim().is_empty()),
        _ => None,
    }
}

/// The names in an author value: a string, a Person or Organization object, or a list of them.
fn names(value: &Value) -> Option<String> {
    let list: Vec<&Value> = match value {
        Value::Array(list) => list.iter().collect(),
        other => vec![other],
    };
    let names: Vec<String> = list
        .into_iter()
        .filter_map(|v| match v {
            Value::String(s) => Some(decode_entities(s)),
            Value::Object(o) => o.get("name").and_then(first_text),
            _ => None,
        })
        .map(|s| clean(&s))
        .filter(|s| !s.is_empty() && !looks_like_url(s))
        .collect();
    (!names.is_empty()).then(|| names.join("; "))
}

/// The last segment of an itemtype URL (`https://schema.org/NewsArticle` → `NewsArticle`).
fn type_name(itemtype: &str) -> Option<String> {
    let first = itemtype.split_ascii_whitespace().next()?;
    let name = first.trim_end_matches('/').rsplit('/').next()?;
    (!name.is_empty()).then(|| name.to_string())
}

/// The page's own title: `raw` (the `<title>`) without the site name before or after it.
fn own_title(
    raw: Option<&str>,
    headlines: &[String],
    site: Option<&str>,
    host: &str,
) -> Option<String> {
    let Some(raw) = raw else {
        return headlines.first().map(|h| strip_site(h, site, host));
    };
    let stripped = strip_site(raw, site, host);
    let parts = segments(&stripped);
    // What is left after the parts naming the site may still carry a section's or a
    // second brand's name: a headline given elsewhere that is its leading (or trailing) parts
    // says where the title ends.
    let same = |a: &str, b: &str| compact(a) == compact(b);
    for headline in headlines {
        for k in 1..parts.len() {
            let head = join(&stripped, &parts[..k]);
            let tail = join(&stripped, &parts[k..]);
            if same(&head, headline) {
                return Some(head);
            }
            if same(&tail, headline) {
                return Some(tail);
            }
        }
    }
    Some(stripped)
}

/// `title` without leading or trailing parts that name the site (`site`, or the host's label).
fn strip_site(title: &str, site: Option<&str>, host: &str) -> String {
    let site_like = |part: &str| {
        let part = compact(part);
        if part.is_empty() {
            return false;
        }
        let site = site.map(compact).unwrap_or_default();
        (!site.is_empty() && (part == site || part.contains(&site) || site.contains(&part)))
            || (host.len() >= 3 && (part == host || part.contains(host)))
            || (part.len() >= 4 && host.contains(&part))
    };
    let mut parts = segments(title);
    while parts.len() > 1 {
        let (first, last) = (parts[0].clone(), parts[parts.len() - 1].clone());
        if site_like(&title[last.clone()]) {
            parts.pop();
        } else if site_like(&title[first]) {
            parts.remove(0);
        } else {
            break;
        }
    }
    join(title, &parts)
}

/// Separators sites put between a page's title and the site's name.
const SEPARATORS: &[&str] = &[
    " | ", " - ", " – ", " — ", " · ", " • ", " :: ", " : ", " » ", " « ", " ~ ", " / ", " || ",
];

/// The byte ranges of `title`'s parts between separators.
fn segments(title: &str) -> Vec<std::ops::Range<usize>> {
    let mut parts = Vec::new();
    let mut start = 0;
    let mut at = 0;
    while at < title.len() {
        let sep = SEPARATORS.iter().find(|sep| title[at..].starts_with(**sep));
        match sep {
            Some(sep) => {
                parts.push(start..at);
                at += sep.len();
                start = at;
            }
            None => {
                at += title[at..].chars().next().map_or(1, char::len_utf8);
            }
        }
    }
    parts.push(start..title.len());
    parts.retain(|p| !title[p.clone()].trim().is_empty());
    if parts.is_empty() {
        parts.push(0..title.len());
    }
    parts
}

/// The text of `title` from the first part's start to the last part's end.
fn join(title: &str, parts: &[std::ops::Range<usize>]) -> String {
    match (parts.first(), parts.last()) {
        (Some(first), Some(last)) => title[first.start..last.end].trim().to_string(),
        _ => String::new(),
    }
}

/// Lower-case letters and digits only: how a site's name is compared with a host name.
fn compact(text: &str) -> String {
    text.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// The host's registrable label: `www.theverge.com` → `theverge`, `news.bbc.co.uk` → `bbc`.
fn host_label(url: &str) -> String {
    let Ok(parsed) = url::Url::parse(url) else {
        return String::new();
    };
    let Some(host) = parsed.host_str() else {
        return String::new();
    };
    let labels: Vec<&str> = host.split('.').filter(|l| !l.is_empty()).collect();
    let mut at = labels.len().saturating_sub(2);
    // A second-level suffix such as co.uk or com.au.
    if labels.len() >= 3
        && matches!(
            labels[labels.len() - 2],
            "co" | "com" | "org" | "net" | "ac" | "gov" | "edu" | "or" | "ne"
        )
    {
        at = labels.len() - 3;
    }
    labels.get(at).map_or(String::new(), |l| compact(l))
}

/// `href` made absolute against `base`, or as it is when either is not a URL.
fn absolute(href: &str, base: &str) -> String {
    url::Url::parse(base)
        .and_then(|base| base.join(href))
        .or_else(|_| url::Url::parse(href))
        .map_or_else(|_| href.to_string(), String::from)
}

fn looks_like_url(text: &str) -> bool {
    let t = text.trim_start();
    t.starts_with("http://") || t.starts_with("https://") || t.starts_with("www.")
}

/// A language value as a BCP 47 tag (`en_us` → `en-US`); None when it is not one.
fn language_tag(value: &str) -> Option<String> {
    // Content-Language may list several: the first is the page's.
    let first = value.split([',', ';']).next()?.trim().replace('_', "-");
    let mut parts = first.split('-');
    let language = parts.next()?.to_ascii_lowercase();
    if !(2..=3).contains(&language.len()) || !language.chars().all(|c| c.is_ascii_alphabetic()) {
        return None;
    }
    let mut tag = language;
    for part in parts {
        if part.is_empty() || part.len() > 8 || !part.chars().all(|c| c.is_ascii_alphanumeric()) {
            break;
        }
        tag.push('-');
        if part.len() == 2 {
            tag.push_str(&part.to_ascii_uppercase());
        } else {
            tag.push_str(part);
        }
    }
    Some(tag)
}

/// A date as ISO 8601: `YYYY-MM-DD`, or with its time as given (`T09:30:00+01:00`, `Z`).
/// Reads ISO dates and date-times (a space for the `T` too), `YYYY/MM/DD`, `YYYY.MM.DD` and
/// `YYYYMMDD`; None for anything else or an impossible date. A small parser rather than a date
/// crate: these are the forms pages put in their metadata, and only a reading that keeps the
/// page's own offset (no conversion to UTC) is wanted.
fn iso_date(value: &str) -> Option<String> {
    let v = value.trim();
    let b = v.as_bytes();
    let digits = |range: std::ops::Range<usize>| -> Option<u32> {
        let s = v.get(range)?;
        (!s.is_empty() && s.bytes().all(|c| c.is_ascii_digit()))
            .then(|| s.parse().ok())
            .flatten()
    };
    let (year, month, day, rest) = if b.len() >= 10 && matches!(b[4], b'-' | b'/' | b'.') {
        if b[7] != b[4] {
            return None;
        }
        (digits(0..4)?, digits(5..7)?, digits(8..10)?, 10)
    } else if b.len() >= 8 && b[..8].iter().all(u8::is_ascii_digit) {
        (digits(0..4)?, digits(4..6)?, digits(6..8)?, 8)
    } else {
        return None;
    };
    if !(1900..=2100).contains(&year) || !(1..=12).contains(&month) || day == 0 {
        return None;
    }
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    if day > days[month as usize - 1] {
        return None;
    }
    let date = format!("{year:04}-{month:02}-{day:02}");
    Some(match iso_time(v.get(rest..).unwrap_or("")) {
        Some(time) => format!("{date}T{time}"),
        None => date,
    })
}

/// The time after a date: `Thh:mm[:ss[.fff]]` (or a space for the `T`) and its offset as given.
fn iso_time(rest: &str) -> Option<String> {
    let rest = rest.strip_prefix(['T', ' '])?;
    let b = rest.as_bytes();
    let two = |at: usize| -> Option<u32> {
        let s = rest.get(at..at + 2)?;
        s.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| s.parse().ok())
            .flatten()
    };
    let (hour, minute) = (two(0)?, two(3)?);
    if b.get(2) != Some(&b':') || hour > 23 || minute > 59 {
        return None;
    }
    let mut end = 5;
    let mut second = 0;
    if b.get(5) == Some(&b':') {
        second = two(6)?;
        end = 8;
        if b.get(8) == Some(&b'.') {
            end = 9 + rest[9..].bytes().take_while(u8::is_ascii_digit).count();
        }
    }
    if second > 60 {
        return None;
    }
    let time = format!("{hour:02}:{minute:02}:{second:02}");
    let offset = rest.get(end..).unwrap_or("").trim();
    let offset = match offset.as_bytes() {
        [] => String::new(),
        [b'Z' | b'z', ..] => "Z".to_string(),
        [sign @ (b'+' | b'-'), ..] => {
            let tail = &offset[1..];
            let compact: String = tail.chars().filter(char::is_ascii_digit).take(4).collect();
            if compact.len() != 4 {
                String::new()
            } else {
                format!("{}{}:{}", *sign as char, &compact[..2], &compact[2..])
            }
        }
        _ => String::new(),
    };
    Some(format!("{time}{offset}"))
}

/// The first date written out in English in `text`: a month's name (or its first three
/// letters) with the day before or after it and the year after (`March 3, 2024`, `3rd Mar
/// 2024`, `Mar. 3 2024`), as `YYYY-MM-DD`.
fn written_date(text: &str) -> Option<String> {
    const MONTHS: [&str; 12] = [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ];
    let tokens: Vec<String> = text
        .split(|c: char| c.is_whitespace() || matches!(c, ',' | '.' | '|' | '·' | '/' | '('))
        .filter(|t| !t.is_empty())
        .take(64)
        .map(|t| t.to_lowercase())
        .collect();
    let month_of = |t: &str| {
        MONTHS
            .iter()
            .position(|m| {
                t == *m || (t.len() == 3 && m.starts_with(t)) || (t == "sept" && *m == "september")
            })
            .map(|at| at as u32 + 1)
    };
    let day_of = |t: &str| -> Option<u32> {
        let digits = t.trim_end_matches(|c: char| c.is_ascii_alphabetic());
        let suffix = &t[digits.len()..];
        if !matches!(suffix, "" | "st" | "nd" | "rd" | "th")
            || digits.is_empty()
            || digits.len() > 2
        {
            return None;
        }
        digits.parse().ok().filter(|d| (1..=31).contains(d))
    };
    let year_of = |t: &str| -> Option<u32> {
        (t.len() == 4)
            .then(|| t.parse().ok())
            .flatten()
            .filter(|y| (1990..=2100).contains(y))
    };
    for (at, token) in tokens.iter().enumerate() {
        let Some(month) = month_of(token) else {
            continue;
        };
        let next = |k: usize| tokens.get(at + k).map(String::as_str).unwrap_or("");
        let found = match (day_of(next(1)), year_of(next(2))) {
            (Some(day), Some(year)) => Some((year, day)),
            _ => at
                .checked_sub(1)
                .and_then(|before| day_of(&tokens[before]))
                .zip(year_of(next(1)))
                .map(|(day, year)| (year, day)),
        };
        if let Some((year, day)) = found {
            if let Some(date) = iso_date(&format!("{year:04}-{month:02}-{day:02}")) {
                return Some(date);
            }
        }
    }
    None
}

/// Whitespace collapsed and trimmed.
fn clean(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn cut(text: String) -> String {
    cut_to(text, MAX_FIELD_BYTES)
}

fn cut_to(mut text: String, max: usize) -> String {
    if text.len() > max {
        let mut end = max;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    text
}

/// JSON-LD strings sometimes carry HTML character references (`&amp;`, `&#8217;`): decoded.
fn decode_entities(text: &str) -> String {
    if !text.contains('&') {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let end = rest.find(';').filter(|&e| e <= 10);
        let decoded = end.and_then(|e| {
            let name = &rest[1..e];
            let c = match name {
                "amp" => Some('&'),
                "lt" => Some('<'),
                "gt" => Some('>'),
                "quot" => Some('"'),
                "apos" => Some('\''),
                "nbsp" => Some(' '),
                _ => {
                    let number = name.strip_prefix('#')?;
                    let code = match number.strip_prefix(['x', 'X']) {
                        Some(hex) => u32::from_str_radix(hex, 16).ok(),
                        None => number.parse().ok(),
                    };
                    code.and_then(char::from_u32)
                }
            };
            c.map(|c| (c, e))
        });
        match decoded {
            Some((c, e)) => {
                out.push(c);
                rest = &rest[e + 1..];
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

#[cfg(test)]
mod tests {
    use super::*;

    fn of(html: &str, url: &str) -> Metadata {
        of_page(&super::super::parse(html, 512), url)
    }

    #[test]
    fn reads_meta_and_opengraph() {
        let m = of(
            r#"<html lang="en_us"><head><title>Big News | The Daily</title>
            <link rel="canonical" href="/story/1">
            <meta name="author" content="Ann Lee">
            <meta name="description" content=" A  story. ">
            <meta property="og:site_name" content="The Daily">
            <meta property="og:type" content="article">
            <meta property="article:published_time" content="2024-03-01T09:30:00+0100">
            <meta property="article:modified_time" content="2024-03-02">
            </head><body><h1>Big News</h1></body></html>"#,
            "https://daily.example/a/b?x=1",
        );
        assert_eq!(
            m.canonical_url.as_deref(),
            Some("https://daily.example/story/1")
        );
        assert_eq!(m.title.as_deref(), Some("Big News"));
        assert_eq!(m.author.as_deref(), Some("Ann Lee"));
        assert_eq!(m.description.as_deref(), Some("A story."));
        assert_eq!(m.site_name.as_deref(), Some("The Daily"));
        assert_eq!(m.page_type.as_deref(), Some("article"));
        assert_eq!(m.published.as_deref(), Some("2024-03-01T09:30:00+01:00"));
        assert_eq!(m.modified.as_deref(), Some("2024-03-02"));
        assert_eq!(m.lang.as_deref(), Some("en-US"));
    }

    #[test]
    fn reads_json_ld_graph_and_nested_authors() {
        let m = of(
            r#"<head><title>Ignored</title><script type="application/ld+json">
            {"@context":"https://schema.org","@graph":[
              {"@type":"WebSite","name":"Example Site","inLanguage":"de-DE"},
              {"@type":["NewsArticle"],"headline":"Tom &amp; Jerry",
               "author":[{"@type":"Person","name":"A. One"},{"@type":"Person","name":"B. Two"}],
               "datePublished":"2023-12-31T23:59:59Z","dateModified":"2024-01-01",
               "publisher":{"@type":"Organization","name":"Example Press"}}]}
            </script></head><body></body>"#,
            "",
        );
        assert_eq!(m.author.as_deref(), Some("A. One; B. Two"));
        assert_eq!(m.published.as_deref(), Some("2023-12-31T23:59:59Z"));
        assert_eq!(m.modified.as_deref(), Some("2024-01-01"));
        assert_eq!(m.site_name.as_deref(), Some("Example Press"));
        assert_eq!(m.page_type.as_deref(), Some("NewsArticle"));
        assert_eq!(m.lang.as_deref(), Some("de-DE"));
        // The <title> has no separator: it is the page's title as it is.
        assert_eq!(m.title.as_deref(), Some("Ignored"));
    }

    #[test]
    fn forgives_broken_json_ld_and_survives_garbage() {
        let m = of(
            "<script type=application/ld+json>{\"@type\":\"BlogPosting\",\"headline\":\"a\nb\",\
             \"author\":\"Zed\"}</script><script type=application/ld+json>{not json</script>",
            "",
        );
        assert_eq!(m.author.as_deref(), Some("Zed"));
        assert_eq!(m.title.as_deref(), Some("a b"));
        let deep = format!(
            "<script type=application/ld+json>{}{}</script>",
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        assert_eq!(of(&deep, "").author, None);
        assert_eq!(of("", "not a url"), Metadata::default());
    }

    #[test]
    fn reads_microdata_and_time() {
        let m = of(
            r#"<title>X</title><body><article itemscope itemtype="https://schema.org/BlogPosting">
            <h2 itemprop="headline">Post</h2>
            <span itemprop="author" itemscope itemtype="http://schema.org/Person">
              <span itemprop="name">Jo Doe</span></span>
            <meta itemprop="datePublished" content="2020/05/06">
            </article><time datetime="2019-01-01">old</time>"#,
            "",
        );
        assert_eq!(m.author.as_deref(), Some("Jo Doe"));
        assert_eq!(m.published.as_deref(), Some("2020-05-06"));
        assert_eq!(m.page_type.as_deref(), Some("BlogPosting"));
        let t = of("<p><time datetime='2019-01-01T10:00'>x</time>", "");
        assert_eq!(t.published.as_deref(), Some("2019-01-01T10:00:00"));
    }

    #[test]
    fn strips_the_site_from_the_title() {
        let title = |html: &str, url: &str| of(html, url).title;
        // By the host name.
        assert_eq!(
            title(
                "<title>How to cook - Tasty Recipes</title>",
                "https://tastyrecipes.com/x"
            )
            .as_deref(),
            Some("How to cook")
        );
        // Before the title.
        assert_eq!(
            title(
                "<title>BBC News | Storm hits coast</title>",
                "https://www.bbc.co.uk/n"
            )
            .as_deref(),
            Some("Storm hits coast")
        );
        // By a headline that is one part of it.
        assert_eq!(
            title(
                "<title>Storm hits coast — Acme</title><h1>Storm hits coast</h1>",
                "https://example.org/"
            )
            .as_deref(),
            Some("Storm hits coast")
        );
        // Nothing says which part is the site: the whole title.
        assert_eq!(
            title("<title>Cats - Dogs</title>", "").as_deref(),
            Some("Cats - Dogs")
        );
        // No <title>: the headline.
        assert_eq!(
            title("<meta property=og:title content='Only OG'>", "").as_deref(),
            Some("Only OG")
        );
    }

    #[test]
    fn reads_authors_and_bylines() {
        let m = of(
            "<meta name=citation_author content='Smith, J.'><meta name=citation_author content='Roe, K.'>",
            "",
        );
        assert_eq!(m.author.as_deref(), Some("Smith, J.; Roe, K."));
        let url_author = of(
            "<meta property=article:author content='https://facebook.com/x'><a rel=author href=/a>Kim Park</a>",
            "",
        );
        assert_eq!(url_author.author.as_deref(), Some("Kim Park"));
        let by = of("<div class=byline>By Sam Ray</div>", "");
        assert_eq!(by.author.as_deref(), Some("Sam Ray"));
    }

    #[test]
    fn normalizes_dates() {
        let cases: &[(&str, Option<&str>)] = &[
            ("2024-02-29", Some("2024-02-29")),
            ("2023-02-29", None),
            ("20240102", Some("2024-01-02")),
            ("2024.01.02 08:05", Some("2024-01-02T08:05:00")),
            (
                "2024-01-02T08:05:06.123-05:00",
                Some("2024-01-02T08:05:06-05:00"),
            ),
            ("March 3, 2024", None),
            ("2024-13-01", None),
            ("2024-1-01", None),
            ("२०२४-०१-०२", None),
        ];
        for (given, want) in cases {
            assert_eq!(iso_date(given).as_deref(), *want, "{given}");
        }
    }

    #[test]
    fn reads_dates_written_out() {
        let cases: &[(&str, Option<&str>)] = &[
            ("Posted on March 3, 2024 by Ann", Some("2024-03-03")),
            ("3rd Sept. 2019", Some("2019-09-03")),
            ("Updated: Dec 19 2025", Some("2025-12-19")),
            ("February 30, 2024", None),
            ("May I help you in 2024", None),
        ];
        for (given, want) in cases {
            assert_eq!(written_date(given).as_deref(), *want, "{given}");
        }
        let m = of(
            "<body><p>Ann Lee</p><p>Jan 5, 2021</p><p>More text here.</p>",
            "",
        );
        assert_eq!(m.published.as_deref(), Some("2021-01-05"));
    }

    #[test]
    fn normalizes_language_tags() {
        assert_eq!(language_tag("EN").as_deref(), Some("en"));
        assert_eq!(language_tag("pt_br").as_deref(), Some("pt-BR"));
        assert_eq!(language_tag("zh-Hant-TW").as_deref(), Some("zh-Hant-TW"));
        assert_eq!(language_tag("de, en").as_deref(), Some("de"));
        assert_eq!(language_tag("english"), None);
        assert_eq!(language_tag(""), None);
    }

    #[test]
    fn detects_languages_from_text() {
        assert_eq!(
            detected_language(
                "The quick brown fox jumps over the lazy dog while the children watch from \
                 the window and laugh at the sight of it."
            )
            .as_deref(),
            Some("en")
        );
        assert_eq!(
            detected_language(
                "Der schnelle braune Fuchs springt über den faulen Hund, während die Kinder \
                 vom Fenster aus zusehen und darüber lachen."
            )
            .as_deref(),
            Some("de")
        );
        assert_eq!(detected_language("ok"), None);
        let long = "é".repeat(10_000);
        let _ = detected_language(&long);
    }

    #[test]
    fn two_letter_codes_are_sorted_for_lookup() {
        let mut sorted = true;
        for lang in whatlang::Lang::all() {
            sorted &= iso_639_1(lang.code()).is_some();
        }
        assert!(sorted, "every whatlang language has a two-letter code here");
    }
}
