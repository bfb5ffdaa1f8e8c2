//! `run --state`: site statistics carried from night to night, template drift, and
//! `apply --state`.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::{check, named_rows as table, scratch, stencil};

fn strs(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

fn run(files: &[PathBuf], out: &Path, extra: &[&str]) -> String {
    common::job("run", files, out, extra)
}

/// The rows of `table` projected on `columns`, sorted.
fn project(rows: &[BTreeMap<String, String>], columns: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = rows
        .iter()
        .map(|row| {
            columns
                .iter()
                .map(|c| {
                    row.get(*c)
                        .cloned()
                        .unwrap_or_else(|| panic!("no column {c}"))
                })
                .collect::<Vec<_>>()
                .join("\t")
        })
        .collect();
    out.sort();
    out
}

/// The current generation of a state folder.
fn generation(state: &Path) -> PathBuf {
    let name = std::fs::read_to_string(state.join("CURRENT")).unwrap();
    state.join(name.trim())
}

const SAMPLE_COLUMNS: [&str; 3] = ["host", "url_key", "fingerprints"];
const HOST_COLUMNS: [&str; 3] = ["host", "pages", "pages_sampled"];
/// What the statistics decide; `path`, `text_sample` and `url` describe one occurrence, which
/// the state may pick on another page (docs/schemas.md).
const TEMPLATE_COLUMNS: [&str; 6] = [
    "host",
    "method",
    "hash",
    "pages_with",
    "pages_sampled",
    "fraction",
];
const SITE_FRACTIONS: [&str; 4] = [
    "url",
    "site_template_text_fraction",
    "site_template_link_fraction",
    "site_template_html_fraction",
];

/// Night 1 then night 2 with a state gives the state, site templates and tonight's site-level
/// fractions of one run over both nights (with a state or without), floats compared as bits,
/// whatever the worker count.
#[test]
fn two_nights_with_a_state_equal_one_run_over_both() {
    let dir = scratch("state-equivalence");
    // Five files with pages of every host (the crawl interleaves its six hosts): three for
    // night 1, two for night 2.
    let files = common::crawl(&dir, 5);
    // A small sample, so that night 2's pages push some of night 1's out of it.
    let sample = ["--host-sample", "12"];
    let (nightly, union) = (dir.join("nightly"), dir.join("union"));
    let args = |workers: &'static str, state: &Path| -> Vec<String> {
        let mut args: Vec<String> = sample.iter().map(|s| s.to_string()).collect();
        args.extend(["-w".into(), workers.into(), "--state".into()]);
        args.push(state.display().to_string());
        args
    };
    run(&files[..3], &dir.join("out1"), &strs(&args("1", &nightly)));
    run(&files[3..], &dir.join("out2"), &strs(&args("2", &nightly)));
    run(&files, &dir.join("outu"), &strs(&args("1", &union)));
    // And one plain run over both, without a state.
    run(&files, &dir.join("plain"), &sample);
    let (nightly, union) = (generation(&nightly), generation(&union));

    let samples = table(&nightly, "samples");
    assert!(!samples.is_empty());
    assert_eq!(
        project(&samples, &SAMPLE_COLUMNS),
        project(&table(&union, "samples"), &SAMPLE_COLUMNS)
    );
    let hosts = table(&nightly, "hosts");
    assert_eq!(
        project(&hosts, &HOST_COLUMNS),
        project(&table(&union, "hosts"), &HOST_COLUMNS)
    );
    // Pages were pushed out of some host's sample by night 2's.
    assert!(hosts
        .iter()
        .any(|h| h["pages"].parse::<u64>().unwrap() > 12));
    let templates = table(&nightly, "site_templates");
    assert!(!templates.is_empty());
    assert_eq!(
        project(&templates, &TEMPLATE_COLUMNS),
        project(&table(&union, "site_templates"), &TEMPLATE_COLUMNS)
    );
    assert_eq!(
        project(&templates, &TEMPLATE_COLUMNS),
        project(
            &table(&dir.join("plain"), "site_templates"),
            &TEMPLATE_COLUMNS
        )
    );
    // The state's files do not depend on the worker count: the union, on one worker, wrote
    // the same bytes for every bucket of the samples.
    for table in ["samples"] {
        for bucket in std::fs::read_dir(nightly.join(table)).unwrap() {
            let path = bucket.unwrap().path();
            let other = union.join(table).join(path.file_name().unwrap());
            assert_eq!(
                std::fs::read(&path).unwrap(),
                std::fs::read(&other).unwrap(),
                "{}",
                path.display()
            );
        }
    }

    // Tonight's pages get the site-level fractions they get in the run over both nights.
    let tonight = project(&table(&dir.join("out2"), "pages"), &SITE_FRACTIONS);
    let all = project(&table(&dir.join("plain"), "pages"), &SITE_FRACTIONS);
    assert!(!tonight.is_empty());
    for row in &tonight {
        assert!(all.contains(row), "night 2's {row} is not in the union run");
    }
    // And night 2's hosts know their previous night.
    let hosts2 = table(&dir.join("out2"), "hosts");
    assert!(hosts2.iter().all(|h| h["night"] == "2"));
    assert!(hosts2
        .iter()
        .any(|h| h["previous_templated_fraction"] != "∅"));
}

/// Three nights of a crawl whose generator redesigns every third host each night from night 2
/// on (a new cookie bar and sidebar): `template_changes` names exactly the redesigned hosts,
/// with the new cookie bar among the blocks that appeared and the old one among those that
/// disappeared.
#[test]
fn template_changes_find_the_generators_redesigns() {
    let dir = scratch("state-drift");
    let state = dir.join("state");
    let hosts = 6;
    for night in 1..=3u32 {
        let crawl = common::synth_night(&dir, night);
        let out = dir.join(format!("out-{night}"));
        run(&[crawl], &out, &["--state", state.to_str().unwrap()]);
        let changes = table(&out, "template_changes");
        let changed: std::collections::BTreeSet<String> =
            changes.iter().map(|c| c["host"].clone()).collect();
        // On night 1 every template is new.
        let redesigned: std::collections::BTreeSet<String> = (0..hosts)
            .filter(|&h| night == 1 || stencil_operators::synth::redesigned(h, night))
            .map(|h| format!("site{h:03}.example"))
            .collect();
        assert_eq!(changed, redesigned, "night {night}");
        if night == 1 {
            assert!(changes.iter().all(|c| c["change"] == "appeared"));
            continue;
        }
        for host in &redesigned {
            let of = |change: &str| {
                changes
                    .iter()
                    .filter(|c| &c["host"] == host && c["change"] == change)
                    .map(|c| c["text_sample"].clone())
                    .collect::<Vec<_>>()
            };
            let (appeared, disappeared) = (of("appeared"), of("disappeared"));
            let cookie = appeared
                .iter()
                .find(|t| t.contains("and its partners use cookies"))
                .unwrap_or_else(|| panic!("night {night}, {host}: {appeared:?}"));
            assert!(
                disappeared.iter().any(|t| t.contains("uses cookies")),
                "night {night}, {host}: the old cookie bar did not disappear: {disappeared:?}"
            );
            assert!(!disappeared.contains(cookie), "night {night}, {host}");
            // The host's share of templated text, before and after, is on every row.
            assert!(changes
                .iter()
                .filter(|c| &c["host"] == host)
                .all(|c| c["templated_fraction_before"] != "∅" && c["night"] == night.to_string()));
        }
    }
}

/// `apply --state` cleans pages with the state's current templates and leaves it unchanged.
#[test]
fn apply_with_a_state_uses_its_templates_without_changing_it() {
    let dir = scratch("state-apply");
    let files = common::crawl(&dir, 5);
    let state = dir.join("state");
    run(
        &files[..3],
        &dir.join("night1"),
        &["--state", state.to_str().unwrap()],
    );
    let before: Vec<(PathBuf, Vec<u8>)> = walk(&state);
    check(
        stencil()
            .arg("apply")
            .args(&files[3..])
            .arg("--out")
            .arg(dir.join("applied"))
            .arg("--state")
            .arg(&state)
            .output()
            .unwrap(),
    );
    assert_eq!(walk(&state), before, "apply changed the state");
    let pages = table(&dir.join("applied"), "pages");
    let site_level = pages
        .iter()
        .filter(|p| p["site_template_text_fraction"] != "∅")
        .count();
    assert!(
        site_level * 10 >= pages.len() * 9,
        "{site_level} of {}",
        pages.len()
    );
    // A folder with no state is refused by name.
    let refused = stencil()
        .arg("apply")
        .args(&files[3..])
        .arg("--out")
        .arg(dir.join("refused"))
        .arg("--state")
        .arg(dir.join("nothing"))
        .output()
        .unwrap();
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("no state here"));
}

/// Every file under `dir` with its bytes, sorted by path.
fn walk(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else {
                files.push((path.clone(), std::fs::read(&path).unwrap()));
            }
        }
    }
    files.sort();
    files
}

/// `--state-max-age`: a host without pages for that many nights leaves the state, and its
/// templates are reported as disappeared.
#[test]
fn hosts_unseen_for_max_age_nights_leave_the_state() {
    let dir = scratch("state-age");
    // Two files with disjoint hosts (the crawl's six hosts alternate between them).
    let files = common::crawl(&dir, 2);
    let again = dir.join("part-1-again.warc.gz");
    std::fs::copy(&files[1], &again).unwrap();
    let state = dir.join("state");
    let age = ["--state", state.to_str().unwrap(), "--state-max-age", "2"];
    run(&files[..1], &dir.join("out1"), &age);
    let first: Vec<String> = project(&table(&generation(&state), "hosts"), &["host"]);
    run(&files[1..], &dir.join("out2"), &age);
    // Night 2: night 1's hosts are one night old, and stay.
    let hosts2 = project(&table(&generation(&state), "hosts"), &["host"]);
    assert!(first.iter().all(|h| hosts2.contains(h)));
    run(&[again], &dir.join("out3"), &age);
    let hosts3 = project(&table(&generation(&state), "hosts"), &["host"]);
    assert!(first.iter().all(|h| !hosts3.contains(h)), "{hosts3:?}");
    assert!(!hosts3.is_empty());
    let gone: std::collections::BTreeSet<String> = table(&dir.join("out3"), "template_changes")
        .into_iter()
        .filter(|c| c["change"] == "disappeared" && c["templated_fraction_after"] == "∅")
        .map(|c| c["host"].clone())
        .collect();
    let labelled: std::collections::BTreeSet<String> = table(&dir.join("out1"), "site_templates")
        .into_iter()
        .map(|t| t["host"].clone())
        .collect();
    assert!(!labelled.is_empty());
    assert_eq!(gone, labelled);
    let samples = project(&table(&generation(&state), "samples"), &["host"]);
    assert!(first.iter().all(|h| !samples.contains(h)));
}

/// A night that dies leaves the state as it was, and the same night run again succeeds on it;
/// run a third time on the same inputs, it is recognised as a rerun and gives the same state.
#[test]
fn a_night_that_dies_leaves_the_state_as_it_was() {
    let dir = scratch("state-dies");
    let files = common::crawl(&dir, 5);
    let state = dir.join("state");
    let args = ["--state", state.to_str().unwrap()];
    run(&files[..3], &dir.join("out1"), &args);
    let before = walk(&state);
    let died = stencil()
        .arg("run")
        .args(&files[3..])
        .arg("--out")
        .arg(dir.join("out2"))
        .args(args)
        .env("STENCIL_INJECT_PANIC", "worker:0")
        .output()
        .unwrap();
    assert!(!died.status.success());
    // The night left its staging folder, which no reader takes for a generation.
    let kept: Vec<(PathBuf, Vec<u8>)> = walk(&state)
        .into_iter()
        .filter(|(path, _)| !path.to_string_lossy().contains(".night-"))
        .collect();
    assert_eq!(kept, before);
    run(&files[3..], &dir.join("out2"), &args);
    let night2 = walk(&generation(&state));
    assert!(generation(&state).ends_with("night-000002"));
    run(&files[3..], &dir.join("out2-again"), &args);
    assert!(generation(&state).ends_with("night-000002"));
    assert_eq!(walk(&generation(&state)), night2);
}

/// A night killed with SIGKILL anywhere — while reading, between stages, while the state's
/// buckets are written, after its generation is renamed, after `CURRENT` names it — and run
/// again with `--resume` gives the state and tables of an uninterrupted night.
#[test]
fn a_night_killed_anywhere_and_resumed_gives_the_same_state_and_tables() {
    let dir = scratch("state-killed");
    let files = common::crawl(&dir, 5);
    let night = |state: &Path, out: &Path, kill: Option<&str>| {
        let mut command = stencil();
        command
            .arg("run")
            .args(&files[3..])
            .arg("--out")
            .arg(out)
            .arg("--state")
            .arg(state)
            .args(["--resume", "-w", "2"]);
        if let Some(point) = kill {
            command.env("STENCIL_INJECT_KILL", point);
        }
        command.output().unwrap()
    };
    let relative = |state: &Path| -> Vec<(PathBuf, Vec<u8>)> {
        let generation = generation(state);
        walk(&generation)
            .into_iter()
            .map(|(path, bytes)| (path.strip_prefix(&generation).unwrap().to_path_buf(), bytes))
            .collect()
    };
    let tables = [
        "pages",
        "hosts",
        "site_templates",
        "template_changes",
        "records",
    ];
    let reference_state = dir.join("reference");
    run(
        &files[..3],
        &dir.join("night1"),
        &["--state", reference_state.to_str().unwrap()],
    );
    let killed_state = dir.join("killed");
    // Night 1 of the state the kills are tried on is a copy of the reference's.
    copy_dir(&reference_state, &killed_state);
    let reference_out = dir.join("reference-out");
    check(night(&reference_state, &reference_out, None));
    let want = relative(&reference_state);
    let want_tables: Vec<Vec<String>> = tables
        .iter()
        .map(|t| common::rows(&reference_out, t))
        .collect();
    for point in [
        "record:40",
        "stage:labels",
        "part-renamed:20",
        "state-staged",
        "state-committed",
    ] {
        let out = dir.join(format!("out-{}", point.replace(':', "-")));
        let killed = night(&killed_state, &out, Some(point));
        assert!(!killed.status.success(), "{point}: the job was not killed");
        check(night(&killed_state, &out, None));
        assert_eq!(relative(&killed_state), want, "{point}: the state differs");
        for (table, want) in tables.iter().zip(&want_tables) {
            assert_eq!(&common::rows(&out, table), want, "{point}: {table} differs");
        }
        // The next kill starts again from night 1's state.
        std::fs::remove_dir_all(&killed_state).unwrap();
        copy_dir(
            &reference_state.join("night-000001"),
            &killed_state.join("night-000001"),
        );
        std::fs::write(killed_state.join("CURRENT"), "night-000001\n").unwrap();
    }
}

fn copy_dir(from: &Path, to: &Path) {
    for (path, bytes) in walk(from) {
        let target = to.join(path.strip_prefix(from).unwrap());
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::write(target, bytes).unwrap();
    }
}
