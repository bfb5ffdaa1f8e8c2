//! The end of a page's journey (stage 5): its rows made under containment, and the worker's
//! part files they stream to.

use std::path::Path;
use std::sync::Arc;

use stencil_operators::contain::{contain, Panic};
use stencil_operators::dom::subtree::Subtree;
use stencil_operators::dom::Dom;
use stencil_operators::fractions::{self, Fractions};
use stencil_operators::page_models::features::{Computed, PageFeatures};
use stencil_operators::site::labels::{Label, Scheme};
use stencil_operators::site::sections::Section;
use stencil_operators::site::site_level::site_of;

use super::job::{Job, SiteSource, TrainingRows};
use super::page;
use super::store::{Kept, PageMeta};
use crate::score::Scorer;
use crate::site::dataflow::{HostFact, LocalFindings};
use crate::tables::{
    PageRow, PartName, RecordRow, Rows, SegmentRow, StreamingPart, TrainingColumns,
};

/// What `finish` counts.
#[derive(Default)]
pub(super) struct Tally {
    pub(super) pages: u64,
    pub(super) segments: u64,
    pub(super) quantized: u64,
}

/// A page at the end of its journey: its rows, or the `records` row of the panic that
/// stopped it (and no other row).
// Made once per page and consumed at once: the size of the rarer variant costs nothing.
#[allow(clippy::large_enum_variant)]
pub(super) enum Finished {
    Done {
        record: RecordRow,
        page: PageRow,
        segments: Vec<SegmentRow>,
        quantized: bool,
        training: Option<TrainingPage>,
    },
    Failed(RecordRow),
}

/// What a page's `training` rows are made of, written with its other rows.
pub(super) struct TrainingPage {
    url: String,
    host: String,
    dom: Dom,
    sums: Vec<Subtree>,
    labels: Vec<Option<Label>>,
    features: PageFeatures,
    scheme: Scheme,
}

impl Finished {
    /// Writes the page's rows and counts them.
    pub(super) fn commit(
        self,
        parts: &mut Parts,
        findings: &mut LocalFindings,
        tally: &mut Tally,
        late_panics: &mut u64,
    ) -> Result<(), String> {
        match self {
            Finished::Done {
                record,
                page,
                segments,
                quantized,
                training,
            } => {
                if let (Some(page), Some(part)) = (training, parts.training.as_mut()) {
                    crate::site::write_training_rows(
                        (&page.url, &page.host),
                        (&page.dom, &page.sums),
                        page.scheme,
                        &page.labels,
                        &page.features,
                        part,
                    )?;
                }
                parts.records.push(record)?;
                tally.segments += segments.len() as u64;
                tally.quantized += u64::from(quantized);
                for row in segments {
                    parts.segments.push(row)?;
                }
                if !page.host.is_empty() {
                    findings.facts.push((
                        page.host.clone(),
                        HostFact::Fractions(page::fraction_bits(&page)),
                    ));
                }
                parts.pages.push(page)?;
                tally.pages += 1;
            }
            Finished::Failed(record) => {
                *late_panics += 1;
                parts.records.push(record)?;
            }
        }
        Ok(())
    }
}

/// What the site-level statistics say of a page: its template roots and, on a tree-regex host,
/// its sections (seed 003), which become its `segments` rows; and what its labelling leaves
/// for its `training` rows.
#[derive(Default)]
pub(super) struct SiteView {
    pub(super) roots: Vec<u32>,
    pub(super) sections: Vec<Section>,
    /// The labels of the page's nodes, when it gives `training` rows (with `scheme`).
    pub(super) training: Option<Vec<Option<Label>>>,
    /// The page's features, when its labelling computed them.
    pub(super) computed: Option<Computed>,
}

/// Stage 5 for one page, contained: its `pages`, `segments` and `records` rows. `site` is
/// `None` on a host without site-level templates.
pub(super) fn finish(kept: Kept, site: Option<SiteView>, scorer: &Scorer, job: &Job) -> Finished {
    let Kept { meta, dom, sums } = kept;
    let warc_file = &job.names[meta.file as usize];
    let done = contain("features", || {
        crate::crash::enter("features", &meta.url);
        let (roots, sections, training, computed) = match site {
            Some(view) => (
                Some(view.roots),
                view.sections,
                view.training,
                view.computed,
            ),
            None => (None, Vec::new(), None, None),
        };
        let inside = roots.map(|roots| dom.inside_subtrees(&roots));
        let mut analysis = page::analyse(
            (&dom, &sums),
            scorer,
            &job.content,
            inside.as_deref(),
            job.options,
            &meta.url,
            computed,
        );
        let site: Option<Fractions> = inside
            .as_ref()
            .map(|inside| fractions::of(&dom, &sums, inside));
        let url: Arc<str> = Arc::from(meta.url.as_str());
        let host: Arc<str> = Arc::from(site_of(&meta.host));
        let segments = match sections.is_empty() {
            true => page::segment_rows(&url, &host, &dom, &sums, &analysis),
            false => page::section_rows(&url, &host, (&dom, &sums), &analysis, &sections),
        };
        let quantized = analysis.segmentation.quantized;
        let record = RecordRow {
            warc_file: warc_file.clone(),
            entry: meta.record_entry(None),
        };
        let features = std::mem::take(&mut analysis.computed.features);
        let page = page::page_row(meta.clone(), warc_file.clone(), &dom, &sums, analysis, site);
        let training = training.map(|labels| TrainingPage {
            url: meta.url.clone(),
            host: meta.host.clone(),
            dom,
            sums,
            labels,
            features,
            scheme: match &job.site {
                SiteSource::Learn { scheme, .. } => *scheme,
                _ => Scheme::Paper,
            },
        });
        Finished::Done {
            record,
            page,
            segments,
            quantized,
            training,
        }
    });
    done.unwrap_or_else(|panic| Finished::Failed(failed_row(warc_file, &meta, &panic)))
}

/// The `records` row of a page that panicked.
pub(super) fn failed_row(warc_file: &Arc<str>, meta: &PageMeta, panic: &Panic) -> RecordRow {
    RecordRow {
        warc_file: warc_file.clone(),
        entry: meta.record_entry(Some(panic)),
    }
}

/// A worker's streaming part files (in `apply`, a file share's).
pub(super) struct Parts {
    pub(super) records: StreamingPart<Rows<RecordRow>>,
    pages: StreamingPart<Rows<PageRow>>,
    segments: StreamingPart<Rows<SegmentRow>>,
    pub(super) training: Option<StreamingPart<TrainingColumns>>,
}

impl Parts {
    /// A worker's parts (`run`), or a file share's (`apply`).
    pub(super) fn create(
        out: &Path,
        name: impl Into<PartName>,
        job: &Job,
    ) -> Result<Parts, String> {
        let name = name.into();
        Ok(Parts {
            records: StreamingPart::records(out, name.clone())?,
            pages: StreamingPart::pages(out, name.clone())?,
            segments: StreamingPart::segments(out, name.clone())?,
            training: match (&job.site, job.training_rows) {
                (SiteSource::Learn { .. }, TrainingRows::Sampled | TrainingRows::All) => {
                    Some(StreamingPart::training(out, name)?)
                }
                _ => None,
            },
        })
    }

    /// Closes every part; returns the training rows written.
    pub(super) fn finish(self) -> Result<u64, String> {
        self.records.finish()?;
        self.pages.finish()?;
        self.segments.finish()?;
        match self.training {
            Some(training) => {
                let rows = training.rows;
                training.finish()?;
                Ok(rows)
            }
            None => Ok(0),
        }
    }
}
