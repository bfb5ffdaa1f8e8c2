//! `stencil report`: the page's charts are inline SVG with data marks, its key figures are the
//! tables' own counts, it names no external resource, and it copes with a folder that lacks
//! tables; with `--state`, one point per night.

mod common;

use std::path::Path;

use arrow_array::{Array, Float64Array};
use common::{batches, check, scratch, stencil};

/// The colours of the charts' data marks (`crawl_report::charts::SERIES`).
const MARKS: [&str; 2] = ["#1F77B4", "#FF7F0E"];

fn report(out: &Path, extra: &[&str]) -> String {
    check(
        stencil()
            .arg("report")
            .arg(out)
            .args(extra)
            .output()
            .unwrap(),
    );
    std::fs::read_to_string(out.join("report.html")).unwrap()
}

/// The text of `<section id="ID">…</section>`.
fn section<'a>(html: &'a str, id: &str) -> &'a str {
    let start = html
        .find(&format!("<section id=\"{id}\">"))
        .unwrap_or_else(|| panic!("no section {id}"));
    let end = html[start..].find("</section>").unwrap() + start;
    &html[start..end]
}

/// The `data-value` of the key figure `id`.
fn key(html: &str, id: &str) -> String {
    let at = html
        .find(&format!("id=\"{id}\" data-value=\""))
        .unwrap_or_else(|| panic!("no key figure {id}"));
    let rest = &html[at + id.len() + 18..];
    rest[..rest.find('"').unwrap()].to_string()
}

fn rows(out: &Path, table: &str) -> usize {
    batches(out, table).iter().map(|b| b.num_rows()).sum()
}

/// No script and no reference outside the page: the SVG namespace is a name, not a request.
fn assert_self_contained(html: &str) {
    let html = html.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
    for needle in [
        "<script", "http:", "https:", "src=", "href=", "url(", "=\"//", "@import",
    ] {
        assert!(!html.contains(needle), "the page holds {needle}");
    }
}

#[test]
fn a_runs_report_has_its_charts_and_its_tables_counts() {
    let dir = scratch("report");
    let files = common::crawl(&dir, 2);
    let out = dir.join("out");
    common::job("run", &files, &out, &["-w", "2"]);
    let html = report(&out, &[]);
    assert_eq!(html.matches("<svg").count(), 6);
    // Each chart, and the marks in a series colour beyond its legend's swatches.
    for (id, legend) in [
        ("chart-page-share", 2),
        ("chart-host-share", 1),
        ("chart-top-hosts", 0),
        ("chart-size-share", 1),
        ("chart-outcomes", 0),
        ("chart-stages", 0),
    ] {
        let s = section(&html, id);
        assert_eq!(s.matches("<svg").count(), 1, "{id}");
        // Data marks: bars, lines and points in a series colour.
        let marks: usize = MARKS.iter().map(|m| s.matches(m).count()).sum();
        assert!(
            marks > legend,
            "{id}: {marks} marks, {legend} in the legend"
        );
        assert!(s.contains("<text"), "{id}: no labels");
    }
    assert_eq!(key(&html, "key-pages"), rows(&out, "pages").to_string());
    assert_eq!(key(&html, "key-hosts"), rows(&out, "hosts").to_string());
    assert_eq!(key(&html, "key-records"), rows(&out, "records").to_string());
    // The mean site-level share over the pages that have one, from the table itself.
    let (mut sum, mut n) = (0.0, 0u64);
    for batch in batches(&out, "pages") {
        let column = batch
            .column_by_name("site_template_text_fraction")
            .unwrap()
            .as_any()
            .downcast_ref::<Float64Array>()
            .unwrap()
            .clone();
        for i in 0..column.len() {
            if column.is_valid(i) {
                sum += column.value(i);
                n += 1;
            }
        }
    }
    assert!(n > 0);
    let shown: f64 = key(&html, "key-site-share").parse().unwrap();
    assert!(
        (shown - sum / n as f64).abs() < 1e-9,
        "{shown} vs {}",
        sum / n as f64
    );
    // The top-hosts chart names the crawl's hosts.
    assert!(section(&html, "chart-top-hosts").contains("site000.example"));
    assert_self_contained(&html);
    assert!(html.len() < 2_000_000);
    // The same tables give the same page.
    assert_eq!(report(&out, &[]), html);
}

#[test]
fn a_folder_without_rows_or_run_json_gives_a_page_that_says_so_and_one_without_pages_an_error() {
    let dir = scratch("report-empty");
    let out = dir.join("out");
    std::fs::create_dir_all(out.join("pages")).unwrap();
    let html = report(&out, &[]);
    assert_eq!(html.matches("<svg").count(), 0);
    assert!(html.contains("The pages table has no rows."));
    assert!(html.contains("No stage times"));
    assert!(html.contains("OUT has no records table."));
    assert_eq!(key(&html, "key-pages"), "0");
    assert_self_contained(&html);

    let bare = dir.join("bare");
    std::fs::create_dir_all(&bare).unwrap();
    let failed = stencil().arg("report").arg(&bare).output().unwrap();
    assert!(!failed.status.success());
    let stderr = String::from_utf8_lossy(&failed.stderr);
    assert!(stderr.contains("no pages table"), "{stderr}");
    assert!(!bare.join("report.html").exists());
}

#[test]
fn with_a_state_the_nights_chart_has_a_point_per_night() {
    let dir = scratch("report-state");
    let state = dir.join("state");
    let mut out = dir.join("none");
    for night in 1..=2u32 {
        let crawl = common::synth_night(&dir, night);
        out = dir.join(format!("out-{night}"));
        common::job("run", &[crawl], &out, &["--state", state.to_str().unwrap()]);
    }
    let html = report(&out, &["--state", state.to_str().unwrap()]);
    assert_eq!(html.matches("<svg").count(), 7);
    let nights = section(&html, "chart-nights");
    assert_eq!(nights.matches("<circle").count(), 2, "{nights}");
    assert!(nights.contains("night 1: 6 hosts") && nights.contains("night 2: 6 hosts"));
    assert_self_contained(&html);
}
