//! The `stencil` binary as a user runs it.

mod common;

use common::{scratch, stencil};
use stencil_operators::reading::warc::write::{http_response, NewRecord, WarcWriter};

/// Runs `stencil` with `args` (then `path`) and returns its stdout, failing with its stderr.
fn run_ok(args: &[&str], path: &std::path::Path) -> Vec<u8> {
    let out = stencil().args(args).arg(path).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn write_warc(path: &std::path::Path) {
    let mut writer = WarcWriter::new(Vec::new(), true);
    for (i, status) in [200u16, 200, 404].into_iter().enumerate() {
        let body = format!("<html><body><p>page {i}</p></body></html>");
        let block = http_response(status, &[("Content-Type", "text/html")], body.as_bytes());
        let url = format!("http://cli.example/{i}");
        writer
            .write(&NewRecord {
                record_type: "response",
                target_uri: Some(&url),
                date: "2026-11-21T00:00:00Z",
                content_type: "application/http; msgtype=response",
                block: &block,
            })
            .unwrap();
    }
    let mut bytes = writer.into_inner();
    bytes.extend_from_slice(b"trailing garbage that is not a gzip member");
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn inspect_reports_every_record_as_json() {
    let dir = scratch("cli");
    write_warc(&dir.join("a.warc.gz"));
    let stdout = run_ok(&["inspect", "--json", "-w", "2"], &dir);
    let report: serde_json::Value = serde_json::from_slice(&stdout).unwrap();
    let inv = &report["inventory"];
    assert_eq!(inv["records"], 3);
    assert_eq!(inv["pages"], 2);
    assert_eq!(inv["read_errors"], 1);
    assert_eq!(inv["by_outcome"]["page"], 2);
    assert_eq!(inv["by_outcome"]["skipped"], 1);
    assert_eq!(inv["by_outcome"]["error"], 1);
    assert_eq!(inv["skipped_by_reason"]["http_status"], 1);
    assert_eq!(inv["errors_by_kind"]["garbage"], 1);
    assert!(inv["dom_nodes"].as_u64().unwrap() > 10);

    let stdout = run_ok(&["inspect"], &dir.join("a.warc.gz"));
    let text = String::from_utf8_lossy(&stdout);
    assert!(text.contains("pages            2"), "{text}");
}

#[test]
fn a_missing_file_fails_and_says_which() {
    let out = stencil()
        .args(["inspect", "/nonexistent/crawl.warc.gz"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/crawl.warc.gz"));
}

#[test]
fn demo_generates_a_crawl_runs_the_whole_job_and_reports_what_it_found() {
    let dir = scratch("demo");
    let stdout = run_ok(&["demo", "--dir"], &dir);
    let text = String::from_utf8_lossy(&stdout);
    assert!(text.contains("generated 600 pages of 20 hosts"), "{text}");
    assert!(text.contains("site000.example"), "{text}");
    assert!(text.contains("cleaned text of https://"), "{text}");
    let out = dir.join("out");
    assert!(
        out.join("model.json").is_file(),
        "20 hosts are enough to train"
    );
    assert!(out.join("run.json").is_file());
    for table in [
        "pages",
        "hosts",
        "segments",
        "site_templates",
        "training",
        "records",
    ] {
        for part in ["part-00000.parquet", "part-00001.parquet"] {
            assert!(out.join(table).join(part).is_file(), "{table}/{part}");
        }
    }
}

#[test]
fn clean_reads_a_gzipped_page_and_refuses_binary_bytes() {
    let dir = scratch("clean");
    let paragraph = "The committee met on Tuesday to discuss the budget for the new library, \
                     and members agreed that the reading rooms should stay open late.";
    let html = format!(
        "<html><body><ul class=nav><li><a href=/>Home</a><li><a href=/news>News</a></ul>\
         <div class=article><h1>Library budget approved</h1>{}</div></body></html>",
        (0..6)
            .map(|i| format!("<p>{paragraph} {paragraph} Part {i}.</p>"))
            .collect::<String>()
    );
    let plain = dir.join("page.html");
    std::fs::write(&plain, &html).unwrap();
    let gzipped = dir.join("page.html.gz");
    std::fs::write(&gzipped, stencil_tests::gzip_whole(html.as_bytes())).unwrap();
    let from_plain = run_ok(&["clean"], &plain);
    assert!(String::from_utf8_lossy(&from_plain).contains("reading rooms should stay open"));
    assert_eq!(run_ok(&["clean"], &gzipped), from_plain);

    let image = dir.join("photo.html");
    std::fs::write(&image, b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR").unwrap();
    let out = stencil().arg("clean").arg(&image).output().unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("photo.html") && stderr.contains("binary"),
        "{stderr}"
    );
}

/// `clean --format markdown` prints the cleaned text's words with their structure, and
/// `--format json` the page's metadata with both texts.
#[test]
fn clean_prints_markdown_and_json() {
    let dir = scratch("clean-formats");
    let paragraph = "The committee met on Tuesday to discuss the budget for the new library, \
                     and members agreed that the <b>reading rooms</b> should stay open late.";
    let html = format!(
        "<html lang=en-GB><head><title>Library budget approved | Town News</title>\
         <meta property=og:site_name content='Town News'>\
         <meta name=author content='Ann Smith'>\
         <meta property=article:published_time content='2024-03-01T09:30:00+01:00'>\
         </head><body><ul class=nav><li><a href=/>Home</a><li><a href=/news>News</a></ul>\
         <div class=article><h1>Library budget approved</h1>{}\
         <ul><li>Open until ten on weekdays.</li><li>Closed on public holidays.</li></ul>\
         </div></body></html>",
        (0..6)
            .map(|i| format!("<p>{paragraph} {paragraph} Part {i}.</p>"))
            .collect::<String>()
    );
    let page = dir.join("page.html");
    std::fs::write(&page, &html).unwrap();
    let text = String::from_utf8(run_ok(&["clean"], &page)).unwrap();
    let markdown = String::from_utf8(run_ok(&["clean", "--format", "markdown"], &page)).unwrap();
    assert!(
        markdown.contains("# Library budget approved\n"),
        "{markdown}"
    );
    assert!(markdown.contains("**reading rooms**"), "{markdown}");
    assert!(
        markdown.contains("- Open until ten on weekdays.\n- Closed on public holidays."),
        "{markdown}"
    );
    let words = |t: &str| stencil_tests::markdown::words(t);
    assert_eq!(
        stencil_tests::markdown::words_of_markdown(&markdown),
        words(&text)
    );
    let json = run_ok(
        &[
            "clean",
            "--format",
            "json",
            "--url",
            "https://town.example/news/budget",
        ],
        &page,
    );
    let json: serde_json::Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(json["page_title"], "Library budget approved", "{json}");
    assert_eq!(json["site_name"], "Town News", "{json}");
    assert_eq!(json["author"], "Ann Smith", "{json}");
    assert_eq!(json["published"], "2024-03-01T09:30:00+01:00", "{json}");
    assert_eq!(json["lang"], "en-GB", "{json}");
    assert_eq!(json["lang_detected"], "en", "{json}");
    assert_eq!(
        json["cleaned_text"].as_str(),
        Some(text.trim_end()),
        "{json}"
    );
    assert_eq!(
        json["cleaned_markdown"].as_str(),
        Some(markdown.trim_end()),
        "{json}"
    );
}
