//! What the held-out calls come to: each page's cleaned text and its overlap with the gold,
//! the report per source and page type, and `--blocks`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use stencil_operators::dom::subtree::Subtree;
use stencil_operators::page_models::content::align::TokenOverlap;
use stencil_operators::page_models::content::{self, Context, Rule};

use super::examples::Example;

/// A held-out judgement of one page.
pub(super) struct Judged {
    pub(super) text: String,
    pub(super) overlap: TokenOverlap,
    /// The content call of every block.
    pub(super) content: Vec<bool>,
}

/// `--blocks`: one TSV row per block of every gold page.
pub(super) fn write_blocks(
    path: &Path,
    examples: &[Example],
    probabilities: &[Vec<f32>],
    judged: &[Judged],
) -> Result<(), String> {
    let mut out = String::from(
        "url\tsource\tpage_type\tblock\tchars\tprobability\tcontent\tgold_share\ttext\n",
    );
    for ((example, probability), judged) in examples.iter().zip(probabilities).zip(judged) {
        let mut texts = vec![String::new(); example.blocks.len()];
        // White space between a block's text nodes lives in nodes of no block (they hold no
        // word): a space stands for them, or `<span>def</span> <span>f</span>` reads "deff".
        let mut gap = false;
        for (node, &b) in example.blocks.of_node.iter().enumerate() {
            let Some(text) = example.dom.visible_text(node) else {
                continue;
            };
            match texts.get_mut(b as usize) {
                Some(block) => {
                    if gap && !block.is_empty() {
                        block.push(' ');
                    }
                    block.push_str(text);
                    gap = false;
                }
                None => gap = true,
            }
        }
        for (b, text) in texts.iter().enumerate() {
            let text: String = text
                .chars()
                .map(|c| {
                    if c == '\t' || c == '\n' || c == '\r' {
                        ' '
                    } else {
                        c
                    }
                })
                .collect();
            let _ = writeln!(
                out,
                "{}\t{}\t{}\t{b}\t{}\t{:.4}\t{}\t{:.3}\t{}",
                example.url,
                example.source,
                example.page_type,
                example.blocks.stats[b].chars,
                probability[b],
                u8::from(judged.content[b]),
                example.labels[b].share(),
                text.trim()
            );
        }
    }
    std::fs::write(path, out).map_err(|e| format!("{}: {e}", path.display()))
}

pub(super) fn judged(
    example: &Example,
    sums: &[Subtree],
    probability: &[f32],
    rule: Rule,
) -> Judged {
    let content = content::decide(
        &example.dom,
        sums,
        &example.blocks,
        probability,
        0.5,
        rule,
        Context {
            site_inside: example.site_inside.as_deref(),
            url: &example.url,
            ..Context::default()
        },
    );
    let text = content::cleaned_text(&example.dom, &example.blocks, &content);
    let overlap = TokenOverlap::of(&text, &example.gold);
    Judged {
        text,
        overlap,
        content,
    }
}

/// Held-out figures of one group of pages.
#[derive(Default, Clone, Copy)]
pub(super) struct Figures {
    pub(super) pages: usize,
    pub(super) micro: TokenOverlap,
    pub(super) f1_sum: f64,
    pub(super) emptied: usize,
}

impl Figures {
    pub(super) fn add(&mut self, overlap: TokenOverlap) {
        self.pages += 1;
        self.micro.add(overlap);
        self.f1_sum += overlap.f1();
        if overlap.predicted == 0 && overlap.gold > 0 {
            self.emptied += 1;
        }
    }

    pub(super) fn macro_f1(&self) -> f64 {
        self.f1_sum / self.pages.max(1) as f64
    }
}

pub(super) struct Report {
    pub(super) groups: BTreeMap<String, Figures>,
}

impl Report {
    pub(super) fn of(examples: &[Example], judged: &[Judged]) -> Report {
        let mut groups: BTreeMap<String, Figures> = BTreeMap::new();
        for (example, judged) in examples.iter().zip(judged) {
            groups.entry("all".into()).or_default().add(judged.overlap);
            groups
                .entry(example.source.clone())
                .or_default()
                .add(judged.overlap);
            if !example.page_type.is_empty() {
                groups
                    .entry(format!("{}/{}", example.source, example.page_type))
                    .or_default()
                    .add(judged.overlap);
            }
        }
        Report { groups }
    }

    /// The report of rule `rule` over pages held out `how`.
    pub(super) fn table_for(&self, how: &str, rule: &str) -> String {
        let mut out = format!(
            "held out ({how}), {rule}\n{:<30} pages  micro P  micro R  micro F1  macro F1  gold lost  emptied\n",
            "group"
        );
        for (name, f) in &self.groups {
            let _ = writeln!(
                out,
                "{name:<30} {:>5}  {:>7.3}  {:>7.3}  {:>8.3}  {:>8.3}  {:>9.3}  {:>7}",
                f.pages,
                f.micro.precision(),
                f.micro.recall(),
                f.micro.f1(),
                f.macro_f1(),
                1.0 - f.micro.recall(),
                f.emptied
            );
        }
        out
    }

    pub(super) fn json(&self) -> serde_json::Value {
        let groups: serde_json::Map<String, serde_json::Value> = self
            .groups
            .iter()
            .map(|(name, f)| {
                (
                    name.clone(),
                    serde_json::json!({
                        "pages": f.pages,
                        "micro_precision": f.micro.precision(),
                        "micro_recall": f.micro.recall(),
                        "micro_f1": f.micro.f1(),
                        "macro_f1": f.macro_f1(),
                        "emptied": f.emptied,
                    }),
                )
            })
            .collect();
        serde_json::Value::Object(groups)
    }
}
