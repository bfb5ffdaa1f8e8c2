//! The evaluation crawl: every page of dragnet, cleanportaleval, swde-books, L3S-GN1 and the
//! WCXB dev split in one Common-Crawl-style WARC, hosts interleaved as a crawl would have them,
//! with each page's gold (main text, or SWDE's attribute values) and, for WCXB, its page type.
//! `jobs/tests/end_to_end.rs` runs `stencil run` on it and scores `cleaned_text`;
//! `docs/evaluation.md` compares the same pages through other extractors (`manifest.tsv` is
//! what `../shared/tools/textf1.py --manifest` and `docs/bench/side_by_side.py` read).
//!
//! Nothing is copied into the repository: the crawl is built under a temporary folder from
//! `../shared/data` each time.

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use stencil_operators::site::site_level::url_key;

use crate::gold;
use crate::TestPage;

/// Where a page comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Source {
    Dragnet,
    CleanPortalEval,
    Swde,
    L3s,
    Wcxb,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Dragnet => "dragnet",
            Source::CleanPortalEval => "cleanportaleval",
            Source::Swde => "swde-books",
            Source::L3s => "l3s-gn1",
            Source::Wcxb => "wcxb-dev",
        }
    }
}

/// One page of the crawl and what it should come out as.
#[derive(Clone, Debug)]
pub struct EvalPage {
    /// The page's URL in the WARC (distinct across the crawl).
    pub url: String,
    pub source: Source,
    /// Human gold main text (none for SWDE).
    pub gold_text: Option<String>,
    /// SWDE's `(attribute, value)` pairs (empty elsewhere).
    pub values: Vec<(String, String)>,
    /// WCXB's page type (article, forum, product, collection, listing, documentation,
    /// service); `None` for the other sources.
    pub page_type: Option<String>,
}

/// The crawl on disk and its pages, in WARC order.
pub struct EvalCrawl {
    pub warc: PathBuf,
    pub manifest: PathBuf,
    pub pages: Vec<EvalPage>,
}

/// Builds the crawl under `out_dir` (`eval.warc.gz`, `manifest.tsv`, `gold/NNNNNN.txt`), or
/// returns `None` (after the notice of [`crate::shared_dir`]) when the data is absent.
///
/// `manifest.tsv` has a header and one row per page with gold text, in WARC order: `url`,
/// `gold_path` (absolute), `source` ([`Source::as_str`]) and `page_type` (WCXB's, `-` for the
/// other sources). The two WCXB pages without gold are in the WARC but not in the manifest.
pub fn build(out_dir: &Path) -> Option<EvalCrawl> {
    let dragnet = crate::shared_dir("data/dragnet")?;
    let cpe = crate::shared_dir("data/cleanportaleval")?;
    let swde = crate::shared_dir("data/swde-books")?;
    let l3s = crate::shared_dir("data/l3s-gn1")?;
    let wcxb = crate::shared_dir("data/wcxb-dev")?;

    // (page, body, content type)
    let mut pages: Vec<(EvalPage, Vec<u8>, &'static str)> = Vec::new();
    for page in gold::dragnet(&dragnet, 1) {
        pages.push((
            eval_page(page.url, Source::Dragnet, Some(page.gold_text)),
            page.html,
            "text/html",
        ));
    }
    for page in gold::cleanportaleval(&cpe) {
        let gold = Some(page.gold_text);
        pages.push((
            eval_page(page.url, Source::CleanPortalEval, gold),
            page.html,
            "text/html",
        ));
    }
    for page in gold::swde_books(&swde) {
        let mut eval = eval_page(page.url, Source::Swde, None);
        eval.values = page.values;
        pages.push((eval, page.html, "text/html"));
    }
    for page in gold::l3s_gn1(&l3s) {
        let Some(gold) = l3s_gold_text(&page) else {
            continue;
        };
        // The originals are UTF-8 whatever their <meta> says (see `l3s::parse_page`).
        let eval = eval_page(page.url, Source::L3s, Some(gold));
        pages.push((eval, page.original, "text/html; charset=utf-8"));
    }
    for page in gold::wcxb_dev(&wcxb) {
        // Every page is UTF-8, but five <meta>s say iso-8859-1 and 103 pages say nothing: the
        // header says what the bytes are, as a server would.
        let mut eval = eval_page(page.url, Source::Wcxb, page.gold_text);
        eval.page_type = Some(page.page_type);
        pages.push((eval, page.html, "text/html; charset=utf-8"));
    }

    // Distinct URLs, then hosts interleaved by URL hash, as a crawl's shards mix them.
    let mut seen = HashSet::new();
    for (page, _, _) in &mut pages {
        let mut n = 1;
        let base = page.url.clone();
        while !seen.insert(page.url.clone()) {
            n += 1;
            let joiner = if base.contains('?') { '&' } else { '?' };
            page.url = format!("{base}{joiner}dup={n}");
        }
    }
    pages.sort_by_key(|(page, _, _)| (url_key(&page.url), page.url.clone()));

    std::fs::create_dir_all(out_dir.join("gold")).ok()?;
    let test_pages: Vec<TestPage<'_>> = pages
        .iter()
        .map(|(page, body, content_type)| TestPage {
            url: &page.url,
            headers: vec![("Content-Type", *content_type)],
            body: body.clone(),
        })
        .collect();
    let warc = out_dir.join("eval.warc.gz");
    std::fs::write(&warc, crate::build_warc(&test_pages, true)).ok()?;
    drop(test_pages);

    let manifest = out_dir.join("manifest.tsv");
    let mut tsv = String::from("url\tgold_path\tsource\tpage_type\n");
    for (i, (page, _, _)) in pages.iter().enumerate() {
        if let Some(gold) = &page.gold_text {
            let path = out_dir.join("gold").join(format!("{i:06}.txt"));
            std::fs::File::create(&path)
                .and_then(|mut f| f.write_all(gold.as_bytes()))
                .ok()?;
            tsv.push_str(&format!(
                "{}\t{}\t{}\t{}\n",
                page.url,
                path.display(),
                page.source.as_str(),
                page.page_type.as_deref().unwrap_or("-")
            ));
        }
    }
    std::fs::write(&manifest, tsv).ok()?;
    Some(EvalCrawl {
        warc,
        manifest,
        pages: pages.into_iter().map(|(page, _, _)| page).collect(),
    })
}

fn eval_page(url: String, source: Source, gold_text: Option<String>) -> EvalPage {
    EvalPage {
        url,
        source,
        gold_text,
        values: Vec::new(),
        page_type: None,
    }
}

/// L3S-GN1's main content as `tests/tests/smoothing.rs` scores it: the visible text nodes the
/// assessors labelled headline, full text or supplemental, joined by spaces. `None` when the
/// annotated page does not map onto the original.
fn l3s_gold_text(page: &gold::L3sPage) -> Option<String> {
    let (dom, sums) = crate::l3s::parse_page(&page.original, &page.host);
    let (annotated, annotated_sums) = crate::l3s::parse_page(&page.annotated, &page.host);
    let classes = crate::l3s::text_node_classes(&dom, &sums, &annotated, &annotated_sums)?;
    let text: Vec<&str> = (0..dom.len())
        .filter(|&i| matches!(classes[i], Some(1..=3)) && sums[i].text_chars > 0)
        .filter_map(|i| dom.visible_text(i))
        .collect();
    Some(text.join(" "))
}
