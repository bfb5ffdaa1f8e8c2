//! Site statistics that carry from night to night (`stencil run --state DIR`).
//!
//! SiteLevel(θ) needs only each host's bottom-k sample (the `--host-sample` distinct URLs with
//! the smallest URL keys, with their fingerprints) and its page count, and the bottom-k of a
//! union is the bottom-k of the union of the parts. So a night that adds the state's sample of
//! each host it touches to a worker's local sample, and its page count to the host's, learns
//! exactly the models one run over every night would: the rest of the job is unchanged. Hosts
//! tonight does not touch are not recomputed; their rows are copied into the new state.
//!
//! The state is a folder of generations, each a set of Parquet tables split into [`BUCKETS`]
//! buckets by host key:
//!
//! ```text
//! DIR/CURRENT                              the name of the current generation
//! DIR/night-000002/state.json              its night, parent, inputs and parameters
//! DIR/night-000002/hosts/part-000BB.parquet
//! DIR/night-000002/samples/part-000BB.parquet
//! DIR/night-000002/site_templates/part-000BB.parquet
//! ```
//!
//! Bucket `b` is read and written by worker `b mod workers`, so every file has one writer,
//! and its rows are sorted: a state does not depend on the worker count. A night writes its
//! generation beside the current one and then replaces `CURRENT` (a rename), so a night that
//! dies leaves the previous state as it was. A night whose inputs are those of the current
//! generation is a rerun of it (a job killed after writing its state, started again): it
//! builds on the current generation's parent instead, and gives the same generation again.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

use arrow_array::builder::{ListBuilder, UInt64Builder};
use arrow_array::{
    Array, ArrayRef, Float64Array, ListArray, RecordBatch, StringArray, UInt32Array, UInt64Array,
};
use arrow_schema::{DataType, Field, SchemaRef};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use serde::{Deserialize, Serialize};
use stencil_operators::site::site_level::{url_key, BottomK};
use stencil_operators::site::templates::HostTemplates;
use timely::dataflow::operators::{Exchange, Inspect, Probe};
use timely::worker::Worker;

use super::dataflow::{host_key, HostFact, LocalFindings, LocalSample, Occurrence};
use crate::tables::{self, HostRow, TemplateRow};

/// Buckets of every state table. A state is read and written by at most this many workers.
pub const BUCKETS: u64 = 64;

/// The layout version of `state.json` and the tables.
const FORMAT: u32 = 1;

/// What a generation says of itself (`state.json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub format: u32,
    pub night: u32,
    /// The generation this one was built on.
    pub parent: Option<String>,
    /// [`inputs_digest`] of the night's input files.
    pub inputs: String,
    /// The site statistics' parameters: a state continues only with the same ones.
    pub statistics: serde_json::Value,
}

/// Where a night reads its state and writes the next generation.
#[derive(Clone, Debug)]
pub struct Plan {
    root: PathBuf,
    /// The generation tonight builds on (none: the state is empty).
    base: Option<PathBuf>,
    /// Tonight's generation: written under `staging`, then renamed to `name`.
    name: String,
    staging: PathBuf,
    manifest: Manifest,
    /// Hosts without a page for this many nights leave the state.
    max_age: Option<u32>,
}

/// Digest of a night's input files (names and sizes): a night run again on the same files is
/// recognised as a rerun.
pub fn inputs_digest(files: &[PathBuf]) -> String {
    let mut text = String::new();
    for file in files {
        let name = file.file_name().map(|n| n.to_string_lossy().into_owned());
        let size = std::fs::metadata(file).map_or(0, |m| m.len());
        text.push_str(&format!("{}\t{size}\n", name.unwrap_or_default()));
    }
    format!("{:016x}", xxhash_rust::xxh3::xxh3_64(text.as_bytes()))
}

/// The current generation of the state at `root`: its folder and manifest, if any.
pub fn current(root: &Path) -> Result<Option<(PathBuf, Manifest)>, String> {
    let pointer = root.join("CURRENT");
    let name = match std::fs::read_to_string(&pointer) {
        Ok(name) => name.trim().to_string(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{}: {e}", pointer.display())),
    };
    let dir = root.join(&name);
    Ok(Some((dir.clone(), read_manifest(&dir)?)))
}

fn read_manifest(dir: &Path) -> Result<Manifest, String> {
    let path = dir.join("state.json");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let manifest: Manifest =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    if manifest.format != FORMAT {
        return Err(format!(
            "{}: state format {} (this stencil reads {FORMAT})",
            path.display(),
            manifest.format
        ));
    }
    Ok(manifest)
}

impl Plan {
    /// Tonight's plan for the state at `root`, for a job over `inputs` (an [`inputs_digest`])
    /// with these statistics' parameters.
    pub fn open(
        root: &Path,
        statistics: serde_json::Value,
        inputs: String,
        max_age: Option<u32>,
    ) -> Result<Plan, String> {
        let mut base = current(root)?;
        if let Some((_, manifest)) = &base {
            if manifest.inputs == inputs {
                // A rerun of the night that made the current generation.
                base = match &manifest.parent {
                    Some(parent) => {
                        let dir = root.join(parent);
                        Some((dir.clone(), read_manifest(&dir)?))
                    }
                    None => None,
                };
            }
        }
        if let Some((dir, manifest)) = &base {
            if manifest.statistics != statistics {
                return Err(format!(
                    "{}: the state was made with {} and this job asks for {statistics}; start a \
                     new state, or run with the state's parameters",
                    dir.display(),
                    manifest.statistics
                ));
            }
        }
        let night = base.as_ref().map_or(1, |(_, m)| m.night + 1);
        let name = format!("night-{night:06}");
        let parent = base
            .as_ref()
            .and_then(|(dir, _)| dir.file_name())
            .map(|n| n.to_string_lossy().into_owned());
        Ok(Plan {
            root: root.to_path_buf(),
            staging: root.join(format!(".{name}.partial")),
            base: base.map(|(dir, _)| dir),
            name,
            manifest: Manifest {
                format: FORMAT,
                night,
                parent,
                inputs,
                statistics,
            },
            max_age,
        })
    }

    pub fn night(&self) -> u32 {
        self.manifest.night
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The generation tonight builds on, if any.
    pub fn base(&self) -> Option<&Path> {
        self.base.as_deref()
    }

    /// Removes what a night that died left in the staging folder (first process only, before
    /// any worker starts).
    pub fn prepare(&self) -> Result<(), String> {
        let fail = |e: std::io::Error| format!("{}: {e}", self.staging.display());
        if self.staging.exists() {
            std::fs::remove_dir_all(&self.staging).map_err(fail)?;
        }
        std::fs::create_dir_all(&self.staging).map_err(fail)
    }

    /// Makes tonight's generation the current one, once every worker has written its buckets
    /// (first process only, after the job succeeded). Generations older than tonight's parent
    /// are removed.
    pub fn commit(&self) -> Result<(), String> {
        let fail = |path: &Path, e: std::io::Error| format!("{}: {e}", path.display());
        let manifest = serde_json::to_string_pretty(&self.manifest).map_err(|e| e.to_string())?;
        let path = self.staging.join("state.json");
        std::fs::write(&path, manifest).map_err(|e| fail(&path, e))?;
        let done = self.root.join(&self.name);
        if done.exists() {
            // The generation a killed rerun of this night had committed: the same night again.
            std::fs::remove_dir_all(&done).map_err(|e| fail(&done, e))?;
        }
        std::fs::rename(&self.staging, &done).map_err(|e| fail(&done, e))?;
        crate::crash::kill_point("state-staged");
        let pointer = self.root.join("CURRENT");
        let partial = self.root.join(".CURRENT.partial");
        std::fs::write(&partial, format!("{}\n", self.name)).map_err(|e| fail(&partial, e))?;
        std::fs::rename(&partial, &pointer).map_err(|e| fail(&pointer, e))?;
        crate::crash::kill_point("state-committed");
        let keep: HashSet<&str> = [Some(self.name.as_str()), self.manifest.parent.as_deref()]
            .into_iter()
            .flatten()
            .collect();
        if let Ok(entries) = std::fs::read_dir(&self.root) {
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                if name.starts_with("night-") && !keep.contains(name.as_str()) {
                    let _ = std::fs::remove_dir_all(entry.path());
                }
            }
        }
        Ok(())
    }
}

/// One host of the state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HostState {
    pub host: String,
    pub pages: u64,
    pub pages_sampled: u32,
    pub first_night: u32,
    pub last_night: u32,
    pub templated_fraction: Option<f64>,
}

/// What a worker tells the owner of a host's bucket before the state is read.
#[derive(Clone, Debug, Serialize, Deserialize)]
enum Touch {
    /// The host has pages tonight.
    Host(String),
    /// A URL key in tonight's sample of the host.
    Page(u64),
}

/// The old rows of the hosts tonight touches, held by the worker that owns their bucket.
#[derive(Default)]
pub struct Carried {
    /// Tonight's hosts in this worker's buckets, by key.
    touched: HashMap<u64, String>,
    hosts: HashMap<String, HostState>,
    templates: HashMap<String, Vec<TemplateRow>>,
    /// This worker's buckets holding a host tonight does not touch: only those are read
    /// again when the state is written.
    untouched: HashSet<u64>,
}

fn my_buckets(worker: &Worker) -> impl Iterator<Item = u64> {
    let (index, peers) = (worker.index() as u64, worker.peers() as u64);
    (0..BUCKETS).filter(move |b| b % peers == index)
}

/// Sends each item to the worker owning its host's bucket; returns what this worker received.
/// Every worker must call it the same number of times (a failed worker sends nothing).
fn to_owners<D: timely::ExchangeData + Clone>(
    worker: &mut Worker,
    items: Vec<(u64, D)>,
) -> Vec<(u64, D)> {
    let received: Rc<RefCell<Vec<(u64, D)>>> = Rc::default();
    let sink = received.clone();
    let (mut input, probe) = worker.dataflow::<u64, _, _>(|scope| {
        use timely::dataflow::operators::vec::Input;
        let (input, items) = scope.new_input::<(u64, D)>();
        let probe = items
            .exchange(|(key, _)| key % BUCKETS)
            .inspect(move |item: &(u64, D)| sink.borrow_mut().push(item.clone()))
            .probe()
            .0;
        (input, probe)
    });
    for item in items {
        input.send(item);
    }
    input.advance_to(1);
    drop(input);
    crate::cluster::finish_round(worker, &probe);
    received.take()
}

/// Adds the state's share of every host tonight touches to `sample` (its page count, and its
/// sampled pages as [`LocalSample::carried`]), for the worker owning the host's bucket, and
/// returns the old rows it read.
/// Every worker takes part, even with `plan` failing to read: the error comes back with what
/// was read.
pub fn load(
    worker: &mut Worker,
    plan: &Plan,
    sample: &mut LocalSample,
    k: usize,
) -> (Carried, Option<String>) {
    // Tonight's hosts, and the URL keys of tonight's sampled pages: a URL fetched again
    // tonight counts with tonight's copy, not the state's.
    let mut mine: Vec<(u64, Touch)> = Vec::new();
    for host in sample.pages.keys() {
        mine.push((host_key(host), Touch::Host(host.clone())));
    }
    for (host, pages) in &sample.samples {
        let key = host_key(host);
        mine.extend(pages.keys().map(|url| (key, Touch::Page(url))));
    }
    let mut carried = Carried::default();
    let mut fetched: HashSet<(u64, u64)> = HashSet::new();
    for (key, touch) in to_owners(worker, mine) {
        match touch {
            Touch::Host(host) => {
                carried.touched.insert(key, host);
            }
            Touch::Page(url) => {
                fetched.insert((key, url));
            }
        }
    }
    let Some(base) = plan.base.as_deref() else {
        return (carried, None);
    };
    let mut read = || -> Result<(), String> {
        for bucket in my_buckets(worker) {
            for_each_row(base, "hosts", bucket, read_hosts, |row: HostState| {
                if carried.touched.contains_key(&host_key(&row.host)) {
                    *sample.pages.entry(row.host.clone()).or_default() += row.pages;
                    carried.hosts.insert(row.host.clone(), row);
                } else {
                    carried.untouched.insert(bucket);
                }
            })?;
            for_each_row(
                base,
                "samples",
                bucket,
                read_samples,
                |(host, key, prints)| {
                    let host_key = host_key(&host);
                    if carried.touched.contains_key(&host_key)
                        && !fetched.contains(&(host_key, key))
                    {
                        sample
                            .carried
                            .entry(host)
                            .or_insert_with(|| BottomK::new(k))
                            .offer(key, prints);
                    }
                },
            )?;
            for_each_row(base, "site_templates", bucket, read_templates, |row| {
                if carried.touched.contains_key(&host_key(&row.host)) {
                    carried
                        .templates
                        .entry(row.host.clone())
                        .or_default()
                        .push(row);
                }
            })?;
        }
        Ok(())
    };
    let failure = read().err();
    (carried, failure)
}

impl Carried {
    /// Offers what the state knew of tonight's hosts to tonight's findings: each host's
    /// previous templated fraction (for its `hosts` row), and each carried template row still
    /// a template under tonight's model, on a page still sampled, as a candidate occurrence
    /// for its `site_templates` row (the smallest still wins).
    pub fn offer(
        &self,
        night: u32,
        models: &HashMap<String, HostTemplates>,
        findings: &mut LocalFindings,
    ) {
        for host in self.touched.values() {
            let fraction = self
                .hosts
                .get(host)
                .and_then(|h| h.templated_fraction)
                .map(f64::to_bits);
            findings
                .facts
                .push((host.clone(), HostFact::Previous { night, fraction }));
        }
        for (host, rows) in &self.templates {
            let Some(HostTemplates::SiteLevel(model)) = models.get(host) else {
                continue;
            };
            for row in rows.iter().filter(|row| model.is_template(row.hash)) {
                let key = url_key(&row.url);
                if !model.in_sample(key) || !findings.could_take(host, row.hash, (key, row.node)) {
                    continue;
                }
                let candidate = Occurrence {
                    url_key: key,
                    method: row.method.clone(),
                    node: row.node,
                    url: row.url.clone(),
                    path: row.path.clone(),
                    text_sample: row.text_sample.clone(),
                    pages_with: model.counts.get(&row.hash).copied().unwrap_or(0),
                    pages_sampled: model.pages_sampled,
                    cluster: row.cluster,
                };
                findings.offer(host, row.hash, candidate);
            }
        }
    }
}

/// A row of `template_changes`.
#[derive(Clone, Debug, PartialEq)]
pub struct ChangeRow {
    pub night: u32,
    pub change: &'static str,
    pub row: TemplateRow,
    pub before: Option<f64>,
    pub after: Option<f64>,
}

/// What crosses workers when the state is written.
#[derive(Clone, Debug, Serialize, Deserialize)]
enum Routed {
    Host(HostState),
    Page(String, u64, Vec<u64>),
    Template(TemplateRow),
}

/// Tonight's side of the new state, as one worker holds it after the job.
pub struct Tonight<'a> {
    pub sample: &'a LocalSample,
    pub models: &'a HashMap<String, HostTemplates>,
    pub templates: Vec<TemplateRow>,
    pub hosts: &'a [HostRow],
}

/// Writes this worker's buckets of tonight's generation into the plan's staging folder: the
/// hosts tonight touched with their new sample, templates and counts; every other host's rows
/// as they were, unless it aged out. Returns the `template_changes` rows of its buckets.
/// Every worker takes part; `failed` sends nothing and writes nothing.
pub fn save(
    worker: &mut Worker,
    plan: &Plan,
    carried: Carried,
    tonight: Tonight<'_>,
    failed: bool,
) -> Result<Vec<ChangeRow>, String> {
    let night = plan.night();
    let mut items: Vec<(u64, Routed)> = Vec::new();
    if !failed {
        for (host, sample) in &tonight.sample.samples {
            let Some(model) = tonight.models.get(host) else {
                continue;
            };
            let key = host_key(host);
            for (url, prints) in sample.pages().filter(|(url, _)| model.in_sample(*url)) {
                items.push((key, Routed::Page(host.clone(), url, prints.to_vec())));
            }
        }
        for row in tonight.templates {
            items.push((host_key(&row.host), Routed::Template(row)));
        }
        for row in tonight.hosts {
            let state = HostState {
                host: row.host.clone(),
                pages: row.pages,
                pages_sampled: row.pages_sampled,
                first_night: night,
                last_night: night,
                templated_fraction: row.mean_templated_fraction,
            };
            items.push((host_key(&row.host), Routed::Host(state)));
        }
    }
    let received = to_owners(worker, items);
    if failed {
        return Ok(Vec::new());
    }
    // Tonight's rows by bucket; pages of one URL read twice (or kept in the state and read
    // again) are one page with the union of their fingerprints, as in `BottomK`.
    let mut hosts: BTreeMap<u64, BTreeMap<String, HostState>> = BTreeMap::new();
    let mut pages: BTreeMap<u64, BTreeMap<(String, u64), Vec<u64>>> = BTreeMap::new();
    let mut templates: BTreeMap<u64, Vec<TemplateRow>> = BTreeMap::new();
    for (key, routed) in received {
        let bucket = key % BUCKETS;
        match routed {
            Routed::Host(mut row) => {
                if let Some(old) = carried.hosts.get(&row.host) {
                    row.first_night = old.first_night;
                }
                hosts
                    .entry(bucket)
                    .or_default()
                    .insert(row.host.clone(), row);
            }
            Routed::Page(host, url, prints) => {
                let slot = pages.entry(bucket).or_default().entry((host, url));
                let held = slot.or_default();
                held.extend(prints);
                held.sort_unstable();
                held.dedup();
            }
            Routed::Template(row) => templates.entry(bucket).or_default().push(row),
        }
    }
    // The state's pages still in their host's sample, all of this worker's buckets.
    for (host, sample) in &tonight.sample.carried {
        let Some(model) = tonight.models.get(host) else {
            continue;
        };
        let bucket = host_key(host) % BUCKETS;
        let held = pages.entry(bucket).or_default();
        for (url, prints) in sample.pages().filter(|(url, _)| model.in_sample(*url)) {
            held.insert((host.clone(), url), prints.to_vec());
        }
    }
    let touched = |host: &str| carried.touched.contains_key(&host_key(host));
    let mut changes = Vec::new();
    for bucket in my_buckets(worker) {
        // The hosts kept as they were, and those that aged out.
        let mut new_hosts = hosts.remove(&bucket).unwrap_or_default();
        let mut aged: HashMap<String, Option<f64>> = HashMap::new();
        let base = plan.base().filter(|_| carried.untouched.contains(&bucket));
        if let Some(base) = base {
            for_each_row(base, "hosts", bucket, read_hosts, |row: HostState| {
                if touched(&row.host) {
                    return;
                }
                let age = night.saturating_sub(row.last_night);
                if plan.max_age.is_some_and(|max| age >= max) {
                    aged.insert(row.host.clone(), row.templated_fraction);
                } else {
                    new_hosts.insert(row.host.clone(), row);
                }
            })?;
        }
        let mut new_pages = pages.remove(&bucket).unwrap_or_default();
        let mut new_templates = templates.remove(&bucket).unwrap_or_default();
        if let Some(base) = base {
            let kept = |host: &str| !touched(host) && !aged.contains_key(host);
            for_each_row(
                base,
                "samples",
                bucket,
                read_samples,
                |(host, url, prints)| {
                    if kept(&host) {
                        new_pages.insert((host, url), prints);
                    }
                },
            )?;
            for_each_row(base, "site_templates", bucket, read_templates, |row| {
                if kept(&row.host) {
                    new_templates.push(row);
                } else if let Some(before) = aged.get(&row.host) {
                    changes.push(ChangeRow {
                        night,
                        change: "disappeared",
                        row,
                        before: *before,
                        after: None,
                    });
                }
            })?;
        }
        new_templates.sort_by(|a, b| (&a.host, a.hash).cmp(&(&b.host, b.hash)));
        changes.extend(template_changes(
            (night, bucket),
            &carried,
            &new_templates,
            &new_hosts,
            &touched,
        ));
        let staging = &plan.staging;
        let host_rows: Vec<HostState> = new_hosts.into_values().collect();
        let sample_rows: Vec<(String, u64, Vec<u64>)> = new_pages
            .into_iter()
            .map(|((host, url), prints)| (host, url, prints))
            .collect();
        tables::write_part(
            staging,
            "hosts",
            bucket as usize,
            stencil_schemas::state_hosts(),
            &host_rows,
            hosts_batch,
        )?;
        tables::write_part(
            staging,
            "samples",
            bucket as usize,
            stencil_schemas::state_samples(),
            &sample_rows,
            samples_batch,
        )?;
        tables::write_part(
            staging,
            "site_templates",
            bucket as usize,
            stencil_schemas::state_templates(),
            &new_templates,
            state_templates_batch,
        )?;
    }
    changes.sort_by(|a, b| {
        (&a.row.host, a.row.hash, a.change).cmp(&(&b.row.host, b.row.hash, b.change))
    });
    Ok(changes)
}

/// The blocks of tonight's hosts (in one bucket) that became templates and that stopped being
/// ones, against the state's rows of the same hosts.
fn template_changes(
    (night, bucket): (u32, u64),
    carried: &Carried,
    new_templates: &[TemplateRow],
    new_hosts: &BTreeMap<String, HostState>,
    touched: &dyn Fn(&str) -> bool,
) -> Vec<ChangeRow> {
    let mut changes = Vec::new();
    let before = |host: &str| carried.hosts.get(host).and_then(|h| h.templated_fraction);
    let after = |host: &str| new_hosts.get(host).and_then(|h| h.templated_fraction);
    let mut new_by_host: HashMap<&str, HashSet<u64>> = HashMap::new();
    for row in new_templates.iter().filter(|row| touched(&row.host)) {
        new_by_host.entry(&row.host).or_default().insert(row.hash);
    }
    let in_bucket = |host: &str| host_key(host) % BUCKETS == bucket;
    for (host, rows) in carried.templates.iter().filter(|(host, _)| in_bucket(host)) {
        let now = new_by_host.get(host.as_str());
        for row in rows {
            if !now.is_some_and(|now| now.contains(&row.hash)) {
                changes.push(ChangeRow {
                    night,
                    change: "disappeared",
                    row: row.clone(),
                    before: before(host),
                    after: after(host),
                });
            }
        }
    }
    let old_by_host: HashMap<&str, HashSet<u64>> = carried
        .templates
        .iter()
        .filter(|(host, _)| in_bucket(host))
        .map(|(host, rows)| (host.as_str(), rows.iter().map(|r| r.hash).collect()))
        .collect();
    for row in new_templates.iter().filter(|row| touched(&row.host)) {
        let old = old_by_host.get(row.host.as_str());
        if !old.is_some_and(|old| old.contains(&row.hash)) {
            changes.push(ChangeRow {
                night,
                change: "appeared",
                row: row.clone(),
                before: before(&row.host),
                after: after(&row.host),
            });
        }
    }
    changes
}

/// Writes a worker's `template_changes` part.
pub fn write_changes(out: &Path, worker: usize, rows: &[ChangeRow]) -> Result<PathBuf, String> {
    let schema = stencil_schemas::template_changes();
    tables::write_part(out, "template_changes", worker, schema, rows, changes_batch)
}

fn hosts_batch(schema: &SchemaRef, rows: &[HostState]) -> Result<RecordBatch, String> {
    tables::batch(
        schema,
        vec![
            tables::strings(rows, |r| &r.host),
            tables::u64s(rows, |r| r.pages),
            tables::u32s(rows, |r| r.pages_sampled),
            tables::u32s(rows, |r| r.first_night),
            tables::u32s(rows, |r| r.last_night),
            tables::optional_f64s(rows, |r| r.templated_fraction),
        ],
    )
}

fn samples_batch(
    schema: &SchemaRef,
    rows: &[(String, u64, Vec<u64>)],
) -> Result<RecordBatch, String> {
    let mut prints = ListBuilder::new(UInt64Builder::new()).with_field(Arc::new(Field::new(
        "item",
        DataType::UInt64,
        false,
    )));
    for (_, _, page) in rows {
        prints.values().append_slice(page);
        prints.append(true);
    }
    tables::batch(
        schema,
        vec![
            tables::strings(rows, |r| &r.0),
            tables::u64s(rows, |r| r.1),
            Arc::new(prints.finish()) as ArrayRef,
        ],
    )
}

fn state_templates_batch(schema: &SchemaRef, rows: &[TemplateRow]) -> Result<RecordBatch, String> {
    let site = tables::templates_batch(&stencil_schemas::site_templates(), rows)?;
    let mut columns = site.columns().to_vec();
    columns.push(tables::u32s(rows, |r| r.node));
    tables::batch(schema, columns)
}

fn changes_batch(schema: &SchemaRef, rows: &[ChangeRow]) -> Result<RecordBatch, String> {
    tables::batch(
        schema,
        vec![
            tables::strings(rows, |r| &r.row.host),
            tables::u32s(rows, |r| r.night),
            tables::strings(rows, |r| r.change),
            tables::strings(rows, |r| &r.row.method),
            tables::u64s(rows, |r| r.row.hash),
            tables::u32s(rows, |r| r.row.pages_with),
            tables::u32s(rows, |r| r.row.pages_sampled),
            tables::strings(rows, |r| &r.row.path),
            tables::strings(rows, |r| &r.row.text_sample),
            tables::strings(rows, |r| &r.row.url),
            tables::optional_f64s(rows, |r| r.before),
            tables::optional_f64s(rows, |r| r.after),
        ],
    )
}

/// Calls `each` with every row of bucket `bucket` of `table` in the generation `dir`, decoded
/// by `decode`. A bucket without a file is empty.
fn for_each_row<R>(
    dir: &Path,
    table: &str,
    bucket: u64,
    decode: fn(&RecordBatch) -> Option<Vec<R>>,
    mut each: impl FnMut(R),
) -> Result<(), String> {
    let path = dir.join(table).join(format!("part-{bucket:05}.parquet"));
    let fail = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let file = match std::fs::File::open(&path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(fail(&e)),
    };
    let reader = ParquetRecordBatchReaderBuilder::try_new(file)
        .and_then(|b| b.build())
        .map_err(|e| fail(&e))?;
    for batch in reader {
        let batch = batch.map_err(|e| fail(&e))?;
        let rows = decode(&batch).ok_or_else(|| fail(&"not a state table of this layout"))?;
        rows.into_iter().for_each(&mut each);
    }
    Ok(())
}

fn column<'a, A: 'static>(batch: &'a RecordBatch, name: &str) -> Option<&'a A> {
    batch.column_by_name(name)?.as_any().downcast_ref::<A>()
}

fn read_hosts(batch: &RecordBatch) -> Option<Vec<HostState>> {
    let host = column::<StringArray>(batch, "host")?;
    let pages = column::<UInt64Array>(batch, "pages")?;
    let sampled = column::<UInt32Array>(batch, "pages_sampled")?;
    let first = column::<UInt32Array>(batch, "first_night")?;
    let last = column::<UInt32Array>(batch, "last_night")?;
    let fraction = column::<Float64Array>(batch, "templated_fraction")?;
    Some(
        (0..batch.num_rows())
            .map(|i| HostState {
                host: host.value(i).to_string(),
                pages: pages.value(i),
                pages_sampled: sampled.value(i),
                first_night: first.value(i),
                last_night: last.value(i),
                templated_fraction: (!fraction.is_null(i)).then(|| fraction.value(i)),
            })
            .collect(),
    )
}

fn read_samples(batch: &RecordBatch) -> Option<Vec<(String, u64, Vec<u64>)>> {
    let host = column::<StringArray>(batch, "host")?;
    let key = column::<UInt64Array>(batch, "url_key")?;
    let prints = column::<ListArray>(batch, "fingerprints")?;
    (0..batch.num_rows())
        .map(|i| {
            let page = prints.value(i);
            let page = page.as_any().downcast_ref::<UInt64Array>()?;
            Some((
                host.value(i).to_string(),
                key.value(i),
                page.values().to_vec(),
            ))
        })
        .collect()
}

fn read_templates(batch: &RecordBatch) -> Option<Vec<TemplateRow>> {
    let string = |name| column::<StringArray>(batch, name);
    let (host, method, path, text, url) = (
        string("host")?,
        string("method")?,
        string("path")?,
        string("text_sample")?,
        string("url")?,
    );
    let hash = column::<UInt64Array>(batch, "hash")?;
    let with = column::<UInt32Array>(batch, "pages_with")?;
    let sampled = column::<UInt32Array>(batch, "pages_sampled")?;
    let node = column::<UInt32Array>(batch, "node")?;
    // Optional: a state holds SiteLevel(θ)'s rows only, which have no cluster.
    let cluster = column::<UInt32Array>(batch, "cluster");
    Some(
        (0..batch.num_rows())
            .map(|i| TemplateRow {
                host: host.value(i).to_string(),
                method: method.value(i).to_string(),
                hash: hash.value(i),
                pages_with: with.value(i),
                pages_sampled: sampled.value(i),
                path: path.value(i).to_string(),
                text_sample: text.value(i).to_string(),
                url: url.value(i).to_string(),
                node: node.value(i),
                cluster: cluster.and_then(|c| (!c.is_null(i)).then(|| c.value(i))),
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn statistics() -> serde_json::Value {
        serde_json::json!({"theta": 0.1})
    }

    /// A night builds on the current generation; a rerun of the night that made it builds on
    /// its parent instead; other parameters are refused.
    #[test]
    fn a_rerun_of_the_last_night_builds_on_its_parent() {
        let root = std::env::temp_dir().join(format!("stencil-state-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let first = Plan::open(&root, statistics(), "a".into(), None).unwrap();
        assert_eq!((first.night(), first.base()), (1, None));
        first.prepare().unwrap();
        first.commit().unwrap();
        let second = Plan::open(&root, statistics(), "b".into(), None).unwrap();
        assert_eq!(second.night(), 2);
        assert_eq!(second.base(), Some(root.join("night-000001").as_path()));
        second.prepare().unwrap();
        second.commit().unwrap();
        let again = Plan::open(&root, statistics(), "b".into(), None).unwrap();
        assert_eq!(again.night(), 2);
        assert_eq!(again.base(), Some(root.join("night-000001").as_path()));
        let other = Plan::open(&root, serde_json::json!({"theta": 0.2}), "c".into(), None);
        assert!(other.unwrap_err().contains("theta"));
        let (dir, manifest) = current(&root).unwrap().unwrap();
        assert_eq!((dir, manifest.night), (root.join("night-000002"), 2));
        let _ = std::fs::remove_dir_all(&root);
    }
}
