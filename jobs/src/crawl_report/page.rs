//! The report's HTML: a table of key figures, then one section per chart, each an inline
//! `<svg>` or, where its data is absent, a sentence saying so. A small inline style sheet; no
//! script, no external resource.

use std::fmt::Write as _;

use super::charts::{self, Bar};
use super::figures::{stages, Night};
use super::Report;

/// Bars in the records-by-outcome chart.
const OUTCOME_BARS: usize = 16;

const STYLE: &str = "body{font-family:sans-serif;margin:0;background:#f6f7f9;color:#222}\
main{max-width:900px;margin:0 auto;padding:16px 20px 40px}\
h1{font-size:1.6em;margin:0.4em 0}h2{font-size:1.2em;margin:1.6em 0 0.3em}\
p{line-height:1.4;margin:0.3em 0 0.6em}code{font-size:0.95em}\
section{background:#fff;border:1px solid #dde;border-radius:6px;padding:8px 14px;margin:14px 0}\
section svg{display:block;max-width:100%;height:auto}\
table.key{border-collapse:collapse;background:#fff;border:1px solid #dde}\
table.key th,table.key td{padding:4px 12px;border-bottom:1px solid #eef;text-align:left}\
table.key td{text-align:right;font-variant-numeric:tabular-nums}\
p.empty{color:#a33;font-style:italic}";

/// The text of `s` safe inside HTML elements and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A section's chart, or why there is none.
enum Body {
    Chart(String),
    Empty(String),
}

struct Section {
    id: &'static str,
    title: &'static str,
    text: String,
    body: Body,
}

/// A key figure: its element id, its label, the text shown and the exact value (for readers
/// that check the page against the tables).
struct Key {
    id: &'static str,
    label: String,
    shown: String,
    value: String,
}

fn count(id: &'static str, label: &str, n: u64) -> Key {
    Key {
        id,
        label: label.to_string(),
        shown: n.to_string(),
        value: n.to_string(),
    }
}

fn share(id: &'static str, label: &str, share: Option<f64>) -> Key {
    Key {
        id,
        label: label.to_string(),
        shown: share.map_or("–".to_string(), |s| format!("{:.1}%", s * 100.0)),
        value: share.map_or(String::new(), |s| s.to_string()),
    }
}

fn keys(report: &Report) -> Vec<Key> {
    let p = &report.pages;
    let mut keys = vec![count("key-pages", "pages (rows of pages)", p.pages)];
    if report.has_hosts {
        keys.push(count(
            "key-hosts",
            "hosts (rows of hosts)",
            report.hosts.hosts,
        ));
        keys.push(count(
            "key-site-level-hosts",
            "hosts with site-level statistics",
            report.hosts.site_level,
        ));
    }
    if report.has_records {
        let o = &report.outcomes;
        keys.push(count("key-records", "records (rows of records)", o.records));
        keys.push(count("key-skipped", "records skipped", o.of("skipped")));
        keys.push(count("key-errors", "records in error", o.of("error")));
    }
    keys.push(share(
        "key-site-share",
        &format!(
            "templated share (site-level), mean over {} pages",
            p.site_mean.count
        ),
        p.site_mean.value(),
    ));
    keys.push(share(
        "key-template-chars",
        "templated share (site-level) of all visible text",
        p.template_char_share(),
    ));
    keys.push(share(
        "key-page-share",
        &format!(
            "templated share (page-level classifier), mean over {} pages",
            p.page_mean.count
        ),
        p.page_mean.value(),
    ));
    if let Ok(run) = &report.run_json {
        if let Some(seconds) = run.get("seconds").and_then(|s| s.as_f64()) {
            keys.push(Key {
                id: "key-seconds",
                label: "run time (run.json)".to_string(),
                shown: format!("{seconds:.1} s"),
                value: seconds.to_string(),
            });
        }
    }
    keys
}

fn sections(report: &Report, top_hosts: usize) -> Result<Vec<Section>, String> {
    let p = &report.pages;
    let no_pages = || Body::Empty("The pages table has no rows.".to_string());
    let mut out = Vec::new();

    let body = if p.site_share.counted() + p.page_share.counted() == 0 {
        no_pages()
    } else {
        Body::Chart(charts::share_histograms(
            &[("site-level", &p.site_share), ("page-level", &p.page_share)],
            "templated share of the page's visible text",
        )?)
    };
    out.push(Section {
        id: "chart-page-share",
        title: "Templated share over pages",
        text: format!(
            "How much of each page's visible text lies in templates: site-level \
             (<code>site_template_text_fraction</code>, the site's templates) and page-level \
             (<code>template_text_fraction</code>, the smoothed classifier). Bins of 5%; pages \
             without text or without site-level statistics are left out ({} and {} pages).",
            p.site_share.missing, p.page_share.missing
        ),
        body,
    });

    let h = &report.hosts;
    let body = if !report.has_hosts {
        Body::Empty("OUT has no hosts table.".to_string())
    } else if h.share.counted() == 0 {
        Body::Empty("No host has a mean templated share.".to_string())
    } else {
        Body::Chart(charts::share_histograms(
            &[("hosts", &h.share)],
            "the host's mean templated share",
        )?)
    };
    out.push(Section {
        id: "chart-host-share",
        title: "Templated share over hosts",
        text: format!(
            "Each host's <code>mean_templated_fraction</code> (the mean over its pages with \
             text of the share inside its site templates). {} of {} hosts have one.",
            h.share.counted(),
            h.hosts
        ),
        body,
    });

    let top = p.top_hosts(top_hosts);
    let body = if top.is_empty() {
        if p.pages == 0 {
            no_pages()
        } else {
            Body::Empty("No page has text inside a site template.".to_string())
        }
    } else {
        let items: Vec<Bar> = top
            .iter()
            .map(|(host, v)| Bar {
                name: clip(host, 48),
                value: v.template_chars as f64,
                note: format!(
                    "{} ({:.0}% of its text)",
                    charts::short(v.template_chars as f64),
                    v.template_chars as f64 / v.text_chars.max(1) as f64 * 100.0
                ),
            })
            .collect();
        Body::Chart(charts::bars(
            &items,
            "visible characters inside site templates",
        )?)
    };
    out.push(Section {
        id: "chart-top-hosts",
        title: "Hosts with the most template text",
        text: format!(
            "The {} hosts with the most visible characters inside their site templates, over \
             all their pages (a page's characters times its site-level share), of {} hosts \
             with pages.",
            top.len(),
            p.hosts.len()
        ),
        body,
    });

    let body = match p.size_share.occupied() {
        None => {
            if p.pages == 0 {
                no_pages()
            } else {
                Body::Empty("No page has a site-level templated share.".to_string())
            }
        }
        Some(_) => Body::Chart(charts::size_share(&p.size_share)?),
    };
    out.push(Section {
        id: "chart-size-share",
        title: "Templated share against page size",
        text: format!(
            "Pages binned by HTML size (a quarter of a decade a column, from {}) and by \
             site-level templated share (5% a row); darker cells hold more pages (log scale, \
             densest: {} pages). The line is each size bin's mean share.",
            charts::size_bin_label(p.size_share.occupied().map_or(0, |o| o.0)),
            p.size_share.densest()
        ),
        body,
    });

    let o = &report.outcomes;
    let body = if !report.has_records {
        Body::Empty("OUT has no records table.".to_string())
    } else if o.records == 0 {
        Body::Empty("The records table has no rows.".to_string())
    } else {
        let total = o.records.max(1) as f64;
        let items: Vec<Bar> = o
            .bars(OUTCOME_BARS)
            .into_iter()
            .map(|(label, n)| Bar {
                name: clip(&label, 48),
                value: n as f64,
                note: format!("{n} ({:.1}%)", n as f64 / total * 100.0),
            })
            .collect();
        Body::Chart(charts::bars(&items, "records")?)
    };
    out.push(Section {
        id: "chart-outcomes",
        title: "Records by outcome",
        text: format!(
            "Every input record and unreadable stretch ({} rows of <code>records</code>) by \
             outcome, and by skip reason or error kind.",
            o.records
        ),
        body,
    });

    let body = match &report.run_json {
        Err(why) => Body::Empty(format!("No stage times: {}.", escape(why))),
        Ok(run) => {
            let stages = stages(run);
            if stages.is_empty() {
                Body::Empty("run.json lists no stages.".to_string())
            } else {
                let items: Vec<Bar> = stages
                    .iter()
                    .map(|s| Bar {
                        name: clip(&s.stage, 40),
                        value: s.html_mb_per_s,
                        note: format!("{:.1} MB/s, {:.2} s", s.html_mb_per_s, s.seconds),
                    })
                    .collect();
                Body::Chart(charts::bars(&items, "MB of HTML per second")?)
            }
        }
    };
    out.push(Section {
        id: "chart-stages",
        title: "Throughput per stage",
        text: "Megabytes of HTML per second of each stage, from <code>run.json</code> (the \
               slowest worker's seconds), in stage order."
            .to_string(),
        body,
    });

    if let Some(nights) = &report.nights {
        out.push(nights_section(nights)?);
    }
    Ok(out)
}

fn nights_section(nights: &[Night]) -> Result<Section, String> {
    let with_share = nights.iter().filter(|n| n.share.count > 0).count();
    let body = if with_share == 0 {
        Body::Empty("No night of the state has a host with a templated share.".to_string())
    } else {
        Body::Chart(charts::nights(nights)?)
    };
    let listed: Vec<String> = nights
        .iter()
        .map(|n| {
            format!(
                "night {}: {} hosts, {}",
                n.night,
                n.hosts,
                n.share
                    .value()
                    .map_or("no share".to_string(), |s| format!("{:.1}%", s * 100.0))
            )
        })
        .collect();
    Ok(Section {
        id: "chart-nights",
        title: "Templated share over nights",
        text: format!(
            "From the state (<code>--state</code>): for each generation it keeps (a night keeps \
             its own and the one it built on), the mean templated share of the hosts that had \
             pages that night ({}).",
            listed.join("; ")
        ),
        body,
    })
}

/// At most `max` characters of `s`, `…` where cut.
fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// The whole page.
pub fn render(report: &Report, top_hosts: usize) -> Result<String, String> {
    let mut html = String::new();
    let out = escape(&report.out.display().to_string());
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>Stencil report: {out}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>\n\
         <h1>Stencil report</h1>\n<p>The tables of <code>{out}</code>, written by {}.</p>\n",
        report
            .run_json
            .as_ref()
            .ok()
            .and_then(|r| r.get("stencil"))
            .and_then(|v| v.as_str())
            .map_or("Stencil (no run.json)".to_string(), |v| format!(
                "Stencil {}",
                escape(v)
            )),
    );
    html.push_str("<table class=\"key\">\n");
    for key in keys(report) {
        let _ = writeln!(
            html,
            "<tr><th>{}</th><td id=\"{}\" data-value=\"{}\">{}</td></tr>",
            escape(&key.label),
            key.id,
            escape(&key.value),
            escape(&key.shown)
        );
    }
    html.push_str("</table>\n");
    for section in sections(report, top_hosts)? {
        let _ = write!(
            html,
            "<section id=\"{}\">\n<h2>{}</h2>\n<p>{}</p>\n",
            section.id, section.title, section.text
        );
        match section.body {
            Body::Chart(svg) => html.push_str(&svg),
            Body::Empty(why) => {
                let _ = writeln!(html, "<p class=\"empty\">{why}</p>");
            }
        }
        html.push_str("</section>\n");
    }
    html.push_str("</main>\n</body>\n</html>\n");
    Ok(html)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_covers_markup_and_quotes() {
        assert_eq!(escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
    }

    #[test]
    fn clip_cuts_long_labels_on_characters() {
        assert_eq!(clip("abc", 3), "abc");
        assert_eq!(clip("ééééé", 3), "éé…");
    }
}
