//! Helpers shared by the workspace integration tests.

pub mod clustering;
pub mod end_to_end;
pub mod gold;
pub mod l3s;
pub mod mutate;
pub mod warc_samples;

use std::io::{BufReader, Cursor, Write};
use std::path::PathBuf;

use stencil_operators::reading::page::{to_page, Outcome};
use stencil_operators::reading::warc::write::{http_response, NewRecord, WarcWriter};
use stencil_operators::reading::warc::{self, FileSummary, Limits, ReadItem};

/// `../shared` beside the repository (or `$STENCIL_SHARED`). When it is missing, tests that
/// need it print a notice and skip — unless `STENCIL_REQUIRE_SHARED=1` (CI), where a missing
/// folder is a failure.
pub fn shared_dir(what: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("STENCIL_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared"));
    let wanted = dir.join(what);
    if wanted.exists() {
        return Some(wanted);
    }
    if std::env::var("STENCIL_REQUIRE_SHARED").as_deref() == Ok("1") {
        panic!(
            "STENCIL_REQUIRE_SHARED=1 but {} is missing",
            wanted.display()
        );
    }
    eprintln!(
        "NOTICE: skipping, {} is not there (fresh clone without ../shared)",
        wanted.display()
    );
    None
}

/// Everything read from a WARC held in memory, in order.
pub struct ReadBack {
    pub items: Vec<ReadItem>,
    pub summary: FileSummary,
}

impl ReadBack {
    pub fn records(&self) -> impl Iterator<Item = &warc::Record> {
        self.items.iter().filter_map(|i| match i {
            ReadItem::Record(r) => Some(r),
            ReadItem::Error(_) => None,
        })
    }
    pub fn errors(&self) -> impl Iterator<Item = &warc::ReadError> {
        self.items.iter().filter_map(|i| match i {
            ReadItem::Error(e) => Some(e),
            ReadItem::Record(_) => None,
        })
    }
    pub fn target_uris(&self) -> Vec<String> {
        self.records()
            .filter_map(|r| r.head.target_uri.clone())
            .collect()
    }
}

pub fn read_bytes(bytes: &[u8], limits: &Limits) -> ReadBack {
    let mut items = Vec::new();
    let summary = warc::read(
        BufReader::new(Cursor::new(bytes.to_vec())),
        limits,
        |item| items.push(item),
    )
    .expect("reading from memory cannot fail to start");
    ReadBack { items, summary }
}

/// One response record: URL, extra HTTP headers, body.
pub struct TestPage<'a> {
    pub url: &'a str,
    pub headers: Vec<(&'a str, &'a str)>,
    pub body: Vec<u8>,
}

impl<'a> TestPage<'a> {
    pub fn html(url: &'a str, body: &str) -> Self {
        TestPage {
            url,
            headers: vec![("Content-Type", "text/html")],
            body: body.as_bytes().to_vec(),
        }
    }
}

/// A warcinfo record followed by one response per page, each record its own gzip member
/// (Common Crawl style) or all plain.
pub fn build_warc(pages: &[TestPage<'_>], gzip: bool) -> Vec<u8> {
    let mut writer = WarcWriter::new(Vec::new(), gzip);
    writer
        .write(&NewRecord {
            record_type: "warcinfo",
            target_uri: None,
            date: "2026-11-21T00:00:00Z",
            content_type: "application/warc-fields",
            block: b"software: stencil-tests\r\n",
        })
        .expect("writing to memory");
    for page in pages {
        let block = http_response(200, &page.headers, &page.body);
        writer
            .write(&NewRecord {
                record_type: "response",
                target_uri: Some(page.url),
                date: "2026-11-21T00:00:00Z",
                content_type: "application/http; msgtype=response",
                block: &block,
            })
            .expect("writing to memory");
    }
    writer.into_inner()
}

/// Gzips a whole file as one stream (how many tools other than Common Crawl compress WARCs).
pub fn gzip_whole(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(bytes).expect("writing to memory");
    encoder.finish().expect("writing to memory")
}

/// The outcome of every record, in order.
pub fn outcomes(read: ReadBack, limits: &Limits) -> Vec<Outcome> {
    read.items
        .into_iter()
        .filter_map(|item| match item {
            ReadItem::Record(record) => Some(to_page(record, limits).1),
            ReadItem::Error(_) => None,
        })
        .collect()
}

/// The decoded HTML of every page, in order.
pub fn page_html(read: ReadBack, limits: &Limits) -> Vec<String> {
    outcomes(read, limits)
        .into_iter()
        .filter_map(|o| match o {
            Outcome::Page(p) => Some(p.html),
            _ => None,
        })
        .collect()
}

/// SiteLevel(θ) over WARC files as `stencil site` computes it — a first pass that learns each
/// host's model, a second that looks at every page against it — without the dataflow. `visit`
/// gets each page of the second pass with its DOM, subtree sums, inside-template mask and
/// host model.
pub fn site_level_over(
    files: &[PathBuf],
    params: &stencil_operators::site::site_level::Params,
    kind: stencil_operators::site::site_level::Fingerprints,
    mut visit: impl FnMut(
        &stencil_operators::reading::page::Page,
        &stencil_operators::dom::Dom,
        &[stencil_operators::dom::subtree::Subtree],
        &[bool],
        &stencil_operators::site::site_level::HostModel,
    ),
) {
    use stencil_operators::dom::subtree::summarize;
    use stencil_operators::site::site_level::{self as sl, PageFingerprints};
    let mut pages = Vec::new();
    for_each_page_of(files, |page, dom| {
        let sums = summarize(dom, &page.host);
        pages.push(PageFingerprints {
            host: sl::site_of(&page.host).to_string(),
            url_key: sl::url_key(&page.url),
            fingerprints: sl::fingerprints(dom, &sums, kind),
        });
    });
    let models = sl::learn(pages, params, kind);
    for_each_page_of(files, |page, dom| {
        let model = &models[sl::site_of(&page.host)];
        let sums = summarize(dom, &page.host);
        let roots = sl::template_roots(dom, &sums, model, kind);
        let inside = sl::inside_templates(dom, &roots);
        visit(page, dom, &sums, &inside, model);
    });
}

/// RTDM-TD (seed 002) over WARC files as the library computes it: a first pass keeps, per host,
/// the label trees of its `max_pages` pages with the smallest URL keys (SiteLevel's sample
/// order) and finds the host's template from them; a second maps every page against its
/// host's template. `visit` gets each page with its DOM, its inside-template mask (below a
/// wholly covered node, as SiteLevel marks templates) and its host's template, if any.
pub fn rtdm_over(
    files: &[PathBuf],
    max_pages: u32,
    mut visit: impl FnMut(
        &stencil_operators::reading::page::Page,
        &stencil_operators::dom::Dom,
        &[bool],
        Option<&stencil_operators::site::rtdm_template::Template>,
    ),
) {
    use std::collections::BTreeMap;
    use stencil_operators::site::rtdm::Limits as MapLimits;
    use stencil_operators::site::rtdm_template::{
        covered_roots, find_template, label_tree, template_nodes,
    };
    use stencil_operators::site::site_level::{site_of, url_key};
    let mut samples: BTreeMap<String, BTreeMap<(u64, String), _>> = BTreeMap::new();
    for_each_page_of(files, |page, dom| {
        let host = samples.entry(site_of(&page.host).to_string()).or_default();
        host.insert((url_key(&page.url), page.url.clone()), label_tree(dom));
        while host.len() > max_pages as usize {
            host.pop_last();
        }
    });
    let templates: BTreeMap<String, _> = samples
        .into_iter()
        .filter_map(|(host, pages)| {
            let template = find_template(pages.into_values(), max_pages, MapLimits::default())?;
            Some((host, template))
        })
        .collect();
    for_each_page_of(files, |page, dom| {
        let template = templates.get(site_of(&page.host));
        let tree = label_tree(dom);
        let covered = template
            .and_then(|t| template_nodes(&t.tree, &tree, MapLimits::default()).ok())
            .unwrap_or_else(|| vec![false; dom.len()]);
        let roots = covered_roots(&tree, &covered);
        let mut inside = roots;
        for i in 0..dom.len() {
            if let Some(parent) = dom.parent(i) {
                inside[i] |= inside[parent];
            }
        }
        visit(page, dom, &inside, template);
    });
}

/// Every page of test WARC `files`, parsed with the default limits.
fn for_each_page_of(
    files: &[PathBuf],
    mut visit: impl FnMut(&stencil_operators::reading::page::Page, &stencil_operators::dom::Dom),
) {
    let mut inventory = stencil_operators::inventory::Inventory::default();
    for file in files {
        stencil_operators::inventory::for_each_page(
            file,
            &Limits::default(),
            stencil_operators::inventory::Share::WHOLE,
            &mut inventory,
            &mut visit,
            |_| {},
        )
        .expect("readable test WARC");
    }
}

/// Writes `pages` (URL, raw bytes) as a Common-Crawl-style WARC in a temporary folder.
pub fn warc_file(name: &str, pages: &[(&str, &[u8])]) -> PathBuf {
    let test_pages: Vec<TestPage<'_>> = pages
        .iter()
        .map(|(url, body)| TestPage {
            url,
            headers: vec![("Content-Type", "text/html")],
            body: body.to_vec(),
        })
        .collect();
    let dir = std::env::temp_dir().join(format!("stencil-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, build_warc(&test_pages, true)).expect("write test WARC");
    path
}
