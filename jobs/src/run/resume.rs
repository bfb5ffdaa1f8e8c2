//! Resuming a killed job (`--resume`).
//!
//! Every job writes its identity to `OUT/_job.json` before any worker starts ([`Identity`]):
//! its settings as `run.json` records them, its limits, digests of the models and site
//! templates it reads, its input files with their sizes, and its number of workers when the
//! split of the files depends on it. `--resume` refuses a folder whose identity differs,
//! naming what differs, rather than mix two jobs' rows.
//!
//! `apply` ([`Layout::FileShares`]) writes its tables one file share at a time
//! ([`crate::files::shares`]): each share has its own part of `pages`, `segments` and
//! `records`, and once all three have their final names the worker writes the share's entry,
//! `OUT/_done/NAME.json` ([`Entry`]): its counts for `run.json` and its facts for `hosts`. A
//! resumed `apply` takes each finished share from its entry and reads only the others; `hosts`
//! is gathered at the end from every share's facts, as in an uninterrupted job.
//!
//! `run` ([`Layout::Restart`]) keeps its parsed pages between stages in memory and spill files
//! only, and each stage needs the one before over the whole crawl: a resumed `run` checks the
//! identity and starts over.

use std::collections::{BTreeMap, BTreeSet};
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use stencil_operators::inventory::{Inventory, Share};

use super::finish::Tally;
use super::job::{Job, Layout, ModelPlan};
use super::report::{settings, WorkerReport};
use crate::site::dataflow::{HostFact, LocalFindings};
use crate::tables::{self, PartName};

/// The job's identity, beside its tables.
pub(super) const IDENTITY: &str = "_job.json";
/// The folder of `apply`'s entries, one per finished file share.
pub(super) const DONE: &str = "_done";

/// What makes two jobs the same job: `OUT/_job.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(super) struct Identity {
    /// The Stencil version that made the tables.
    stencil: String,
    /// `run.json`'s configuration without its inputs, plus the limits and the digests of the
    /// model, the main-content model and the site templates read.
    configuration: Map<String, Value>,
    inputs: Vec<Input>,
    /// All workers of the job, when files are split among them by record (fewer files than
    /// workers, in `apply`): the file shares, and so the parts, depend on it. Otherwise null.
    split_over_workers: Option<usize>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Input {
    /// The file as listed (`warc_file` in the tables).
    file: String,
    bytes: u64,
}

/// Settings that change where pages are kept, not the tables: a resumed job may change them.
const NOT_IDENTITY: [&str; 1] = ["memory_budget"];

impl Identity {
    /// `configuration` is the command's own part of `run.json`'s configuration;
    /// `site_templates` the digest of the site templates `apply` reads; `peers` the workers of
    /// all processes.
    pub(super) fn new(
        job: &Job,
        configuration: &Value,
        site_templates: Option<String>,
        layout: Layout,
        peers: usize,
    ) -> Result<Identity, String> {
        let mut map = match settings(job, configuration) {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        for key in NOT_IDENTITY {
            map.remove(key);
        }
        if let Ok(Value::Object(limits)) = serde_json::to_value(&job.limits) {
            map.extend(limits);
        }
        if let ModelPlan::Given(model, _) = &job.plan {
            map.insert(
                "model_digest".into(),
                digest(model.to_json().as_bytes()).into(),
            );
        }
        map.insert(
            "content_model_digest".into(),
            digest(job.content.to_json().as_bytes()).into(),
        );
        if let Some(site_templates) = site_templates {
            map.insert("site_templates_digest".into(), site_templates.into());
        }
        let inputs = job
            .files
            .iter()
            .zip(&job.names)
            .map(|(path, name)| {
                let meta =
                    std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
                Ok(Input {
                    file: name.to_string(),
                    bytes: meta.len(),
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        let split = layout == Layout::FileShares && job.files.len() < peers;
        Ok(Identity {
            stencil: env!("CARGO_PKG_VERSION").to_string(),
            configuration: map,
            inputs,
            split_over_workers: split.then_some(peers),
        })
    }

    /// What differs from `now`, a line for each, at most a few inputs named.
    fn differences(&self, now: &Identity) -> Vec<String> {
        let mut found = Vec::new();
        if self.stencil != now.stencil {
            found.push(format!(
                "Stencil {} then, {} now",
                self.stencil, now.stencil
            ));
        }
        let keys: BTreeSet<&String> = self
            .configuration
            .keys()
            .chain(now.configuration.keys())
            .collect();
        for key in keys {
            let (then, here) = (self.configuration.get(key), now.configuration.get(key));
            if then != here {
                found.push(format!("{key}: {} then, {} now", shown(then), shown(here)));
            }
        }
        let sizes = |inputs: &[Input]| -> BTreeMap<String, u64> {
            inputs.iter().map(|i| (i.file.clone(), i.bytes)).collect()
        };
        let (then, here) = (sizes(&self.inputs), sizes(&now.inputs));
        let mut inputs = Vec::new();
        for (file, bytes) in &then {
            match here.get(file) {
                None => inputs.push(format!("input {file} is not among this job's")),
                Some(now) if now != bytes => {
                    inputs.push(format!("input {file}: {bytes} bytes then, {now} now"))
                }
                Some(_) => {}
            }
        }
        for file in here.keys().filter(|f| !then.contains_key(*f)) {
            inputs.push(format!("input {file} is new"));
        }
        const NAMED: usize = 5;
        if inputs.len() > NAMED {
            let more = inputs.len() - NAMED;
            inputs.truncate(NAMED);
            inputs.push(format!("{more} more inputs differ"));
        }
        found.extend(inputs);
        if self.split_over_workers != now.split_over_workers {
            let split = |workers: Option<usize>| match workers {
                Some(n) => format!("files split by record over {n} workers"),
                None => "whole files".to_string(),
            };
            found.push(format!(
                "the inputs' split: {} then, {} now (with fewer files than workers, each file's \
                 records are split among its workers, so the parts depend on their number)",
                split(self.split_over_workers),
                split(now.split_over_workers)
            ));
        }
        found
    }
}

fn shown(value: Option<&Value>) -> String {
    match value {
        None => "unset".to_string(),
        Some(value) => value.to_string(),
    }
}

/// A digest of some bytes, as `run.json`-friendly text.
fn digest(bytes: &[u8]) -> String {
    format!("{:016x}", xxhash_rust::xxh3::xxh3_64(bytes))
}

/// A digest of the `site_templates` an `apply` reads from `dir`: its part files, in name order.
pub(super) fn site_templates_digest(dir: &Path) -> Result<String, String> {
    let table = dir.join("site_templates");
    let mut parts: Vec<PathBuf> = std::fs::read_dir(&table)
        .map_err(|e| format!("{}: {e}", table.display()))?
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| {
            let name = path.file_name().map(|n| n.to_string_lossy().to_string());
            name.and_then(|n| PartName::of_file(&n)).is_some()
        })
        .collect();
    parts.sort();
    let mut all = xxhash_rust::xxh3::Xxh3::new();
    for part in &parts {
        let bytes = std::fs::read(part).map_err(|e| format!("{}: {e}", part.display()))?;
        all.update(part.file_name().map_or(&[][..], |n| n.as_encoded_bytes()));
        all.update(&bytes);
    }
    Ok(format!("{:016x}", all.digest()))
}

/// Readies the output folder for a job; called on the first process before any worker of any
/// process starts (timely connects every process first, and no worker writes before that).
///
/// A fresh job (or `--resume` with nothing to resume) removes what an earlier job left —
/// parts, `_done`, `run.json` — and writes its identity. `--resume` on the same job removes
/// `run.json`, the files a killed job was writing and every part a resumed job rewrites: all of
/// them for [`Layout::Restart`], all but the finished shares' for [`Layout::FileShares`].
pub(super) fn prepare(
    out: &Path,
    identity: &Identity,
    resume: bool,
    layout: Layout,
    tables: &[&str],
) -> Result<(), String> {
    let identity_path = out.join(IDENTITY);
    let earlier = match resume {
        true => earlier_identity(out)?,
        false => None,
    };
    let Some(earlier) = earlier else {
        // The identity goes first and comes back last: a job killed in between leaves no
        // identity, and is not resumed over a half-cleared folder.
        remove_if_there(&identity_path)?;
        remove_if_there(&out.join("run.json"))?;
        remove_done(out, |_| true)?;
        tables::remove_earlier_parts(out, tables)?;
        let text = serde_json::to_string_pretty(identity).map_err(|e| e.to_string())?;
        return write_atomically(out, IDENTITY, &text);
    };
    let differences = earlier.differences(identity);
    if !differences.is_empty() {
        return Err(format!(
            "cannot resume {}: it holds another job's tables ({}); run without --resume to \
             start over, or choose another --out",
            out.display(),
            differences.join("; ")
        ));
    }
    // A refused job leaves the folder as it was; an accepted one is not complete until its
    // own run.json.
    remove_if_there(&out.join("run.json"))?;
    match layout {
        Layout::Restart => {
            remove_done(out, |_| true)?;
            tables::remove_earlier_parts(out, tables)?;
            eprintln!(
                "resume: {} holds the same job; `run` starts over (it keeps its pages between \
                 stages in memory only)",
                out.display()
            );
        }
        Layout::FileShares => {
            // Entries being written when the job was killed start with a dot.
            remove_done(out, |name| name.starts_with('.'))?;
            let done = finished_shares(out);
            tables::remove_parts(out, tables, |file| {
                !PartName::of_file(file).is_some_and(|name| done.contains(name.as_str()))
            })?;
            eprintln!(
                "resume: {} holds the same job; {} file shares are done and are not read again",
                out.display(),
                done.len()
            );
        }
    }
    Ok(())
}

/// The identity of the job whose tables `out` holds, if it holds any.
fn earlier_identity(out: &Path) -> Result<Option<Identity>, String> {
    let path = out.join(IDENTITY);
    match std::fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str(&text).map(Some).map_err(|e| {
            format!(
                "cannot resume {}: {} is unreadable ({e}); run without --resume to start over",
                out.display(),
                path.display()
            )
        }),
        Err(e) if e.kind() == ErrorKind::NotFound => {
            eprintln!(
                "resume: {} holds no job to resume; starting it",
                out.display()
            );
            Ok(None)
        }
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

/// The names of the file shares with an entry in `OUT/_done`.
fn finished_shares(out: &Path) -> BTreeSet<String> {
    let Ok(entries) = std::fs::read_dir(out.join(DONE)) else {
        return BTreeSet::new();
    };
    entries
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().to_string();
            let share = name.strip_suffix(".json")?;
            (!share.starts_with('.')).then(|| share.to_string())
        })
        .collect()
}

/// Removes the files of `OUT/_done` that `which` picks by name.
fn remove_done(out: &Path, which: impl Fn(&str) -> bool) -> Result<(), String> {
    let Ok(entries) = std::fs::read_dir(out.join(DONE)) else {
        return Ok(());
    };
    for entry in entries.flatten() {
        if which(&entry.file_name().to_string_lossy()) {
            remove_if_there(&entry.path())?;
        }
    }
    Ok(())
}

fn remove_if_there(path: &Path) -> Result<(), String> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != ErrorKind::NotFound => Err(format!("{}: {e}", path.display())),
        _ => Ok(()),
    }
}

/// Writes `DIR/NAME` as `DIR/.NAME.partial` and renames it, so that it is whole or absent.
fn write_atomically(dir: &Path, name: &str, text: &str) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let partial = dir.join(format!(".{name}.partial"));
    std::fs::write(&partial, text).map_err(|e| format!("{}: {e}", partial.display()))?;
    let done = dir.join(name);
    std::fs::rename(&partial, &done).map_err(|e| format!("{}: {e}", done.display()))
}

/// Removes the spill files a killed job left in `dir` (`worker-*`): a job with fewer workers
/// would not overwrite them. Each process, before it connects to the others.
pub(super) fn remove_stale_spill(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if entry.file_name().to_string_lossy().starts_with("worker-") {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// A finished file share of `apply`: `OUT/_done/NAME.json`, NAME as its parts'
/// ([`PartName::share`]).
#[derive(Debug, Default, Serialize, Deserialize)]
pub(super) struct Entry {
    /// The input file as listed, and which of its shares.
    file: String,
    part: u64,
    parts: u64,
    /// What reading the share counted.
    inventory: Inventory,
    /// Pages counted as parsed whose later work panicked (they are `error` rows).
    panicked_pages: u64,
    pages: u64,
    segments: u64,
    quantized_pages: u64,
    /// Why the file could not be read to its end, if so (its first share says it).
    failure: Option<String>,
    /// The share's hosts that the site templates have a model for.
    site_hosts: BTreeSet<String>,
    /// The share's facts for `hosts` (one per scored page), by host.
    facts: BTreeMap<String, Vec<HostFact>>,
}

fn entry_name(file: usize, share: Share) -> String {
    format!("{}.json", PartName::share(file, share.part).as_str())
}

/// The entry of share `share` of input `file`, if that share is finished. An entry that cannot
/// be read, or names another file or share, counts as unfinished: the share is read again and
/// its parts rewritten.
pub(super) fn finished(job: &Job, file: usize, share: Share) -> Option<Entry> {
    let path = job.out.join(DONE).join(entry_name(file, share));
    let text = std::fs::read_to_string(&path).ok()?;
    let entry: Entry = serde_json::from_str(&text).ok()?;
    let name = job.names.get(file)?;
    (entry.file == **name && entry.part == share.part && entry.parts == share.parts)
        .then_some(entry)
}

impl Entry {
    /// Adds a finished share to the worker's totals, as reading it would have: its counts, its
    /// facts for `hosts` and its hosts with site templates.
    pub(super) fn restore(
        self,
        job: &Job,
        report: &mut WorkerReport,
        (tally, panicked_pages): (&mut Tally, &mut u64),
        findings: &mut LocalFindings,
        site_hosts: &mut BTreeSet<String>,
    ) {
        let counters = &job.reporter;
        let add = |counter: &std::sync::atomic::AtomicU64, n: u64| {
            counter.fetch_add(n, Ordering::Relaxed);
        };
        add(&counters.input_bytes, self.inventory.input_bytes);
        add(&counters.pages, self.inventory.pages);
        add(&counters.html_bytes, self.inventory.html_bytes);
        report.inventory.merge(&self.inventory);
        report.failures.extend(self.failure);
        report.resumed_shares += 1;
        tally.pages += self.pages;
        tally.segments += self.segments;
        tally.quantized += self.quantized_pages;
        *panicked_pages += self.panicked_pages;
        for (host, facts) in self.facts {
            findings
                .facts
                .extend(facts.into_iter().map(|fact| (host.clone(), fact)));
        }
        site_hosts.extend(self.site_hosts);
    }
}

/// A file share being read, and where the worker's running totals stood when it began, so that
/// the share's entry holds only its own.
pub(super) struct ShareStart {
    of: (usize, Share),
    tally: (u64, u64, u64),
    panicked_pages: u64,
    facts: usize,
}

impl ShareStart {
    /// Share `share` of input `file`, begun with these totals.
    pub(super) fn new(
        (file, share): (usize, Share),
        tally: &Tally,
        panicked_pages: u64,
        findings: &LocalFindings,
    ) -> ShareStart {
        ShareStart {
            of: (file, share),
            tally: (tally.pages, tally.segments, tally.quantized),
            panicked_pages,
            facts: findings.facts.len(),
        }
    }

    /// Writes the entry of the share just read, whose parts are finished: what it added to
    /// the worker's totals since [`ShareStart::new`].
    pub(super) fn write_entry(
        &self,
        job: &Job,
        inventory: Inventory,
        (tally, panicked_pages): (&Tally, u64),
        findings: &LocalFindings,
        site_hosts: &BTreeSet<String>,
        failure: Option<String>,
    ) -> Result<(), String> {
        let (file, share) = self.of;
        let mut facts: BTreeMap<String, Vec<HostFact>> = BTreeMap::new();
        for (host, fact) in findings.facts.iter().skip(self.facts) {
            facts.entry(host.clone()).or_default().push(fact.clone());
        }
        let entry = Entry {
            file: job
                .names
                .get(file)
                .map(|n| n.to_string())
                .unwrap_or_default(),
            part: share.part,
            parts: share.parts,
            inventory,
            panicked_pages: panicked_pages - self.panicked_pages,
            pages: tally.pages - self.tally.0,
            segments: tally.segments - self.tally.1,
            quantized_pages: tally.quantized - self.tally.2,
            failure,
            site_hosts: site_hosts.clone(),
            facts,
        };
        let text = serde_json::to_string(&entry).map_err(|e| e.to_string())?;
        write_atomically(&job.out.join(DONE), &entry_name(file, share), &text)?;
        crate::crash::kill_point("entry");
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identity(threshold: f64, inputs: &[(&str, u64)], split: Option<usize>) -> Identity {
        let mut configuration = Map::new();
        configuration.insert("command".into(), "apply".into());
        configuration.insert("threshold".into(), threshold.into());
        Identity {
            stencil: "0.1.0".into(),
            configuration,
            inputs: inputs
                .iter()
                .map(|(file, bytes)| Input {
                    file: file.to_string(),
                    bytes: *bytes,
                })
                .collect(),
            split_over_workers: split,
        }
    }

    #[test]
    fn differences_name_the_setting_the_inputs_and_the_split() {
        let then = identity(0.5, &[("a.warc.gz", 10), ("b.warc.gz", 20)], None);
        assert!(then.differences(&then.clone()).is_empty());
        let now = identity(0.6, &[("a.warc.gz", 11), ("c.warc.gz", 5)], Some(4));
        assert_eq!(
            now.differences(&then).len(),
            5,
            "{:?}",
            then.differences(&now)
        );
        let found = then.differences(&now).join("\n");
        assert!(found.contains("threshold: 0.5 then, 0.6 now"), "{found}");
        assert!(
            found.contains("input a.warc.gz: 10 bytes then, 11 now"),
            "{found}"
        );
        assert!(
            found.contains("input b.warc.gz is not among this job's"),
            "{found}"
        );
        assert!(found.contains("input c.warc.gz is new"), "{found}");
        assert!(
            found.contains("whole files then, files split by record over 4 workers now"),
            "{found}"
        );
    }
}
