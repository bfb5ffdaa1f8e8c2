//! The main-content model as a user meets it: `stencil train-content` fits a model to gold
//! texts (deterministically, with a held-out report), `run` and `clean` take it with
//! `--content-model`, and `pages` carries the model's view beside the template model's.

mod common;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Output;

use common::{check, crawl, scratch, stencil};

/// A page of host `h`: a menu and footer (the same on every page of a host), a story of its
/// own, and a list of links to other stories (different on every page, so no site-level
/// template: what only a main-content model removes).
fn page(h: usize, p: usize) -> (String, String, String) {
    let url = format!("https://site{h}.example/news/{p}/story.html");
    let story: Vec<String> = (0..4)
        .map(|k| {
            format!(
                "Paragraph {k} of story {p} on site {h} tells, at some length and with commas, \
                 what happened in town {} on day {} and why it matters to readers.",
                h * 7 + p,
                k + p
            )
        })
        .collect();
    let related: String = (1..=5)
        .map(|k| {
            format!(
                "<li><a href=/news/{}>Read also: headline number {}</a></li>",
                p + k,
                p * 10 + k
            )
        })
        .collect();
    let html = format!(
        "<html><head><title>Story {p}</title></head><body>\
         <div class=menu><a href=/>Home</a> | <a href=/news>News</a> | <a href=/sport>Sport</a></div>\
         <div class=story><h1>Story {p} of site {h}</h1><p>{}</p></div>\
         <div class=more><h3>More stories</h3><ul>{related}</ul></div>\
         <div class=bottom>Copyright site {h}. All rights reserved.</div></body></html>",
        story.join("</p><p>")
    );
    let gold = format!("Story {p} of site {h}\n\n{}", story.join("\n\n"));
    (url, html, gold)
}

/// A WARC of 12 hosts × 4 pages and a gold manifest for it: too few pages per host for
/// site-level statistics.
fn gold_crawl(dir: &Path) -> (PathBuf, PathBuf) {
    gold_crawl_of(dir, 4)
}

/// A WARC of 12 hosts × `pages` pages and a gold manifest for it.
fn gold_crawl_of(dir: &Path, pages: usize) -> (PathBuf, PathBuf) {
    let mut writer = stencil_operators::reading::warc::write::WarcWriter::new(Vec::new(), true);
    let mut manifest = String::from("url\tgold_path\tsource\tpage_type\n");
    std::fs::create_dir_all(dir.join("gold")).unwrap();
    for h in 0..12 {
        for p in 0..pages {
            let (url, html, gold) = page(h, p);
            common::write_page(&mut writer, &url, &html);
            let gold_path = dir.join("gold").join(format!("h{h}p{p}.txt"));
            std::fs::write(&gold_path, gold).unwrap();
            let kind = if h % 2 == 0 { "article" } else { "listing" };
            writeln!(
                manifest,
                "{url}\t{}\tsynthetic\t{kind}",
                gold_path.display()
            )
            .unwrap();
        }
    }
    let warc = dir.join("gold.warc.gz");
    std::fs::write(&warc, writer.into_inner()).unwrap();
    let manifest_path = dir.join("manifest.tsv");
    std::fs::write(&manifest_path, manifest).unwrap();
    (warc, manifest_path)
}

fn train(warc: &Path, manifest: &Path, out: &Path, extra: &[&str]) -> String {
    check(train_content(warc, manifest, out, extra))
}

/// `train-content --no-model`'s log and held-out report (`--report`).
fn held_out_report(
    dir: &Path,
    warc: &Path,
    manifest: &Path,
    extra: &[&str],
) -> (String, serde_json::Value) {
    let report = dir.join("report.json");
    let log = train(
        warc,
        manifest,
        &dir.join("unused.json"),
        &[&["--no-model", "--report", report.to_str().unwrap()], extra].concat(),
    );
    let report = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    (log, report)
}

/// What `train-content` says when it refuses to run.
fn refused(warc: &Path, manifest: &Path, out: &Path, extra: &[&str]) -> String {
    let out = train_content(warc, manifest, out, extra);
    assert!(!out.status.success());
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn train_content(warc: &Path, manifest: &Path, out: &Path, extra: &[&str]) -> Output {
    stencil()
        .arg("train-content")
        .arg(warc)
        .arg("--gold")
        .arg(manifest)
        .arg("--out")
        .arg(out)
        .args([
            "--iterations",
            "60",
            "--learning-rate",
            "0.3",
            "--min-leaf-weight",
            "1",
        ])
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn train_content_fits_a_model_that_clean_and_run_use() {
    let dir = scratch("train-content");
    let (warc, manifest) = gold_crawl(&dir);
    let model = dir.join("content.json");
    let report = dir.join("report.json");
    let predictions = dir.join("held-out");
    let blocks = dir.join("blocks.tsv");
    let log = train(
        &warc,
        &manifest,
        &model,
        &[
            "--folds",
            "3",
            "--report",
            report.to_str().unwrap(),
            "--predictions",
            predictions.to_str().unwrap(),
            "--blocks",
            blocks.to_str().unwrap(),
        ],
    );
    assert!(log.contains("48 pages with gold"), "{log}");
    let block_count: usize = log
        .split("pages with gold, ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .expect("block count in the log");

    // Held out by host: the synthetic stories are easy, the menus, lists and footers are not
    // content, so the held-out cleaned text matches the gold closely.
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let all = &report["all"];
    assert_eq!(all["pages"], 48);
    let macro_f1 = all["macro_f1"].as_f64().unwrap();
    assert!(macro_f1 > 0.95, "held-out macro F1 {macro_f1}");
    assert_eq!(report["synthetic/listing"]["pages"], 24);
    let held_out = std::fs::read_to_string(predictions.join("h3p1.txt")).unwrap();
    assert!(
        held_out.contains("Paragraph 2 of story 1 on site 3"),
        "{held_out}"
    );
    assert!(!held_out.contains("Read also"), "{held_out}");

    // --blocks: one row per block, its held-out call agreeing with the held-out text.
    let blocks = std::fs::read_to_string(&blocks).unwrap();
    let mut rows = blocks.lines();
    assert!(rows
        .next()
        .unwrap()
        .starts_with("url\tsource\tpage_type\tblock"));
    let rows: Vec<Vec<&str>> = rows.map(|r| r.split('\t').collect()).collect();
    assert_eq!(rows.len(), block_count);
    let row_of = |needle: &str| {
        rows.iter()
            .find(|r| r[0] == "https://site3.example/news/1/story.html" && r[8].contains(needle))
            .unwrap_or_else(|| panic!("no block with {needle}"))
    };
    let story = row_of("Paragraph 2 of story 1 on site 3");
    assert_eq!((story[6], story[7]), ("1", "1.000"), "{story:?}");
    let related = row_of("Read also");
    assert_eq!((related[6], related[7]), ("0", "0.000"), "{related:?}");
    // A block's text nodes are joined as they read: no space added inside the menu's line.
    assert_eq!(row_of("Home")[8], "Home | News | Sport");

    // Deterministic: the same input gives the same model, byte for byte.
    let again = dir.join("again.json");
    train(&warc, &manifest, &again, &["--folds", "0"]);
    let first: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&model).unwrap()).unwrap();
    let second: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&again).unwrap()).unwrap();
    assert_eq!(first["trees"], second["trees"]);
    assert_eq!(first["base_score"], second["base_score"]);

    // `clean` with the model: the story stays, the related list and the menu go.
    let (_, html, _) = page(40, 2);
    let page_path = dir.join("page.html");
    std::fs::write(&page_path, html).unwrap();
    let out = stencil()
        .args(["clean", "--content-model"])
        .arg(&model)
        .arg(&page_path)
        .output()
        .unwrap();
    let cleaned = String::from_utf8_lossy(&out.stdout).to_string();
    check(out);
    assert!(
        cleaned.contains("Paragraph 3 of story 2 on site 40"),
        "{cleaned}"
    );
    assert!(!cleaned.contains("Read also"), "{cleaned}");
    assert!(!cleaned.contains("Sport"), "{cleaned}");

    // A model for other features is refused with a message, not used.
    let mut broken = first.clone();
    broken["features"][0] = "renamed".into();
    let broken_path = dir.join("broken.json");
    std::fs::write(&broken_path, broken.to_string()).unwrap();
    let out = stencil()
        .args(["clean", "--content-model"])
        .arg(&broken_path)
        .arg(&page_path)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("retrain"));
}

#[test]
fn held_out_pages_can_be_judged_as_if_their_crawl_held_them_alone() {
    // Six pages a host: enough for site-level statistics, so the menus and footers are
    // site-level templates, which the content features and calls read.
    let dir = scratch("held-out-alone");
    let (warc, manifest) = gold_crawl_of(&dir, 6);
    let figures = |extra: &[&str]| {
        let (log, report) =
            held_out_report(&dir, &warc, &manifest, &[&["--folds", "3"], extra].concat());
        (log, report["all"]["macro_f1"].as_f64().unwrap())
    };
    // One cache file for both modes: it must never serve one mode's probabilities to the other.
    let cache = dir.join("held-out.json");
    let cache = cache.to_str().unwrap();
    let (log, with_evidence) = figures(&["--held-out-cache", cache]);
    assert!(
        log.contains("72 pages on hosts with site-level statistics; held out, 72 judged with them"),
        "{log}"
    );
    assert!(!log.contains("read from"), "{log}");
    let (log, alone) = figures(&["--held-out-alone", "--held-out-cache", cache]);
    assert!(
        log.contains("72 pages on hosts with site-level statistics; held out, 0 judged with them"),
        "{log}"
    );
    assert!(log.contains("computing anew"), "{log}");
    let (log, alone_again) = figures(&["--held-out-alone", "--held-out-cache", cache]);
    assert!(log.contains("held-out probabilities read from"), "{log}");
    assert_eq!(alone, alone_again);
    let (log, uncached) = figures(&[]);
    assert!(log.contains("72 judged with them"), "{log}");
    assert_eq!(with_evidence, uncached);
    // The folds are fitted with the evidence either way; without it at judging time the
    // synthetic stories are still told from the menus and related lists by their own text.
    assert!(with_evidence > 0.95, "held-out macro F1 {with_evidence}");
    assert!(alone > 0.95, "held-out macro F1 alone {alone}");
}

#[test]
fn each_source_can_be_judged_by_a_model_fitted_on_the_others() {
    let dir = scratch("hold-out-sources");
    let (warc, manifest) = gold_crawl(&dir);
    // Two data sets: hosts 0–5 and 6–11, the articles and listings of each.
    let text = std::fs::read_to_string(&manifest).unwrap();
    let relabelled: String = text
        .lines()
        .map(|line| {
            let host: Option<u32> = (line.split("://site").nth(1))
                .and_then(|rest| rest.split('.').next())
                .and_then(|h| h.parse().ok());
            match host {
                Some(h) => line.replace(
                    "\tsynthetic\t",
                    if h < 6 { "\tfirst\t" } else { "\tsecond\t" },
                ),
                None => line.to_string(),
            }
        })
        .map(|line| line + "\n")
        .collect();
    let two = dir.join("two.tsv");
    std::fs::write(&two, relabelled).unwrap();
    let (log, report) = held_out_report(&dir, &warc, &two, &["--hold-out-sources"]);
    // first is fold 0, second fold 1: 24 pages each, fitted on the other's 24.
    assert!(
        log.contains("fold 0: 24 pages held out, fitted on 24"),
        "{log}"
    );
    assert!(
        log.contains("fold 1: 24 pages held out, fitted on 24"),
        "{log}"
    );
    for source in ["first", "second"] {
        assert_eq!(report[source]["pages"], 24);
        let macro_f1 = report[source]["macro_f1"].as_f64().unwrap();
        assert!(macro_f1 > 0.9, "{source} held out: macro F1 {macro_f1}");
    }

    // One source alone leaves nothing to fit on: an error that says so, not a model of nothing.
    let nowhere = dir.join("unused.json");
    let stderr = refused(
        &warc,
        &manifest,
        &nowhere,
        &["--hold-out-sources", "--no-model"],
    );
    assert!(stderr.contains("leaves no page to fit on"), "{stderr}");

    // --without-features: a feature left out is never split on; a name that is no feature is
    // refused.
    let model = dir.join("without.json");
    train(
        &warc,
        &manifest,
        &model,
        &["--folds", "0", "--without-features", "log_chars,tag_p"],
    );
    let model: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&model).unwrap()).unwrap();
    let features: Vec<&str> = (model["features"].as_array().unwrap().iter())
        .map(|f| f.as_str().unwrap())
        .collect();
    let unused = [
        features.iter().position(|&f| f == "log_chars").unwrap(),
        features.iter().position(|&f| f == "tag_p").unwrap(),
    ];
    // The fit records what it left out; a fit without the option records nothing of it, as
    // the shipped model's file does not.
    let parameters = &model["training"]["parameters"];
    assert_eq!(
        parameters["without_features"],
        serde_json::json!(["log_chars", "tag_p"])
    );
    assert!(parameters.get("hold_out_sources").is_none(), "{parameters}");
    let mut splits = 0;
    for tree in model["trees"].as_array().unwrap() {
        let leaf = tree["leaf"].as_array().unwrap();
        let feature = tree["feature"].as_array().unwrap();
        for (is_leaf, f) in leaf.iter().zip(feature) {
            if is_leaf == false {
                splits += 1;
                let f = f.as_u64().unwrap() as usize;
                assert!(!unused.contains(&f), "a split on {}", features[f]);
            }
        }
    }
    assert!(splits > 0, "the trees split on the other features");
    let stderr = refused(
        &warc,
        &manifest,
        &nowhere,
        &["--folds", "0", "--without-features", "log_charz"],
    );
    assert!(stderr.contains("no feature is named log_charz"), "{stderr}");
}

#[test]
fn pages_carry_the_content_view_beside_the_template_view() {
    let dir = scratch("content-columns");
    let files = crawl(&dir, 1);
    let out = dir.join("out");
    check(
        stencil()
            .arg("run")
            .args(&files)
            .arg("--out")
            .arg(&out)
            .args(["--min-training-hosts", "2"])
            .output()
            .unwrap(),
    );
    let rows = common::rows(&out, "pages");
    assert!(!rows.is_empty());
    let batch = read_pages(&out);
    let content = batch
        .iter()
        .filter_map(|(c, _, _, _)| *c)
        .collect::<Vec<_>>();
    for (fraction, chars, text_chars, cleaned) in &batch {
        if let Some(f) = fraction {
            assert!((0.0..=1.0).contains(f), "{f}");
        }
        assert!(
            *chars <= u64::from(*text_chars) + 1,
            "{chars} > {text_chars}"
        );
        // Cleaned text is the content blocks' text.
        assert_eq!(
            *chars == 0,
            cleaned.trim().is_empty(),
            "{chars}: {cleaned:?}"
        );
    }
    let mean = content.iter().sum::<f64>() / content.len() as f64;
    assert!(mean > 0.05 && mean < 0.95, "mean content fraction {mean}");
}

/// The shipped model learned prose from English pages. A Chinese news page, written without
/// spaces between words and with full-width punctuation, must still keep its story whole and
/// leave its menus, related links, ranking and footer out. (On a page this well marked up the
/// markup decides, whatever `content::blocks` counts as words and stops in such scripts;
/// docs/evaluation.md, "scripts written without spaces", measures the rest.)
#[test]
fn a_chinese_news_page_keeps_its_story_and_leaves_its_menus() {
    let dir = scratch("content-chinese");
    let story = [
        "记者从有关部门获悉，经过多年的综合治理，长江流域的生态环境质量持续改善。今年前十个月，长江干流水质连续保持在二类标准，重点支流的水质也有明显提升。",
        "据介绍，沿江各地加大了对工业污染和农业面源污染的治理力度，关停和搬迁了一批排污企业，同时推进城镇污水处理设施建设。专家表示，这些措施对于恢复水生生物多样性起到了重要作用。",
        "在湖北、江西等地，江豚的数量近年来稳中有升。渔民转产上岸后，许多人参与到巡护和监测工作中，成为保护长江的新力量。当地政府还为他们提供了技能培训和就业帮扶。",
        "下一步，有关部门将继续完善流域协调机制，加强跨区域联合执法，推动长江经济带实现高质量发展。",
    ];
    let links = |items: &[&str]| -> String {
        items
            .iter()
            .enumerate()
            .map(|(k, t)| format!("<li><a href=/a/{k}.html>{t}</a></li>"))
            .collect()
    };
    let html = format!(
        "<!DOCTYPE html><html lang=zh-CN><head><meta charset=utf-8>\
         <title>长江流域生态保护取得新进展 - 新闻中心</title></head><body>\
         <header class=site-header><a href=/>新闻中心</a><nav class=main-nav><ul>{}</ul></nav></header>\
         <div class=main><div class=breadcrumb><a href=/>首页</a> &gt; <a href=/guonei/>国内</a> &gt; 正文</div>\
         <h1>长江流域生态保护取得新进展</h1><div class=meta>2026年11月20日 来源：本报记者</div>\
         <div class=article-content>{}</div>\
         <div class=share>分享到：<a href=#>微信</a> <a href=#>微博</a></div>\
         <div class=related><h3>相关新闻</h3><ul>{}</ul></div></div>\
         <aside class=sidebar><h3>热门排行</h3><ol>{}</ol></aside>\
         <footer class=site-footer><p>关于我们 | 联系方式 | 版权声明 | 网站地图</p></footer></body></html>",
        links(&["首页", "国内", "国际", "财经", "科技", "体育", "文化"]),
        story.iter().map(|p| format!("<p>{p}</p>")).collect::<String>(),
        links(&["黄河流域水资源保护工作会议召开", "多地启动冬季大气污染防治行动", "全国森林覆盖率稳步提高", "湿地保护条例正式实施"]),
        links(&["今年双十一消费数据出炉", "新能源汽车销量创新高", "高铁新线路开通运营"]),
    );
    let page = dir.join("zh.html");
    std::fs::write(&page, html).unwrap();
    let out = stencil().arg("clean").arg(&page).output().unwrap();
    check(out.clone());
    let cleaned = String::from_utf8(out.stdout).unwrap();
    for paragraph in story {
        assert!(cleaned.contains(paragraph), "story lost: {cleaned}");
    }
    for boilerplate in [
        "财经",
        "相关新闻",
        "湿地保护条例",
        "热门排行",
        "高铁新线路",
        "网站地图",
        "分享到",
    ] {
        assert!(
            !cleaned.contains(boilerplate),
            "{boilerplate} kept: {cleaned}"
        );
    }
}

/// (content_text_fraction, main_content_chars, text_chars, cleaned_text) of every page.
fn read_pages(out: &Path) -> Vec<(Option<f64>, u64, u32, String)> {
    use arrow_array::{Array, Float64Array, StringArray, UInt32Array, UInt64Array};
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    let mut rows = Vec::new();
    for entry in std::fs::read_dir(out.join("pages")).unwrap() {
        let file = std::fs::File::open(entry.unwrap().path()).unwrap();
        for batch in ParquetRecordBatchReaderBuilder::try_new(file)
            .unwrap()
            .build()
            .unwrap()
        {
            let batch = batch.unwrap();
            let col = |name: &str| batch.column(batch.schema().index_of(name).unwrap()).clone();
            let fraction = col("content_text_fraction");
            let fraction = fraction.as_any().downcast_ref::<Float64Array>().unwrap();
            let chars = col("main_content_chars");
            let chars = chars.as_any().downcast_ref::<UInt64Array>().unwrap();
            let text = col("text_chars");
            let text = text.as_any().downcast_ref::<UInt32Array>().unwrap();
            let cleaned = col("cleaned_text");
            let cleaned = cleaned.as_any().downcast_ref::<StringArray>().unwrap();
            for i in 0..batch.num_rows() {
                rows.push((
                    (!fraction.is_null(i)).then(|| fraction.value(i)),
                    chars.value(i),
                    text.value(i),
                    cleaned.value(i).to_string(),
                ));
            }
        }
    }
    rows
}
