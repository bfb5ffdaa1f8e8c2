//! What the report's charts show, computed from rows: histograms, the hosts with the most
//! template text, templated share binned against page size, records by outcome, stage
//! throughput and the nights of a state. Plain data in, plain data out; each aggregate keeps
//! a bounded amount whatever the number of rows, except [`PageFigures`]' per-host volumes,
//! which grow with the hosts (not the pages).

use std::collections::{BTreeMap, HashMap};

/// Bins of a histogram of shares in [0, 1].
pub const SHARE_BINS: usize = 20;

/// A histogram of shares in [0, 1] in equal bins (1 falls in the last), and the rows that had
/// no share (null or not a number).
#[derive(Clone, Debug, PartialEq)]
pub struct Histogram {
    pub bins: Vec<u64>,
    pub missing: u64,
}

impl Histogram {
    pub fn new(bins: usize) -> Histogram {
        Histogram {
            bins: vec![0; bins.max(1)],
            missing: 0,
        }
    }

    pub fn add(&mut self, share: Option<f64>) {
        match share.filter(|s| s.is_finite()) {
            Some(share) => {
                let bin = share_bin(share, self.bins.len());
                self.bins[bin] += 1;
            }
            None => self.missing += 1,
        }
    }

    /// The rows counted in a bin.
    pub fn counted(&self) -> u64 {
        self.bins.iter().sum()
    }
}

/// The bin of `share` (clamped to [0, 1]) among `bins` equal bins.
fn share_bin(share: f64, bins: usize) -> usize {
    let bin = (share.clamp(0.0, 1.0) * bins as f64).floor() as usize;
    bin.min(bins - 1)
}

/// A mean over the rows that have a value.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Mean {
    pub sum: f64,
    pub count: u64,
}

impl Mean {
    pub fn add(&mut self, value: Option<f64>) {
        if let Some(value) = value.filter(|v| v.is_finite()) {
            self.sum += value;
            self.count += 1;
        }
    }

    pub fn value(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum / self.count as f64)
    }
}

/// A host's template volume: its pages, their visible characters and the characters inside
/// its site templates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HostVolume {
    pub pages: u64,
    pub text_chars: u64,
    pub template_chars: u64,
}

/// Quarter-decade bins of page size (HTML bytes): bin b holds sizes in [10^(b/4), 10^((b+1)/4)).
pub const SIZE_BINS_PER_DECADE: u32 = 4;
/// Sizes up to 10^12 bytes; larger ones fall in the last bin.
pub const SIZE_BINS: usize = 12 * SIZE_BINS_PER_DECADE as usize;

/// Templated share against page size, as 2-D bins (size bin × share bin) with the mean share
/// of each size bin.
#[derive(Clone, Debug, PartialEq)]
pub struct SizeShare {
    /// `cells[size][share]`: pages of that size bin and share bin.
    pub cells: Vec<Vec<u64>>,
    pub means: Vec<Mean>,
}

impl Default for SizeShare {
    fn default() -> SizeShare {
        SizeShare {
            cells: vec![vec![0; SHARE_BINS]; SIZE_BINS],
            means: vec![Mean::default(); SIZE_BINS],
        }
    }
}

impl SizeShare {
    pub fn add(&mut self, html_bytes: u64, share: Option<f64>) {
        let Some(share) = share.filter(|s| s.is_finite()) else {
            return;
        };
        let size = size_bin(html_bytes);
        self.cells[size][share_bin(share, SHARE_BINS)] += 1;
        self.means[size].add(Some(share.clamp(0.0, 1.0)));
    }

    /// The size bins that hold a page: first and last (inclusive).
    pub fn occupied(&self) -> Option<(usize, usize)> {
        let used = |b: &usize| self.means[*b].count > 0;
        let first = (0..SIZE_BINS).find(used)?;
        let last = (0..SIZE_BINS).rev().find(used)?;
        Some((first, last))
    }

    /// The largest count of a cell.
    pub fn densest(&self) -> u64 {
        self.cells.iter().flatten().copied().max().unwrap_or(0)
    }
}

/// The size bin of a page of `bytes` bytes (0 and 1 byte both in bin 0).
pub fn size_bin(bytes: u64) -> usize {
    if bytes <= 1 {
        return 0;
    }
    let bin = ((bytes as f64).log10() * SIZE_BINS_PER_DECADE as f64).floor() as usize;
    bin.min(SIZE_BINS - 1)
}

/// The smallest size (bytes) of size bin `bin`.
pub fn size_bin_start(bin: usize) -> f64 {
    10f64.powf(bin as f64 / SIZE_BINS_PER_DECADE as f64)
}

/// What the `pages` table shows: counts, the two templated shares (site-level: inside the
/// site's templates, SiteLevel(θ) or the `--method` in use; page-level: the smoothed
/// classifier), their distributions, template volume by host and share against size.
#[derive(Clone, Debug)]
pub struct PageFigures {
    pub pages: u64,
    pub site_share: Histogram,
    pub page_share: Histogram,
    pub site_mean: Mean,
    pub page_mean: Mean,
    /// Visible characters of every page, and those inside site templates (over pages with a
    /// site-level share).
    pub text_chars: u64,
    pub template_chars: u64,
    pub hosts: HashMap<String, HostVolume>,
    pub size_share: SizeShare,
}

impl Default for PageFigures {
    fn default() -> PageFigures {
        PageFigures {
            pages: 0,
            site_share: Histogram::new(SHARE_BINS),
            page_share: Histogram::new(SHARE_BINS),
            site_mean: Mean::default(),
            page_mean: Mean::default(),
            text_chars: 0,
            template_chars: 0,
            hosts: HashMap::new(),
            size_share: SizeShare::default(),
        }
    }
}

/// One row of `pages`, the columns the report reads.
#[derive(Clone, Copy, Debug)]
pub struct PageRow<'a> {
    pub host: &'a str,
    pub html_bytes: u64,
    pub text_chars: u32,
    pub page_share: Option<f64>,
    pub site_share: Option<f64>,
}

impl PageFigures {
    pub fn add(&mut self, row: PageRow) {
        self.pages += 1;
        self.site_share.add(row.site_share);
        self.page_share.add(row.page_share);
        self.site_mean.add(row.site_share);
        self.page_mean.add(row.page_share);
        self.size_share.add(row.html_bytes, row.site_share);
        let chars = u64::from(row.text_chars);
        let templated = row
            .site_share
            .filter(|s| s.is_finite())
            .map_or(0, |s| (s.clamp(0.0, 1.0) * chars as f64).round() as u64);
        self.text_chars += chars;
        self.template_chars += templated;
        // Look up before inserting: most rows are of a host already seen.
        let volume = match self.hosts.get_mut(row.host) {
            Some(volume) => volume,
            None => self.hosts.entry(row.host.to_string()).or_default(),
        };
        volume.pages += 1;
        volume.text_chars += chars;
        volume.template_chars += templated;
    }

    /// Visible characters inside site templates over all visible characters.
    pub fn template_char_share(&self) -> Option<f64> {
        (self.text_chars > 0).then(|| self.template_chars as f64 / self.text_chars as f64)
    }

    /// The `k` hosts with the most characters inside templates (ties by name), hosts without
    /// any left out.
    pub fn top_hosts(&self, k: usize) -> Vec<(String, HostVolume)> {
        let mut hosts: Vec<(&String, &HostVolume)> = self
            .hosts
            .iter()
            .filter(|(_, v)| v.template_chars > 0)
            .collect();
        let order = |a: &(&String, &HostVolume), b: &(&String, &HostVolume)| {
            b.1.template_chars
                .cmp(&a.1.template_chars)
                .then_with(|| a.0.cmp(b.0))
        };
        if hosts.len() > k {
            hosts.select_nth_unstable_by(k, order);
            hosts.truncate(k);
        }
        hosts.sort_unstable_by(order);
        hosts
            .into_iter()
            .map(|(host, volume)| (host.clone(), *volume))
            .collect()
    }
}

/// What the `hosts` table shows: hosts, those with site-level statistics, and the
/// distribution of their mean templated share.
#[derive(Clone, Debug)]
pub struct HostFigures {
    pub hosts: u64,
    pub site_level: u64,
    pub share: Histogram,
}

impl Default for HostFigures {
    fn default() -> HostFigures {
        HostFigures {
            hosts: 0,
            site_level: 0,
            share: Histogram::new(SHARE_BINS),
        }
    }
}

impl HostFigures {
    pub fn add(&mut self, site_level: bool, mean_templated_fraction: Option<f64>) {
        self.hosts += 1;
        self.site_level += u64::from(site_level);
        self.share.add(mean_templated_fraction);
    }
}

/// Distinct (outcome, reason) pairs kept; rows of any further pair count as `other`.
pub const OUTCOME_KINDS: usize = 64;

/// `records` by outcome and reason.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Outcomes {
    pub records: u64,
    pub counts: BTreeMap<(String, Option<String>), u64>,
}

impl Outcomes {
    pub fn add(&mut self, outcome: &str, reason: Option<&str>) {
        self.records += 1;
        let key = (outcome.to_string(), reason.map(str::to_string));
        if let Some(count) = self.counts.get_mut(&key) {
            *count += 1;
        } else if self.counts.len() < OUTCOME_KINDS {
            self.counts.insert(key, 1);
        } else {
            *self.counts.entry(("other".to_string(), None)).or_default() += 1;
        }
    }

    /// Rows of one outcome.
    pub fn of(&self, outcome: &str) -> u64 {
        self.counts
            .iter()
            .filter(|((o, _), _)| o == outcome)
            .map(|(_, n)| n)
            .sum()
    }

    /// At most `k` bars, labelled `outcome` or `outcome: reason`, largest first (ties by
    /// label); what does not fit is one last bar, `other`.
    pub fn bars(&self, k: usize) -> Vec<(String, u64)> {
        let mut bars: Vec<(String, u64)> = self
            .counts
            .iter()
            .map(|((outcome, reason), n)| {
                let label = match reason {
                    Some(reason) => format!("{outcome}: {reason}"),
                    None => outcome.clone(),
                };
                (label, *n)
            })
            .collect();
        bars.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        if bars.len() > k.max(1) {
            let rest: u64 = bars[k.max(1) - 1..].iter().map(|(_, n)| n).sum();
            bars.truncate(k.max(1) - 1);
            bars.push(("other".to_string(), rest));
        }
        bars
    }
}

/// One stage of `run.json`'s `stages`.
#[derive(Clone, Debug, PartialEq)]
pub struct Stage {
    pub stage: String,
    pub seconds: f64,
    pub html_mb_per_s: f64,
}

/// The stages of a `run.json`, in its order; entries without a name or figures left out.
pub fn stages(run_json: &serde_json::Value) -> Vec<Stage> {
    let Some(stages) = run_json.get("stages").and_then(|s| s.as_array()) else {
        return Vec::new();
    };
    stages
        .iter()
        .filter_map(|stage| {
            Some(Stage {
                stage: stage.get("stage")?.as_str()?.to_string(),
                seconds: stage.get("seconds")?.as_f64().filter(|s| s.is_finite())?,
                html_mb_per_s: stage
                    .get("html_mb_per_s")?
                    .as_f64()
                    .filter(|s| s.is_finite())?,
            })
        })
        .collect()
}

/// One night of a state: the hosts that had pages that night, and their mean templated share
/// (each host's `mean_templated_fraction` that night, hosts without text left out).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Night {
    pub night: u32,
    pub hosts: u64,
    pub share: Mean,
}

impl Night {
    pub fn new(night: u32) -> Night {
        Night {
            night,
            ..Night::default()
        }
    }

    /// One row of the state's `hosts` in that night's generation: counted when the host's
    /// last night is this one.
    pub fn add(&mut self, last_night: u32, templated_fraction: Option<f64>) {
        if last_night == self.night {
            self.hosts += 1;
            self.share.add(templated_fraction);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(host: &str, bytes: u64, chars: u32, site: Option<f64>) -> PageRow<'_> {
        PageRow {
            host,
            html_bytes: bytes,
            text_chars: chars,
            page_share: site.map(|s| s / 2.0),
            site_share: site,
        }
    }

    #[test]
    fn a_histogram_puts_the_ends_in_the_end_bins_and_counts_the_missing() {
        let mut h = Histogram::new(4);
        for share in [
            Some(0.0),
            Some(0.24),
            Some(0.25),
            Some(0.999),
            Some(1.0),
            Some(1.5),
        ] {
            h.add(share);
        }
        h.add(None);
        h.add(Some(f64::NAN));
        h.add(Some(-0.1));
        assert_eq!(h.bins, vec![3, 1, 0, 3]);
        assert_eq!(h.missing, 2);
        assert_eq!(h.counted(), 7);
    }

    #[test]
    fn page_figures_sum_template_volume_by_host_and_rank_the_hosts() {
        let mut f = PageFigures::default();
        f.add(page("a.example", 1000, 100, Some(0.5)));
        f.add(page("a.example", 1000, 100, Some(0.1)));
        f.add(page("b.example", 100_000, 1000, Some(0.2)));
        f.add(page("c.example", 10, 0, None));
        f.add(page("d.example", 10, 50, Some(0.0)));
        f.add(page("e.example", 10, 60, Some(1.0)));
        assert_eq!(f.pages, 6);
        assert_eq!(f.text_chars, 1310);
        assert_eq!(f.template_chars, 50 + 10 + 200 + 60);
        assert_eq!(f.site_share.missing, 1);
        assert_eq!(f.site_mean.count, 5);
        assert!((f.site_mean.value().unwrap() - 1.8 / 5.0).abs() < 1e-12);
        assert!((f.page_mean.value().unwrap() - 0.9 / 5.0).abs() < 1e-12);
        let top = f.top_hosts(2);
        let names: Vec<&str> = top.iter().map(|(h, _)| h.as_str()).collect();
        // a.example and e.example tie at 60 characters: the name decides.
        assert_eq!(names, ["b.example", "a.example"]);
        // Every host with template text, none without; a tie goes by name.
        let all: Vec<String> = f.top_hosts(10).into_iter().map(|(h, _)| h).collect();
        assert_eq!(all, ["b.example", "a.example", "e.example"]);
        assert_eq!(
            f.hosts["a.example"],
            HostVolume {
                pages: 2,
                text_chars: 200,
                template_chars: 60
            }
        );
        let mut g = PageFigures::default();
        g.add(page("y.example", 1, 10, Some(0.5)));
        g.add(page("x.example", 1, 10, Some(0.5)));
        let tied: Vec<String> = g.top_hosts(1).into_iter().map(|(h, _)| h).collect();
        assert_eq!(tied, ["x.example"]);
    }

    #[test]
    fn size_bins_are_quarter_decades_and_the_cells_count_every_page_with_a_share() {
        assert_eq!(size_bin(0), 0);
        assert_eq!(size_bin(1), 0);
        assert_eq!(size_bin(10), 4);
        assert_eq!(size_bin(17), 4);
        assert_eq!(size_bin(18), 5);
        assert_eq!(size_bin(1000), 12);
        assert_eq!(size_bin(u64::MAX), SIZE_BINS - 1);
        assert!((size_bin_start(12) - 1000.0).abs() < 1e-9);
        let mut s = SizeShare::default();
        assert_eq!(s.occupied(), None);
        s.add(1000, Some(0.5));
        s.add(1100, Some(0.7));
        s.add(100_000, Some(0.0));
        s.add(100_000, None);
        assert_eq!(s.occupied(), Some((12, 20)));
        assert_eq!(s.cells[12].iter().sum::<u64>(), 2);
        assert_eq!(s.cells[20][0], 1);
        assert_eq!(s.densest(), 1);
        assert!((s.means[12].value().unwrap() - 0.6).abs() < 1e-12);
        let cells: u64 = s.cells.iter().flatten().sum();
        assert_eq!(cells, 3);
    }

    #[test]
    fn outcomes_keep_their_reasons_and_fold_the_smallest_bars_into_other() {
        let mut o = Outcomes::default();
        for _ in 0..5 {
            o.add("page", None);
        }
        for _ in 0..3 {
            o.add("skipped", Some("not_html"));
        }
        o.add("skipped", Some("record_type"));
        o.add("error", Some("gzip_truncated"));
        assert_eq!(o.records, 10);
        assert_eq!(o.of("skipped"), 4);
        assert_eq!(
            o.bars(10),
            [
                ("page".to_string(), 5),
                ("skipped: not_html".to_string(), 3),
                ("error: gzip_truncated".to_string(), 1),
                ("skipped: record_type".to_string(), 1),
            ]
        );
        assert_eq!(
            o.bars(3),
            [
                ("page".to_string(), 5),
                ("skipped: not_html".to_string(), 3),
                ("other".to_string(), 2),
            ]
        );
        // Past OUTCOME_KINDS distinct pairs, further ones count as `other`.
        let mut many = Outcomes::default();
        for i in 0..OUTCOME_KINDS + 5 {
            many.add("error", Some(&format!("kind{i}")));
        }
        assert_eq!(many.counts.len(), OUTCOME_KINDS + 1);
        assert_eq!(many.of("other"), 5);
        assert_eq!(many.records, (OUTCOME_KINDS + 5) as u64);
    }

    #[test]
    fn stages_are_read_in_order_and_malformed_ones_left_out() {
        let json = serde_json::json!({"stages": [
            {"stage": "parse", "seconds": 2.0, "html_mb_per_s": 10.0},
            {"stage": "broken", "seconds": "x", "html_mb_per_s": 1.0},
            {"stage": "score", "seconds": 1.0, "html_mb_per_s": 20.0},
        ]});
        let names: Vec<String> = stages(&json).into_iter().map(|s| s.stage).collect();
        assert_eq!(names, ["parse", "score"]);
        assert!(stages(&serde_json::json!({})).is_empty());
    }

    #[test]
    fn a_night_counts_only_the_hosts_last_seen_that_night() {
        let mut night = Night::new(2);
        night.add(2, Some(0.4));
        night.add(2, Some(0.2));
        night.add(2, None);
        night.add(1, Some(0.9));
        assert_eq!(night.hosts, 3);
        assert_eq!(night.share.count, 2);
        assert!((night.share.value().unwrap() - 0.3).abs() < 1e-12);
    }
}
