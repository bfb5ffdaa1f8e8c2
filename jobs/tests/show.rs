//! `stencil show` in a real browser: headless Chromium renders the overlay, and the test
//! checks the DOM it ends with (the legend, the outlined sections, no script) and the pixels
//! of its screenshot (each section's outline colour where that section's box is). Chromium is
//! /usr/bin/chromium or `$CHROMIUM`; without it these tests print a notice and pass, unless
//! `STENCIL_REQUIRE_CHROMIUM=1` (as `.ci/run` sets, after installing Debian's `chromium`).
//!
//! Reading a page from a WARC file and from an earlier run's `pages` row needs no browser.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{scratch, stencil};
use stencil_operators::reading::warc::write::{http_response, NewRecord, WarcWriter};

const WIDTH: u32 = 1000;
const HEIGHT: u32 = 800;

/// The outline colours `stencil show` draws (operators::overlay::Kind::colour).
const COLOURS: [(&str, [u8; 3]); 3] = [
    ("template", [0xe0, 0x1b, 0x24]),
    ("content", [0x1a, 0x9e, 0x3a]),
    ("boilerplate", [0x1c, 0x5f, 0xd6]),
];

fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    if path.exists() {
        return Some(path);
    }
    let required = std::env::var("STENCIL_REQUIRE_CHROMIUM").is_ok_and(|v| v == "1");
    assert!(
        !required,
        "STENCIL_REQUIRE_CHROMIUM=1 but there is no Chromium at {}",
        path.display()
    );
    eprintln!(
        "NOTICE: skipping the browser check of stencil show: no Chromium at {} (set CHROMIUM)",
        path.display()
    );
    None
}

/// What Chromium made of a page: its DOM after rendering and what it logged.
struct Rendered {
    dom: String,
    log: String,
}

/// Runs headless Chromium on `page` with a fresh profile: `--dump-dom`, or a screenshot when
/// `screenshot` is given. The flags keep it from reaching the network, which is closed here.
fn render(chromium: &Path, page: &Path, work: &Path, screenshot: Option<&Path>) -> Rendered {
    let profile = work.join(format!("profile-{}", screenshot.map_or("dom", |_| "shot")));
    let _ = std::fs::remove_dir_all(&profile);
    let mut command = Command::new(chromium);
    command.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
        "--force-device-scale-factor=1",
        "--enable-logging=stderr",
        "--v=0",
    ]);
    command.arg(format!("--user-data-dir={}", profile.display()));
    command.arg(format!("--window-size={WIDTH},{HEIGHT}"));
    match screenshot {
        Some(png) => command.arg(format!("--screenshot={}", png.display())),
        None => command.arg("--dump-dom"),
    };
    let page = std::fs::canonicalize(page).unwrap();
    command.arg(format!("file://{}", page.display()));
    let out = command.output().unwrap();
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "chromium failed: {log}");
    Rendered {
        dom: String::from_utf8_lossy(&out.stdout).into_owned(),
        log,
    }
}

/// The console messages Chromium logged (a script error, a blocked request or style): a safe,
/// self-contained copy makes none.
fn console_messages(log: &str) -> Vec<&str> {
    log.lines()
        .filter(|l| l.contains(":CONSOLE") || l.contains("Uncaught"))
        .collect()
}

/// The `data-stencil-kind` of the element whose id is `id` in a serialized DOM.
fn kind_of<'a>(dom: &'a str, id: &str) -> Option<&'a str> {
    let at = dom.find(&format!("id=\"{id}\""))?;
    let tag_end = at + dom[at..].find('>')?;
    let tag = &dom[at..tag_end];
    let kind = tag.find("data-stencil-kind=\"")? + "data-stencil-kind=\"".len();
    Some(&tag[kind..kind + tag[kind..].find('"')?])
}

fn show(args: &[&str]) -> String {
    let out = stencil().arg("show").args(args).output().unwrap();
    assert!(
        out.status.success(),
        "stencil show {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A page whose blocks sit at known boxes: a masthead, a menu, the story, related links and a
/// footer, each absolutely placed, with padding so that nothing inside reaches an edge.
fn laid_out_page() -> String {
    let links = |prefix: &str, n: usize| -> String {
        (0..n)
            .map(|k| format!("<li><a href=\"/{prefix}/{k}\">{prefix} section {k}</a></li>"))
            .collect()
    };
    let story: String = (0..8)
        .map(|k| {
            format!(
                "<p>Paragraph {k} of the story: the council met on Tuesday evening to discuss \
                 the new library, which will open in the spring after two years of work on \
                 the old railway station that houses it, and residents spoke at length.</p>"
            )
        })
        .collect();
    format!(
        "<!DOCTYPE html><html><head><title>A laid-out page</title><style>\
         html,body{{margin:0;background:#fff}}\
         #masthead,#menu,#story,#related,#colophon{{position:absolute;box-sizing:border-box;\
         padding:14px;overflow:hidden;background:#f4f4f4;font:13px/1.3 sans-serif}}\
         #masthead{{left:20px;top:20px;width:960px;height:80px}}\
         #menu{{left:20px;top:120px;width:200px;height:440px}}\
         #story{{left:240px;top:120px;width:520px;height:440px}}\
         #related{{left:780px;top:120px;width:200px;height:440px}}\
         #colophon{{left:20px;top:580px;width:560px;height:100px}}\
         ul{{margin:0;padding-left:16px}}</style>\
         <script>document.title = 'scripted';</script></head><body onload=\"alert(1)\">\
         <div id=\"masthead\"><a href=\"/\">The Daily Example</a> <ul>{}</ul></div>\
         <div id=\"menu\"><ul>{}</ul></div>\
         <div id=\"story\"><h1>The library opens in spring</h1>{story}</div>\
         <div id=\"related\"><b>Related</b><ul>{}</ul></div>\
         <div id=\"colophon\">© The Daily Example · <a href=\"/about\">About</a> · \
         <a href=\"/contact\">Contact</a> · <a href=\"javascript:alert(2)\">Privacy</a></div>\
         </body></html>",
        links("top", 4),
        links("menu", 12),
        links("related", 8),
    )
}

/// The boxes of [`laid_out_page`]: id, left, top, width, height.
const BOXES: [(&str, u32, u32, u32, u32); 5] = [
    ("masthead", 20, 20, 960, 80),
    ("menu", 20, 120, 200, 440),
    ("story", 240, 120, 520, 440),
    ("related", 780, 120, 200, 440),
    ("colophon", 20, 580, 560, 100),
];

struct Screenshot {
    width: u32,
    rgb: Vec<[u8; 3]>,
}

impl Screenshot {
    fn read(path: &Path) -> Screenshot {
        let bytes = std::fs::read(path).unwrap();
        let mut decoder = png::Decoder::new(std::io::Cursor::new(bytes));
        decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        let channels = info.color_type.samples();
        assert!(channels >= 3, "a colour screenshot: {:?}", info.color_type);
        let rgb = buf[..info.buffer_size()]
            .chunks(channels)
            .map(|p| [p[0], p[1], p[2]])
            .collect();
        Screenshot {
            width: info.width,
            rgb,
        }
    }

    fn at(&self, x: u32, y: u32) -> [u8; 3] {
        self.rgb[(y * self.width + x) as usize]
    }
}

fn near(a: [u8; 3], b: [u8; 3]) -> bool {
    a.iter().zip(b).all(|(&x, y)| x.abs_diff(y) <= 12)
}

#[test]
fn the_overlay_renders_where_the_sections_are() {
    let Some(chromium) = chromium() else { return };
    let dir = scratch("show-browser");
    let page = dir.join("page.html");
    std::fs::write(&page, laid_out_page()).unwrap();
    let overlay = dir.join("page.show.html");
    show(&[
        page.to_str().unwrap(),
        "--url",
        "https://news.example/2024/library",
        "-o",
        overlay.to_str().unwrap(),
    ]);

    // (1) The DOM after rendering: the legend, the boxes outlined, and nothing that runs.
    let rendered = render(&chromium, &overlay, &dir, None);
    let dom = &rendered.dom;
    assert!(dom.contains("id=\"stencil-legend\""), "{dom}");
    assert!(!dom.to_ascii_lowercase().contains("<script"), "{dom}");
    assert!(
        !dom.contains("onload") && !dom.contains("javascript:"),
        "{dom}"
    );
    // The script did not run: the title is the page's.
    assert!(dom.contains("<title>A laid-out page</title>"), "{dom}");
    let messages = console_messages(&rendered.log);
    assert!(messages.is_empty(), "console: {messages:?}");
    let kinds: Vec<(&str, Option<&str>)> = BOXES.iter().map(|b| (b.0, kind_of(dom, b.0))).collect();
    eprintln!("kinds of the boxes: {kinds:?}");
    // The story is main content, and the site's furniture around it is not.
    assert_eq!(kind_of(dom, "story"), Some("content"), "{kinds:?}");
    let outlined_furniture = kinds
        .iter()
        .filter(|(id, kind)| *id != "story" && kind.is_some_and(|k| k != "content"))
        .count();
    assert!(outlined_furniture >= 2, "{kinds:?}");

    // (2) The screenshot: each box's edges in its kind's colour, and the background of a box
    // that is not a section in none of them.
    let png = dir.join("page.png");
    let shot = render(&chromium, &overlay, &dir, Some(&png));
    assert!(console_messages(&shot.log).is_empty(), "{}", shot.log);
    let screenshot = Screenshot::read(&png);
    for ((id, left, top, width, height), (_, kind)) in BOXES.iter().zip(&kinds) {
        let edges = [
            (left + 1, top + height / 2),
            (left + width - 2, top + height / 2),
            (left + width / 2, top + 1),
            (left + width / 2, top + height - 2),
        ];
        for (x, y) in edges {
            let pixel = screenshot.at(x, y);
            match kind {
                Some(kind) => {
                    let colour = COLOURS.iter().find(|c| c.0 == *kind).unwrap().1;
                    assert!(near(pixel, colour), "{id} ({kind}) at {x},{y}: {pixel:?}");
                }
                None => assert!(
                    COLOURS.iter().all(|c| !near(pixel, c.1)),
                    "{id} is no section, yet outlined at {x},{y}: {pixel:?}"
                ),
            }
        }
        // Inside the box, past the outline: the page's own background.
        let inside = screenshot.at(left + 8, top + height / 2);
        assert!(near(inside, [0xf4, 0xf4, 0xf4]), "{id} inside: {inside:?}");
    }
}

#[test]
fn a_real_page_renders_without_console_errors() {
    let Some(chromium) = chromium() else { return };
    let Some(data) = stencil_tests::shared_dir("data/dragnet/HTML") else {
        return;
    };
    let dir = scratch("show-real");
    let mut pages: Vec<PathBuf> = std::fs::read_dir(&data)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    pages.sort();
    let overlay = dir.join("real.show.html");
    for page in pages.iter().take(3) {
        show(&[page.to_str().unwrap(), "-o", overlay.to_str().unwrap()]);
        let rendered = render(&chromium, &overlay, &dir, None);
        let messages = console_messages(&rendered.log);
        assert!(messages.is_empty(), "{}: {messages:?}", page.display());
        assert!(rendered.dom.contains("id=\"stencil-legend\""));
        assert!(!rendered.dom.to_ascii_lowercase().contains("<script"));
        let kinds_seen = COLOURS
            .iter()
            .filter(|(kind, _)| {
                rendered
                    .dom
                    .contains(&format!("data-stencil-kind=\"{kind}\""))
            })
            .count();
        assert!(kinds_seen >= 2, "{}: {kinds_seen} kinds", page.display());
    }
}

/// Two pages in a gzipped WARC file, one gzip member each.
fn two_page_warc(path: &Path, pages: &[(&str, String)]) {
    let mut writer = WarcWriter::new(Vec::new(), true);
    for (url, html) in pages {
        let block = http_response(
            200,
            &[("Content-Type", "text/html; charset=utf-8")],
            html.as_bytes(),
        );
        writer
            .write(&NewRecord {
                record_type: "response",
                target_uri: Some(url),
                date: "2024-03-01T00:00:00Z",
                content_type: "application/http; msgtype=response",
                block: &block,
            })
            .unwrap();
    }
    std::fs::write(path, writer.into_inner()).unwrap();
}

#[test]
fn a_page_is_found_in_a_warc_file_and_in_a_run() {
    let dir = scratch("show-warc");
    let first = "https://news.example/2024/library";
    let second = "https://news.example/2024/station";
    let other = laid_out_page().replace("The library opens in spring", "The station closes");
    let warc = dir.join("crawl.warc.gz");
    two_page_warc(&warc, &[(first, laid_out_page()), (second, other.clone())]);
    let page = dir.join("station.html");
    std::fs::write(&page, &other).unwrap();

    // By URL in the WARC file: the same copy as from the page's own file with its URL.
    let from_warc = show(&[warc.to_str().unwrap(), "--url", second]);
    let from_file = show(&[page.to_str().unwrap(), "--url", second]);
    assert!(from_warc.contains("The station closes"));
    assert_eq!(from_warc, from_file);
    // Without --url, the first page.
    assert!(show(&[warc.to_str().unwrap()]).contains("The library opens in spring"));
    let missing = stencil()
        .args([
            "show",
            warc.to_str().unwrap(),
            "--url",
            "https://news.example/none",
        ])
        .output()
        .unwrap();
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no record of"));

    // By an earlier run's row: its warc_file and warc_offset find the record.
    let out = dir.join("out");
    let run = stencil()
        .args([
            "run",
            warc.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let from_run = show(&["--run", out.to_str().unwrap(), "--url", second]);
    assert!(from_run.contains("The station closes"), "{from_run}");
    assert!(from_run.contains("data-stencil-kind="), "{from_run}");
    assert!(from_run.contains(&format!("Stencil sections: {second}")));
}
