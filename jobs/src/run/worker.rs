//! One worker's part of a job: stage 1 (reading and parsing its share of the files) and the
//! driving of stages 2 to 6 in order.

use std::collections::BTreeSet;
use std::sync::atomic::Ordering;
use std::time::Instant;

use stencil_operators::contain::{contain, Panic};
use stencil_operators::dom::subtree::summarize;
use stencil_operators::inventory::{for_each_record, Inventory, RecordEntry};
use stencil_operators::page_models::model::StratifiedSample;
use stencil_operators::reading::page::Page;
use stencil_operators::site::etdm::label_tree_exact;
use stencil_operators::site::labels::Scheme;
use stencil_operators::site::site_level::{site_of, url_key};
use timely::worker::Worker;

use super::finish::{failed_row, finish, Finished, Parts, SiteView, Tally};
use super::job::{Job, Layout, ModelPlan, SiteSource, TrainingRows};
use super::report::{gather_reports, WorkerReport};
use super::resume::{self, ShareStart};
use super::site_templates::site_roots;
use super::store::{Kept, PageMeta, Store};
use crate::fit::fit_and_broadcast;
use crate::model_file::write_model;
use crate::score::Scorer;
use crate::site::dataflow::{self, HostFact, LocalFindings};
use crate::site::statistics::Learned;
use crate::tables::{self, PartName, RecordRow};

/// One worker's whole job. Returns the merged report of all workers on worker 0.
pub(super) fn run_worker(worker: &mut Worker, job: &Job) -> Result<Option<WorkerReport>, String> {
    let (index, peers) = (worker.index(), worker.peers());
    let mine = crate::files::shares(index, peers, job.files.len());
    let mut report = WorkerReport::default();
    let mut clock = Instant::now();
    let counters = job.reporter.clone();
    let here = crate::crash::Whereabouts::register(index);
    here.stage("read and parse");
    let stage_of = here.clone();
    // Each stage's time, and (on worker 0) the progress line names the stage that follows.
    let mut lap = |report: &mut WorkerReport, stage: &str, next: &'static str| {
        report
            .seconds
            .push((stage.to_string(), clock.elapsed().as_secs_f64()));
        report
            .peak_rss
            .extend(super::report::peak_rss().map(|bytes| (stage.to_string(), bytes)));
        clock = Instant::now();
        stage_of.stage(next);
        if index == 0 {
            counters.set_stage(next);
        }
    };
    // A failure to write stops this worker's work but not its part in the dataflows, or the
    // other workers would wait for it forever.
    let mut failure: Option<String> = None;
    // `apply` writes parts per file share (made as each share begins), `run` per worker.
    let by_share = job.layout == Layout::FileShares;
    let mut parts = match by_share {
        true => None,
        false => Parts::create(&job.out, index, job)
            .map_err(|e| failure = Some(e))
            .ok(),
    };

    // 1. Read: records, parse once, keep (or, in `apply`, finish at once).
    let learn = matches!(job.site, SiteSource::Learn { .. });
    let mut local = match &job.site {
        SiteSource::Learn { statistics, .. } => Some(statistics.local()),
        _ => None,
    };
    let mut store = Store::new(
        job.worker_budget,
        job.spill_dir.join(format!("worker-{index:05}")),
    );
    let mut findings = LocalFindings::default();
    let mut tally = Tally::default();
    // Pages counted as parsed that a later stage panicked on (they move to `error`).
    let mut late_panics = 0u64;
    let mut loaded_hosts: BTreeSet<String> = BTreeSet::new();
    let direct_scorer = match (&job.plan, learn) {
        (ModelPlan::Given(model, source), false) => {
            report.model = Some(source.clone());
            Some(Scorer {
                model: model.clone(),
                smoothing: job.smoothing,
            })
        }
        _ => None,
    };
    for &(file, share) in &mine {
        let path = &job.files[file];
        let name = &job.names[file];
        let mut last = stencil_operators::inventory::Progress::default();
        let counters = &job.reporter;
        here.file(name);
        if by_share && job.resume {
            if let Some(entry) = resume::finished(job, file, share) {
                let totals = (&mut tally, &mut late_panics);
                entry.restore(job, &mut report, totals, &mut findings, &mut loaded_hosts);
                continue;
            }
        }
        if by_share && failure.is_none() {
            parts = Parts::create(&job.out, PartName::share(file, share.part), job)
                .map_err(|e| failure = Some(e))
                .ok();
        }
        let start = ShareStart::new((file, share), &tally, late_panics, &findings);
        let mut inventory = Inventory::default();
        // The share's hosts with site templates (`apply --site-templates`).
        let mut site_hosts: BTreeSet<String> = BTreeSet::new();
        let visit = |entry: RecordEntry, page: Option<(Box<Page>, stencil_operators::dom::Dom)>| {
            here.offset(entry.offset);
            crate::crash::inject_worker_fault(index);
            crate::crash::kill_point("record");
            if failure.is_some() {
                return;
            }
            let Some(parts) = parts.as_mut() else { return };
            let Some((page, dom)) = page else {
                let row = RecordRow {
                    warc_file: name.clone(),
                    entry,
                };
                failure = parts.records.push(row).err();
                return;
            };
            // A page's `records` row is written when the page is finished, so that a panic
            // in any later stage can still be its outcome.
            let meta = meta_of(&page, &entry, file);
            let hashed = contain("hashes", || {
                crate::crash::enter("hashes", &page.url);
                let sums = summarize(&dom, &page.host);
                let host = site_of(&page.host);
                let offered = match (&job.site, &local) {
                    (SiteSource::Learn { statistics, .. }, Some(local)) if !host.is_empty() => {
                        let key = url_key(&page.url);
                        let offer = statistics.prepare(local, (&page.url, host, key), &dom, &sums);
                        Some((key, offer))
                    }
                    _ => None,
                };
                (sums, offered)
            });
            let (sums, offered) = match hashed {
                Ok(hashed) => hashed,
                Err(panic) => {
                    late_panics += 1;
                    failure = parts.records.push(failed_row(name, &meta, &panic)).err();
                    return;
                }
            };
            if let (SiteSource::Learn { statistics, .. }, Some(local), Some((key, offer))) =
                (&job.site, local.as_mut(), offered)
            {
                statistics.offer(local, site_of(&page.host), key, offer);
            }
            // `dom::parse` sizes the arena exactly: a kept page holds no growth slack.
            let kept = Kept { meta, dom, sums };
            drop(page);
            let result = match &direct_scorer {
                Some(scorer) => {
                    let host = site_of(&kept.meta.host);
                    let site = match &job.site {
                        SiteSource::Loaded(models) => models.get(host),
                        _ => None,
                    };
                    if site.is_some() && !site_hosts.contains(host) {
                        site_hosts.insert(host.to_string());
                    }
                    let roots = site.map(|model| {
                        contain("labels", || {
                            crate::crash::enter("labels", &kept.meta.url);
                            site_roots(&kept, model, Scheme::Paper)
                        })
                    });
                    let finished = match roots.transpose() {
                        Ok(roots) => {
                            let site = roots.map(|roots| SiteView {
                                roots,
                                ..SiteView::default()
                            });
                            finish(kept, site, scorer, job)
                        }
                        Err(panic) => Finished::Failed(failed_row(name, &kept.meta, &panic)),
                    };
                    finished.commit(parts, &mut findings, &mut tally, &mut late_panics)
                }
                None => store.push(kept),
            };
            if let Err(e) = result {
                failure = Some(e);
            }
        };
        let progress = |p: stencil_operators::inventory::Progress| {
            let add = |counter: &std::sync::atomic::AtomicU64, now: u64, before: u64| {
                counter.fetch_add(now.saturating_sub(before), Ordering::Relaxed);
            };
            // A shared file's bytes are counted by its first reader only.
            if share.part == 0 {
                add(&counters.input_bytes, p.offset, last.offset);
            }
            add(&counters.pages, p.pages, last.pages);
            add(&counters.html_bytes, p.html_bytes, last.html_bytes);
            last = p;
        };
        let result = for_each_record(path, &job.limits, share, &mut inventory, visit, progress);
        report.inventory.merge(&inventory);
        // Every reader of a shared file meets the same failure; its first reader reports it.
        // Keep going: the file's records read so far are in `records`; the run fails at the
        // end, naming the file.
        let read_failure = match (result, share.part) {
            (Err(e), 0) => Some(format!("{}: {e}", path.display())),
            _ => None,
        };
        report.failures.extend(read_failure.clone());
        // `apply`: the share's parts, then its entry, which makes it finished.
        if by_share && failure.is_none() {
            if let Some(done) = parts.take() {
                let totals = (&tally, late_panics);
                let written = done.finish().and_then(|_| {
                    let (found, hosts) = (&findings, &site_hosts);
                    start.write_entry(job, inventory, totals, found, hosts, read_failure)
                });
                failure = written.err();
            }
        }
        loaded_hosts.extend(site_hosts);
    }
    let next = if learn {
        "site statistics"
    } else {
        "hosts and tables"
    };
    lap(&mut report, "read and parse", next);

    // `--state`: the state's rows of tonight's hosts, tonight's sample and the models, for
    // writing the next generation at the end.
    let mut nightly = None;
    if let (SiteSource::Learn { statistics, scheme }, Some(mut local)) = (&job.site, local) {
        // 2. Site statistics, with the state's share of tonight's hosts added to the sample.
        // ETDM then wants the exact label trees of each host's key page and complete
        // subdigraph, which only the workers holding them can make.
        let carried = match (&job.state, local.sample_mut()) {
            (Some(plan), Some(sample)) => {
                let k = statistics.params.host_sample;
                let (carried, failed) = crate::site::state::load(worker, plan, sample, k);
                if let Some(e) = failed {
                    failure.get_or_insert(e);
                }
                Some(carried)
            }
            _ => None,
        };
        let (learned, sample) = statistics.learn(worker, local);
        let models = match learned {
            Learned::Templates(templates) => templates,
            Learned::Etdm(pending) => {
                let mut trees = Vec::new();
                let made = store.for_each(|_, kept| {
                    let host = site_of(&kept.meta.host);
                    if let Some(place) = pending.wanted(&kept.meta.url, host) {
                        // A page that panics here is left out of its host's ETDM; its
                        // labelling meets the same page and records the panic.
                        if let Ok(tree) = contain("labels", || label_tree_exact(&kept.dom)) {
                            trees.push((host.to_string(), place, tree));
                        }
                    }
                    Ok(())
                });
                if let Err(e) = made {
                    failure.get_or_insert(e);
                }
                pending.finish(worker, trees)
            }
        };
        lap(&mut report, "site statistics", "labels");

        // 3. Labels, site-level fractions, training rows and the sample. The state's
        // descriptions of tonight's hosts' templates go first: a page's occurrence of a
        // template is then described only when it would replace the state's.
        if let (Some(carried), Some(plan)) = (&carried, &job.state) {
            carried.offer(plan.night(), &models, &mut findings);
        }
        let mut train_sample = match &job.plan {
            ModelPlan::Train(settings) => Some(StratifiedSample::new(settings.sample_cap)),
            ModelPlan::Given(..) => None,
        };
        // Per kept page: its template roots (`None` without a labelled host model), or the
        // panic that stopped its labelling.
        let mut roots_of: Vec<Result<Option<SiteView>, Panic>> =
            (0..store.len()).map(|_| Ok(None)).collect();
        // A sampled page's features, computed for its examples, are kept for its scoring while
        // the kept pages leave room for them under the budget; past it they are computed again.
        let mut room = store.room();
        let room_before = room;
        let training_rows = parts.as_ref().is_some_and(|p| p.training.is_some());
        let has_model = |meta: &PageMeta| models.contains_key(site_of(&meta.host));
        let labelled = store.for_each_where(has_model, |ordinal, kept| {
            let Some(model) = models.get(site_of(&kept.meta.host)) else {
                return Ok(());
            };
            let training = (
                training_rows && failure.is_none(),
                job.training_rows == TrainingRows::All,
            );
            let labels = contain("labels", || {
                crate::crash::enter("labels", &kept.meta.url);
                crate::site::label_page(
                    (&kept.meta.url, &kept.meta.host),
                    &kept.dom,
                    &kept.sums,
                    model,
                    *scheme,
                    &findings,
                    training,
                    train_sample.is_some(),
                )
            });
            let labels = match labels {
                Ok(labels) => labels,
                Err(panic) => {
                    roots_of[ordinal] = Err(panic);
                    return Ok(());
                }
            };
            let committed = labels.commit(&kept.meta.host, &mut findings, train_sample.as_mut());
            let mut computed = committed.computed;
            let bytes = computed.as_ref().map_or(0, |c| c.heap_bytes());
            match room.checked_sub(bytes) {
                Some(left) => room = left,
                None => computed = None,
            }
            roots_of[ordinal] = Ok(model.labelled().then(|| SiteView {
                roots: committed
                    .roots
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| r.is_some())
                    .map(|(i, _)| i as u32)
                    .collect(),
                sections: committed.sections,
                training: committed.training,
                computed,
            }));
            Ok(())
        });
        if let Err(e) = labelled {
            failure.get_or_insert(e);
        }
        store.hold(room_before - room);
        for (host, templates) in &models {
            findings
                .facts
                .push((host.clone(), HostFact::of_templates(templates)));
        }
        lap(&mut report, "labels", "training");

        // 4. The model.
        let scorer = match &job.plan {
            ModelPlan::Given(model, source) => {
                report.model = Some(source.clone());
                Ok(model.clone())
            }
            ModelPlan::Train(settings) => {
                let sample = train_sample.unwrap_or_else(|| StratifiedSample::new(1));
                report.examples_offered = sample.offered();
                fit_and_broadcast(worker, sample, settings).map(|trained| {
                    report.model = Some(match &trained.fallback {
                        Some(_) => "shipped".to_string(),
                        None => "trained".to_string(),
                    });
                    report.fallback = trained.fallback;
                    trained.model
                })
            }
        }
        .map(|model| Scorer {
            model,
            smoothing: job.smoothing,
        });
        lap(
            &mut report,
            "training",
            "scoring, smoothing and cleaning pages",
        );
        let scorer = match scorer {
            Ok(scorer) => Some(scorer),
            Err(e) => {
                failure.get_or_insert(e);
                None
            }
        };
        if let (Some(scorer), 0, ModelPlan::Train(_), None) =
            (&scorer, index, &job.plan, &report.fallback)
        {
            write_model(&job.out, &scorer.model).unwrap_or_else(|e| failure = Some(e));
        }

        // 5. Pages.
        report.spilled_pages = store.spilled_pages;
        report.spilled_bytes = store.spilled_bytes;
        report.peak_kept_bytes = store.peak_memory as u64;
        let finished = store.drain(|ordinal, kept| {
            let Some(parts) = parts.as_mut() else {
                return Ok(());
            };
            let warc_file = &job.names[kept.meta.file as usize];
            let (Some(scorer), None) = (&scorer, &failure) else {
                // The run has failed; its `records` still account for every page read.
                let entry = kept.meta.record_entry(None);
                let row = RecordRow {
                    warc_file: warc_file.clone(),
                    entry,
                };
                let _ = parts.records.push(row);
                return Ok(());
            };
            let roots = roots_of
                .get_mut(ordinal)
                .map_or(Ok(None), |slot| std::mem::replace(slot, Ok(None)));
            let finished = match roots {
                Ok(roots) => finish(kept, roots, scorer, job),
                Err(panic) => Finished::Failed(failed_row(warc_file, &kept.meta, &panic)),
            };
            finished.commit(parts, &mut findings, &mut tally, &mut late_panics)
        });
        if let Err(e) = finished {
            failure.get_or_insert(e);
        }
        lap(&mut report, "pages", "hosts and tables");
        if let (Some(carried), Some(sample)) = (carried, sample) {
            nightly = Some((carried, sample, models));
        }
    }

    report.inventory.pages_panicked(late_panics);
    report.pages = tally.pages;
    report.segments = tally.segments;
    report.quantized_pages = tally.quantized;
    if let SiteSource::Loaded(models) = &job.site {
        for host in loaded_hosts {
            let templates = models.get(&host).map_or(0, |m| m.counts.len() as u64);
            findings.facts.push((
                host,
                HostFact::Model {
                    pages: 0,
                    pages_sampled: 0,
                    labelled: true,
                    min_count: 1,
                    template_hashes: templates,
                    method: None,
                },
            ));
        }
    }

    // 6. Hosts and site templates.
    let (template_rows, host_rows) = dataflow::gather(worker, findings);
    report.template_rows = template_rows.len() as u64;
    report.hosts = host_rows.len() as u64;
    report.site_level_hosts = host_rows.iter().filter(|h| h.site_level).count() as u64;
    if let (Some((carried, sample, models)), Some(plan)) = (nightly, &job.state) {
        let tonight = crate::site::state::Tonight {
            sample: &sample,
            models: &models,
            templates: template_rows.clone(),
            hosts: &host_rows,
        };
        let saved = crate::site::state::save(worker, plan, carried, tonight, failure.is_some());
        let written = saved.and_then(|changes| {
            report.template_changes = changes.len() as u64;
            crate::site::state::write_changes(&job.out, index, &changes).map(|_| ())
        });
        if let (Err(e), None) = (written, &failure) {
            failure = Some(e);
        }
    }
    if failure.is_none() {
        let written = (|| {
            let templates = learn.then_some(template_rows.as_slice());
            tables::write_host_tables(&job.out, index, templates, &host_rows)?;
            if let Some(parts) = parts.take() {
                report.training_rows = parts.finish()?;
            }
            Ok::<(), String>(())
        })();
        if let Err(e) = written {
            failure = Some(e);
        }
    }
    lap(&mut report, "hosts and tables", "done");
    if let Some(e) = failure {
        report.failures.push(e);
    }
    Ok(gather_reports(worker, report))
}

fn meta_of(page: &Page, entry: &RecordEntry, file: usize) -> PageMeta {
    PageMeta {
        url: page.url.clone(),
        host: page.host.clone(),
        file: file as u32,
        offset: page.position.offset,
        record_id: page.record_id.clone(),
        fetch_date: page.fetch_date.clone(),
        http_status: page.http_status,
        charset: page.encoding.name().to_string(),
        truncated: page.truncated.map(|t| t.as_str().to_string()),
        html_bytes: page.body_bytes as u64,
        offset_in_member: entry.offset_in_member,
        record_type: entry.record_type.clone(),
        target_uri: entry.target_uri.clone(),
        mime_type: entry.mime_type.clone(),
    }
}
