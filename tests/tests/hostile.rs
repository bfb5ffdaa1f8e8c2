//! Input a crawl really contains: every compression layout, chunked and encoded bodies,
//! legacy charsets, and files that are cut, corrupt or padded with garbage. Nothing may panic,
//! and every record must be read or reported.

use encoding_rs::{SHIFT_JIS, WINDOWS_1251, WINDOWS_1252};
use stencil_operators::dom::{self, markdown, subtree};
use stencil_operators::reading::charset::CharsetSource;
use stencil_operators::reading::page::{to_page, Outcome, SkipReason, Truncation};
use stencil_operators::reading::warc::write::serialize;
use stencil_operators::reading::warc::{Limits, ReadErrorKind, ReadItem};
use stencil_tests::{build_warc, gzip_whole, outcomes, page_html, read_bytes, TestPage};

fn three_pages() -> Vec<TestPage<'static>> {
    vec![
        TestPage::html(
            "http://a.example/1",
            "<html><body><p>first page</p></body></html>",
        ),
        TestPage::html(
            "http://a.example/2",
            "<html><body><p>second page</p></body></html>",
        ),
        TestPage::html(
            "http://b.example/3",
            "<html><body><p>third page</p></body></html>",
        ),
    ]
}

const URIS: [&str; 3] = [
    "http://a.example/1",
    "http://a.example/2",
    "http://b.example/3",
];

#[test]
fn plain_warc_reports_byte_offsets() {
    let bytes = build_warc(&three_pages(), false);
    let read = read_bytes(&bytes, &Limits::default());
    assert_eq!(read.errors().count(), 0);
    assert_eq!(read.target_uris(), URIS);
    let offsets: Vec<u64> = read.records().map(|r| r.head.position.offset).collect();
    assert_eq!(offsets[0], 0);
    for (record, offset) in read.records().zip(&offsets) {
        assert!(bytes[*offset as usize..].starts_with(b"WARC/1.1\r\n"));
        assert_eq!(record.head.position.offset_in_member, 0);
    }
    assert_eq!(read.summary.compressed_bytes, bytes.len() as u64);
    assert_eq!(page_html(read, &Limits::default()).len(), 3);
}

#[test]
fn whole_file_gzip_reports_offsets_inside_the_member() {
    let plain = build_warc(&three_pages(), false);
    let plain_offsets: Vec<u64> = read_bytes(&plain, &Limits::default())
        .records()
        .map(|r| r.head.position.offset)
        .collect();
    let read = read_bytes(&gzip_whole(&plain), &Limits::default());
    assert_eq!(read.errors().count(), 0);
    assert_eq!(read.target_uris(), URIS);
    let inner: Vec<u64> = read
        .records()
        .map(|r| r.head.position.offset_in_member)
        .collect();
    assert_eq!(inner, plain_offsets);
    assert!(read.records().all(|r| r.head.position.offset == 0));
    assert_eq!(read.summary.uncompressed_bytes, plain.len() as u64);
}

#[test]
fn chunked_and_encoded_bodies_are_undone() {
    let html = "<html><body><p>Chunks and gzip, together or alone.</p></body></html>";
    let gz = gzip_whole(html.as_bytes());
    let chunk = |data: &[u8]| {
        let mut out = Vec::new();
        for piece in data.chunks(7) {
            out.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
            out.extend_from_slice(piece);
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(b"0\r\n\r\n");
        out
    };
    let pages = vec![
        TestPage {
            url: "http://x.example/chunked",
            headers: vec![
                ("Content-Type", "text/html"),
                ("Transfer-Encoding", "chunked"),
            ],
            body: chunk(html.as_bytes()),
        },
        TestPage {
            url: "http://x.example/gzip",
            headers: vec![("Content-Type", "text/html"), ("Content-Encoding", "gzip")],
            body: gz.clone(),
        },
        TestPage {
            url: "http://x.example/both",
            headers: vec![
                ("Content-Type", "text/html"),
                ("Transfer-Encoding", "chunked"),
                ("Content-Encoding", "gzip"),
            ],
            body: chunk(&gz),
        },
        // Common Crawl stores decoded bodies and renames the headers.
        TestPage {
            url: "http://x.example/cc",
            headers: vec![
                ("Content-Type", "text/html"),
                ("X-Crawler-Transfer-Encoding", "chunked"),
                ("X-Crawler-Content-Encoding", "gzip"),
            ],
            body: html.as_bytes().to_vec(),
        },
    ];
    let read = read_bytes(&build_warc(&pages, true), &Limits::default());
    let htmls = page_html(read, &Limits::default());
    assert_eq!(htmls, vec![html.to_string(); 4]);
}

/// Text long enough for statistical detection, in each language.
const RUSSIAN: &str = "Москва — столица России, крупнейший по численности населения город страны. \
    Здесь находятся органы государственной власти, многие музеи, театры и университеты. \
    Город расположен на реке Москве в центре Восточно-Европейской равнины.";
const JAPANESE: &str = "東京は日本の首都であり、世界有数の大都市です。多くの企業の本社や大学、\
    美術館、劇場が集まっています。江戸時代には江戸と呼ばれ、明治時代に東京と改称されました。";
const GERMAN: &str = "Über die Größe des Gebäudes wurde lange gestritten. Die Bürger wünschten \
    sich einen größeren Saal für Konzerte, während der Stadtrat über die Kosten klagte. Schließlich \
    einigte man sich auf einen Kompromiss, der allen gefiel. Café, Straße, Übung, Ärger.";

#[test]
fn legacy_charsets_declared_in_header_in_meta_and_undeclared() {
    let cases = [
        (GERMAN, WINDOWS_1252, "ISO-8859-1", "http://example.de/"),
        (RUSSIAN, WINDOWS_1251, "windows-1251", "http://example.ru/"),
        (JAPANESE, SHIFT_JIS, "Shift_JIS", "http://example.jp/"),
    ];
    for (text, encoding, label, url) in cases {
        let (encoded, _, unmappable) = encoding.encode(text);
        assert!(!unmappable);
        let body = |meta: &str| {
            let mut out =
                format!("<html><head>{meta}<title>t</title></head><body><p>").into_bytes();
            out.extend_from_slice(&encoded);
            out.extend_from_slice(b"</p></body></html>");
            out
        };
        let content_type = format!("text/html; charset={label}");
        let pages = vec![
            TestPage {
                url,
                headers: vec![("Content-Type", content_type.as_str())],
                body: body(""),
            },
            TestPage {
                url,
                headers: vec![("Content-Type", "text/html")],
                body: body(&format!("<meta charset=\"{label}\">")),
            },
            TestPage {
                url,
                headers: vec![("Content-Type", "text/html")],
                body: body(&format!(
                    "<meta http-equiv=\"Content-Type\" content=\"text/html; charset={label}\">"
                )),
            },
            TestPage {
                url,
                headers: vec![("Content-Type", "text/html")],
                body: body(""),
            },
        ];
        let read = read_bytes(&build_warc(&pages, true), &Limits::default());
        let sources: Vec<CharsetSource> = outcomes(read, &Limits::default())
            .into_iter()
            .filter_map(|o| match o {
                Outcome::Page(p) => {
                    assert_eq!(p.encoding, encoding, "{label} via {:?}", p.charset_source);
                    assert!(
                        p.html.contains(text),
                        "{label} via {:?} decoded wrongly",
                        p.charset_source
                    );
                    Some(p.charset_source)
                }
                _ => None,
            })
            .collect();
        assert_eq!(
            sources,
            [
                CharsetSource::HttpHeader,
                CharsetSource::Meta,
                CharsetSource::Meta,
                CharsetSource::Detected
            ],
            "{label}"
        );
    }
}

#[test]
fn a_file_cut_inside_a_record_keeps_what_came_before() {
    // Common Crawl layout: cut inside the last member.
    let gz = build_warc(&three_pages(), true);
    let cut = &gz[..gz.len() - 40];
    let read = read_bytes(cut, &Limits::default());
    assert_eq!(read.target_uris(), URIS[..2]);
    let errors: Vec<_> = read.errors().collect();
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].kind, ReadErrorKind::GzipTruncated);

    // Plain file cut inside the last block.
    let plain = build_warc(&three_pages(), false);
    let read = read_bytes(&plain[..plain.len() - 30], &Limits::default());
    assert_eq!(read.target_uris(), URIS[..2]);
    let errors: Vec<_> = read.errors().collect();
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].kind, ReadErrorKind::TruncatedRecord);
    assert_eq!(
        errors[0]
            .head
            .as_ref()
            .and_then(|h| h.target_uri.as_deref()),
        Some(URIS[2])
    );

    // Whole-file gzip cut in its 8-byte trailer: every record decodes, the cut is reported.
    let whole = gzip_whole(&plain);
    let read = read_bytes(&whole[..whole.len() - 4], &Limits::default());
    assert_eq!(read.target_uris(), URIS);
    assert_eq!(
        read.errors().map(|e| e.kind).collect::<Vec<_>>(),
        [ReadErrorKind::GzipTruncated]
    );
    // Cut inside the last record's compressed data: the records before it survive and the
    // error stands at the offset of the record it hit.
    let last_offset = read_bytes(&plain, &Limits::default())
        .records()
        .last()
        .map(|r| r.head.position.offset)
        .unwrap();
    let read = read_bytes(&whole[..whole.len() - 20], &Limits::default());
    assert_eq!(read.target_uris(), URIS[..2]);
    let errors: Vec<_> = read.errors().collect();
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].kind, ReadErrorKind::GzipTruncated);
    assert_eq!(errors[0].position.offset_in_member, last_offset);
}

/// A member that starts in the last byte or two of the reader's buffer shows too little to be
/// recognized until the buffer is refilled: every buffer that can hold the magic (three bytes)
/// must read every record. With the 256 KiB buffer `read_file` uses this is rare, yet real
/// crawls meet it.
#[test]
fn a_member_starting_at_the_end_of_the_read_buffer_is_read() {
    let bytes = build_warc(&three_pages(), true);
    for capacity in 3..=bytes.len() + 1 {
        let mut items = Vec::new();
        let summary = stencil_operators::reading::warc::read(
            std::io::BufReader::with_capacity(capacity, std::io::Cursor::new(bytes.clone())),
            &Limits::default(),
            |item| items.push(item),
        )
        .expect("reading from memory starts");
        let uris: Vec<String> = items
            .iter()
            .filter_map(|item| match item {
                ReadItem::Record(r) => r.head.target_uri.clone(),
                ReadItem::Error(_) => None,
            })
            .collect();
        assert_eq!(uris, URIS, "buffer of {capacity} bytes");
        assert_eq!(summary.errors, 0, "buffer of {capacity} bytes");
    }
}

#[test]
fn garbage_between_records_is_reported_and_skipped() {
    let pages = three_pages();
    let junk: Vec<u8> = (0..5000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    for gzip in [true, false] {
        let first = build_warc(&pages[..1], gzip);
        let rest = build_warc(&pages[1..], gzip);
        let bytes = [first.as_slice(), &junk, &rest].concat();
        let read = read_bytes(&bytes, &Limits::default());
        // The second file's warcinfo record is read too.
        assert_eq!(read.target_uris(), URIS, "gzip={gzip}");
        let kinds: Vec<_> = read.errors().map(|e| e.kind).collect();
        assert!(!kinds.is_empty(), "gzip={gzip}: garbage reported");
        assert!(
            kinds
                .iter()
                .all(|k| matches!(k, ReadErrorKind::Garbage | ReadErrorKind::GzipCorrupt)),
            "gzip={gzip}: {kinds:?}"
        );
    }
}

#[test]
fn a_corrupt_member_and_a_broken_header_cost_only_their_record() {
    let gz = build_warc(&three_pages(), true);
    let offsets: Vec<u64> = read_bytes(&gz, &Limits::default())
        .records()
        .map(|r| r.head.position.offset)
        .collect();
    // Damage the deflate data of the second page's member.
    let mut damaged = gz.clone();
    let second = offsets[2] as usize;
    for b in &mut damaged[second + 20..second + 60] {
        *b ^= 0x5a;
    }
    let read = read_bytes(&damaged, &Limits::default());
    assert_eq!(read.target_uris(), [URIS[0], URIS[2]]);
    assert_eq!(
        read.errors().map(|e| e.kind).collect::<Vec<_>>(),
        [ReadErrorKind::GzipCorrupt]
    );
    assert_eq!(read.errors().next().unwrap().position.offset, offsets[2]);

    // A header without Content-Length, in a plain file: reported, and the next record is read.
    let plain = build_warc(&three_pages(), false);
    let text = String::from_utf8_lossy(&plain).into_owned();
    let broken = text.replacen("Content-Length", "Content-Lenxth", 3);
    let read = read_bytes(broken.as_bytes(), &Limits::default());
    assert!(read.errors().any(|e| e.kind == ReadErrorKind::BadHeader));
    assert_eq!(read.target_uris(), URIS[1..]);
}

#[test]
fn binary_bodies_and_non_html_are_skipped_with_reasons() {
    let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01".to_vec();
    let pages = vec![
        TestPage {
            url: "http://x.example/img",
            headers: vec![("Content-Type", "text/html")],
            body: png.clone(),
        },
        TestPage {
            url: "http://x.example/png",
            headers: vec![("Content-Type", "image/png")],
            body: png,
        },
        TestPage {
            url: "http://x.example/sniffed",
            headers: vec![],
            body: b"<!DOCTYPE html><p>x".to_vec(),
        },
        TestPage {
            url: "http://x.example/empty",
            headers: vec![("Content-Type", "text/html")],
            body: b"  ".to_vec(),
        },
    ];
    let read = read_bytes(&build_warc(&pages, true), &Limits::default());
    let got: Vec<String> = outcomes(read, &Limits::default())
        .into_iter()
        .map(|o| match o {
            Outcome::Page(_) => "page".to_string(),
            Outcome::Skipped { reason, .. } => reason.as_str().to_string(),
            Outcome::Error { kind, .. } => kind.as_str().to_string(),
        })
        .collect();
    assert_eq!(
        got,
        ["record_type", "binary", "not_html", "page", "empty_body"]
    );
}

#[test]
fn a_50_mb_page_is_truncated_and_flagged_not_dropped() {
    let mut body = b"<html><body>".to_vec();
    while body.len() < 50 << 20 {
        body.extend_from_slice(
            b"<div class=row><p>A long page with many rows of text.</p></div>\n",
        );
    }
    let pages = vec![
        TestPage {
            url: "http://big.example/",
            headers: vec![("Content-Type", "text/html")],
            body,
        },
        TestPage::html("http://big.example/next", "<p>next"),
    ];
    let limits = Limits::default();
    let read = read_bytes(&build_warc(&pages, true), &limits);
    assert_eq!(read.errors().count(), 0);
    let records: Vec<_> = read.records().cloned().collect();
    assert!(records[1].block_truncated);
    assert_eq!(records[1].block.len(), limits.max_page_bytes);
    match to_page(records[1].clone(), &limits).1 {
        Outcome::Page(page) => {
            assert_eq!(page.truncated, Some(Truncation::RecordLimit));
            let dom = dom::parse(&page.html, limits.max_dom_depth);
            assert!(dom.len() > 100_000);
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        to_page(records[2].clone(), &limits).1,
        Outcome::Page(_)
    ));
}

/// Runs `work` on a thread with a small stack: if anything recursed per DOM level, a
/// 100,000-deep page would overflow it.
fn on_small_stack<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(work)
        .expect("spawn")
        .join()
        .expect("no stack overflow or panic")
}

#[test]
fn nesting_100000_deep_parses_and_hashes_without_recursion() {
    on_small_stack(|| {
        // Spans cost html5ever nothing per level: the whole depth is built and processed.
        let depth = 100_000;
        let html = format!(
            "<html><body>{}deep{}</body></html>",
            "<span>".repeat(depth),
            "</span>".repeat(depth)
        );
        let dom = dom::parse(&html, 200_000);
        assert!(!dom.depth_limited());
        assert!(dom.max_depth() as usize > depth);
        let sums = subtree::summarize(&dom, "example.com");
        assert_eq!(sums[0].text_chars, 4);
        assert!(dom.path(dom.len() - 1).len() > depth * 5);

        // Divs make the tree builder scan its stack on every tag (quadratic), so the default
        // depth limit stops the parse and flags the page instead of taking minutes.
        let html = format!("<html><body>{}deep</body></html>", "<div>".repeat(depth));
        let start = std::time::Instant::now();
        let dom = dom::parse(&html, Limits::default().max_dom_depth);
        assert!(dom.depth_limited());
        assert!(dom.max_depth() as usize >= Limits::default().max_dom_depth);
        subtree::summarize(&dom, "example.com");
        assert!(start.elapsed().as_secs() < 60, "bounded work");
    });
}

/// Markup built to make a tokenizer go back over the input: each of these pages is read once.
/// (A quadratic tokenizer would take hours on them; the assertions check what was read.)
#[test]
fn markup_that_never_closes_is_read_once() {
    let n = 200_000;
    // One tag with 200,000 attributes, every one checked for repetition.
    let attrs: String = (0..n).map(|i| format!(" a{i}=x")).collect();
    let dom = dom::parse(&format!("<p{attrs} a7=y>text"), 4096);
    let p = (0..dom.len()).find(|&i| dom.tag(i).is_some_and(|t| &**t == "p"));
    assert_eq!(p.map(|p| dom.other_attributes(p).len()), Some(n));
    // A doctype, a comment, an attribute value and a CDATA section that are never closed:
    // each runs to the end of the input, leaving only the implied html, head and body.
    for unit in [
        "<!DOCTYPE html PUBLIC 'x",
        "<!-- x -",
        "<a title='",
        "<svg><![CDATA[ x ]",
    ] {
        let dom = dom::parse(&unit.repeat(n), 4096);
        assert!(dom.len() <= 6, "{unit}: {} nodes", dom.len());
    }
    // Stray `<` and `&` by the hundred thousand stay text.
    let dom = dom::parse(&"< &amp &#x ".repeat(n), 4096);
    let text: usize = (0..dom.len())
        .filter_map(|i| dom.text(i))
        .map(str::len)
        .sum();
    assert_eq!(text, "< & &#x ".len() * n);
}

#[test]
fn random_damage_never_panics_and_every_record_is_accounted_for() {
    let mut pages = three_pages();
    pages.push(TestPage {
        url: "http://x.example/gz",
        headers: vec![("Content-Type", "text/html"), ("Content-Encoding", "gzip")],
        body: gzip_whole(b"<html><body><ul><li>a<li>b</ul></body></html>"),
    });
    let limits = Limits::default();
    let originals = [build_warc(&pages, true), build_warc(&pages, false)];
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for round in 0..400 {
        let mut bytes = originals[round % 2].clone();
        match next() % 4 {
            0 => bytes.truncate((next() % bytes.len() as u64) as usize),
            1 => {
                for _ in 0..1 + next() % 8 {
                    let at = (next() % bytes.len() as u64) as usize;
                    bytes[at] = next() as u8;
                }
            }
            2 => {
                let at = (next() % bytes.len() as u64) as usize;
                let junk: Vec<u8> = (0..next() % 300).map(|_| next() as u8).collect();
                bytes.splice(at..at, junk);
            }
            _ => {
                let at = (next() % bytes.len() as u64) as usize;
                let len = (next() % 200) as usize;
                bytes.drain(at..(at + len).min(bytes.len()));
            }
        }
        let read = read_bytes(&bytes, &limits);
        let (records, errors) = (read.summary.records, read.summary.errors);
        assert_eq!(read.items.len() as u64, records + errors, "round {round}");
        let mut outcomes = 0;
        for item in read.items {
            if let ReadItem::Record(record) = item {
                if let Outcome::Page(page) = to_page(record, &limits).1 {
                    let dom = dom::parse(&page.html, limits.max_dom_depth);
                    subtree::summarize(&dom, &page.host);
                }
                outcomes += 1;
            }
        }
        assert_eq!(outcomes, records, "round {round}");
    }
}

#[test]
fn records_round_trip_through_the_writer() {
    let record = stencil_operators::reading::warc::write::NewRecord {
        record_type: "resource",
        target_uri: Some("http://r.example/"),
        date: "2026-11-21T00:00:00Z",
        content_type: "text/html",
        block: b"<html><body><p>resource record</p></body></html>",
    };
    let read = read_bytes(&serialize(&record), &Limits::default());
    let records: Vec<_> = read.records().cloned().collect();
    assert_eq!(records.len(), 1);
    match to_page(records[0].clone(), &Limits::default()).1 {
        Outcome::Page(page) => {
            assert_eq!(page.http_status, None);
            assert!(page.html.contains("resource record"));
        }
        Outcome::Skipped {
            reason: SkipReason::NotHtml,
            detail,
        } => panic!("{detail}"),
        other => panic!("{other:?}"),
    }
}

/// A page linking to a raw (not punycode) international host, whose bytes a host check may
/// slice inside a character. The page goes through what `stencil clean` does: decode, parse,
/// summarize, features, score, smoothing (with `clean`'s default hidden-element threshold),
/// cleaned text.
#[test]
fn a_link_to_a_raw_unicode_host_cleans() {
    use stencil_operators::page_models::features;
    use stencil_operators::page_models::model::Model;
    use stencil_operators::reading::charset;
    use stencil_operators::smoothing::segmentation::{self, Params, DEFAULT_THRESHOLD};

    let html = "<html><body><p>Hello world, a page with a link.</p>\
                <a href=\"http://日本語.jp/\">日本</a></body></html>";
    let model = Model::default_model();
    // `clean` without --url has no host; with one, the host of the page's own URL.
    for host in ["", "example.com", "日本語.jp", "www.日本語.jp"] {
        let decoded = charset::decode(html.as_bytes(), None, None);
        let dom = dom::parse(&decoded.text, Limits::default().max_dom_depth);
        let sums = subtree::summarize(&dom, host);
        assert_eq!(sums[0].links, 1);
        assert_eq!(sums[0].intra_host_links, u32::from(host.contains("日本語")));
        let page_features = features::compute(&dom, &sums);
        let scores = model.score_page(&dom, &page_features);
        let segmentation =
            segmentation::segment(&dom, &scores, &page_features.area, &Params::default());
        // `stencil clean`'s default --hidden-threshold (jobs: DEFAULT_HIDDEN_THRESHOLD).
        let calls = segmentation::with_confident_hidden(&dom, &segmentation, &scores, 0.8);
        let cleaned = segmentation::cleaned_text(&dom, &calls, DEFAULT_THRESHOLD);
        assert!(cleaned.contains("Hello world"), "{host:?}: {cleaned:?}");
    }
}

/// Both views of a page (template scores, smoothing and cleaned text; the content model's
/// judgement, cleaned text and Markdown) on pages built to find a recursion or a per-node walk up the
/// ancestors: 100,000 nested elements with text at every level, on a small stack, in bounded
/// time. `stencil run` does the same per page (`jobs/src/run/page.rs`).
#[test]
fn both_views_judge_a_page_100000_deep_without_recursion() {
    use stencil_operators::page_models::content::{self, ContentModel, Context};
    use stencil_operators::page_models::features;
    use stencil_operators::page_models::model::Model;
    use stencil_operators::smoothing::segmentation::{self, Params, DEFAULT_THRESHOLD};

    let depth = 100_000;
    // Each page with the words a reader sees on it ("Bold" and "text" glue into one word:
    // nothing separates them but markup).
    let pages = [
        (
            format!(
                "<html><body><main>{}end{}</main></body></html>",
                "<span>word ".repeat(depth),
                "</span>".repeat(depth)
            ),
            depth + 1,
        ),
        (
            format!(
                "<html><body><article>{}</article></body></html>",
                "<b>Bold</b><i>text ".repeat(depth)
            ),
            depth,
        ),
        (
            format!(
                "<html><body><main>{}deep{}</main></body></html>",
                "<ul><li>item <blockquote>quote ".repeat(depth / 2),
                "</blockquote></li></ul>".repeat(depth / 2)
            ),
            depth + 1,
        ),
    ];
    for (html, words_seen) in pages {
        on_small_stack(move || {
            let start = std::time::Instant::now();
            let dom = dom::parse(&html, 200_000);
            assert!(dom.max_depth() as usize > depth / 2);
            let sums = subtree::summarize(&dom, "example.com");
            let page_features = features::compute(&dom, &sums);
            let scores = Model::default_model().score_page(&dom, &page_features);
            let segmentation =
                segmentation::segment(&dom, &scores, &page_features.area, &Params::default());
            let calls = segmentation::with_confident_hidden(&dom, &segmentation, &scores, 0.8);
            let template_text = segmentation::cleaned_text(&dom, &calls, DEFAULT_THRESHOLD);
            let context = Context {
                url: "https://example.com/deep",
                ..Context::default()
            };
            let judgement = content::judge(&dom, &sums, context, &ContentModel::shipped());
            let content_text = judgement.cleaned_text(&dom);
            let markdown_options = markdown::Options {
                links: true,
                images: true,
            };
            let content_markdown = judgement.cleaned_markdown(&dom, markdown_options);
            let words = |text: &str| text.split_whitespace().count();
            // Markdown's prefixes stay short however deep the blocks nest.
            let prefix = |line: &str| line.find(char::is_alphanumeric).unwrap_or(line.len());
            assert!(content_markdown.lines().all(|line| prefix(line) < 4096));
            assert_eq!(
                stencil_tests::markdown::words_of_markdown(&content_markdown),
                stencil_tests::markdown::words(&content_text)
            );
            let everything = dom::text::readable(&dom, 0..dom.len(), |_| false, usize::MAX);
            assert_eq!(words(&everything), words_seen);
            assert!(words(&template_text) <= words_seen);
            assert!(words(&content_text) <= words_seen);
            assert_eq!(judgement.content.len(), judgement.blocks.len());
            assert!(start.elapsed().as_secs() < 60, "bounded work");
        });
    }
}

/// Archives that re-encoded their pages to UTF-8 and kept each page's `<meta>`: L3S-GN1's
/// originals declare `iso-8859-1`, `windows-1251`, `big5`… over UTF-8 bytes. Read as a crawl
/// without that knowledge reads them, with the `<meta>` deciding or copied into the HTTP header
/// (as `../shared/tools/mkwarc.py` builds a WARC), every page must come out as the UTF-8 it
/// is: read as declared, 111 of them would be mojibake (`â€™` for `’`), so their bytes overrule
/// the declaration. dragnet's pages are as fetched, and 8 of them are UTF-8 under an
/// `iso-8859-1` `<meta>` (religionnewsblog.com's among them).
#[test]
fn pages_re_encoded_under_a_stale_declaration_read_as_utf8() {
    use stencil_operators::reading::charset::{decode, prescan_meta};
    let (Some(l3s), Some(dragnet)) = (
        stencil_tests::shared_dir("data/l3s-gn1"),
        stencil_tests::shared_dir("data/dragnet"),
    ) else {
        return;
    };
    let mut overruled = 0;
    let pages = stencil_tests::gold::l3s_gn1(&l3s);
    assert_eq!(pages.len(), 621);
    for page in &pages {
        let utf8 = decode(&page.original, Some("utf-8"), None).text;
        let label = prescan_meta(&page.original).map(|e| e.name());
        for header in [None, label] {
            let read = decode(&page.original, header, None);
            assert_eq!(read.text, utf8, "{} read with header {header:?}", page.id);
            overruled += usize::from(header.is_none() && read.source == CharsetSource::Bytes);
        }
    }
    assert_eq!(overruled, 111, "pages whose bytes overruled their <meta>");

    let pages = stencil_tests::gold::dragnet(&dragnet, 1);
    let r801 = pages.iter().find(|p| p.id == "R801").expect("dragnet R801");
    let read = decode(&r801.html, None, None);
    assert_eq!(read.source, CharsetSource::Bytes);
    assert!(read
        .text
        .contains("polygamous sect\u{2019}s seized property"));
    let overruled = pages
        .iter()
        .filter(|p| decode(&p.html, None, None).source == CharsetSource::Bytes)
        .count();
    assert_eq!(overruled, 8);
}
