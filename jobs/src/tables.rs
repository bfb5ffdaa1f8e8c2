//! Writing the output tables (and reading them back: [`each_batch`]): zstd Parquet, one part file per worker and table (in `apply`, per
//! file share and table), written under a temporary name and renamed when complete, so a reader
//! (or a rerun) never sees half a file.
//!
//! The rows are plain structs, turned into columns a row group at a time, except `training`'s,
//! whose columns are filled as its rows arrive ([`TrainingColumns`]). Each table's columns come
//! from its one schema in `stencil-schemas`, checked against it when the batch is built.

use std::fs::File;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::builder::StringBuilder;
use arrow_array::{
    ArrayRef, BooleanArray, Float32Array, Float64Array, RecordBatch, StringArray, UInt16Array,
    UInt32Array, UInt64Array, UInt8Array,
};
use arrow_schema::SchemaRef;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::{ArrowWriter, ProjectionMask};
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::schema::types::ColumnPath;
use stencil_operators::dom::metadata::Metadata;

/// Rows per Parquet row group (and per batch handed to the writer).
pub const ROW_GROUP: usize = 64 * 1024;

/// Bytes of buffered row text past which a [`StreamingPart`] of whole rows writes its row group
/// before it has [`ROW_GROUP`] rows: a `pages` row carries the page's cleaned text (tens of KB
/// on long pages), so a row count alone would let a worker hold gigabytes of rows on a large
/// crawl (docs/benchmarks.md, "Memory").
pub const ROW_GROUP_BYTES: usize = 32 << 20;

/// What names a part file between `part-` and `.parquet`: a worker's index (`00003`), or the
/// share of one input file (`f00012-s000`: file 12 of the sorted inputs, share 0), whose parts
/// `apply` finishes file by file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartName(String);

impl PartName {
    /// The parts of share `part` of input file `file`.
    pub fn share(file: usize, part: u64) -> PartName {
        PartName(format!("f{file:05}-s{part:03}"))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The name of a finished part file (`part-NAME.parquet`) and of the one being written
    /// (`.part-NAME.parquet.partial`, which no `part-*.parquet` pattern matches).
    fn files(&self) -> (String, String) {
        (
            format!("part-{}.parquet", self.0),
            format!(".part-{}.parquet.partial", self.0),
        )
    }

    /// The name of a finished part file, if `file` is one.
    pub fn of_file(file: &str) -> Option<PartName> {
        let name = file.strip_prefix("part-")?.strip_suffix(".parquet")?;
        Some(PartName(name.to_string()))
    }
}

/// A worker's parts.
impl From<usize> for PartName {
    fn from(worker: usize) -> PartName {
        PartName(format!("{worker:05}"))
    }
}

/// One part file of one table.
pub struct PartWriter {
    writer: ArrowWriter<File>,
    partial: PathBuf,
    done: PathBuf,
}

impl PartWriter {
    /// `DIR/TABLE/part-NAME.parquet`, where NAME is the worker index or a file share
    /// ([`PartName`]).
    pub fn create(
        dir: &Path,
        table: &str,
        name: impl Into<PartName>,
        schema: SchemaRef,
    ) -> Result<Self, String> {
        let table_dir = dir.join(table);
        std::fs::create_dir_all(&table_dir).map_err(|e| format!("{}: {e}", table_dir.display()))?;
        let (done, partial) = name.into().files();
        let (done, partial) = (table_dir.join(done), table_dir.join(partial));
        let file = File::create(&partial).map_err(|e| format!("{}: {e}", partial.display()))?;
        let mut properties = WriterProperties::builder()
            .set_compression(Compression::ZSTD(ZstdLevel::default()))
            .set_max_row_group_row_count(Some(ROW_GROUP))
            // One data page per column chunk unless it passes the page byte limit: fewer,
            // larger zstd frames compress better and cost less per value.
            .set_data_page_row_count_limit(ROW_GROUP);
        for field in schema.fields() {
            let column = || ColumnPath::from(field.name().as_str());
            // Numbers go plain into zstd: a dictionary costs a hash lookup per value and saves
            // little on `training`'s numeric columns (docs/benchmarks.md). Names, URLs and paths
            // keep theirs.
            if field.data_type().is_numeric() {
                properties = properties.set_column_dictionary_enabled(column(), false);
            }
            // Nobody selects row groups by a score or feature, and float min/max (NaN-aware)
            // is a noticeable part of the cost of writing `training` (docs/benchmarks.md).
            if field.data_type().is_floating() {
                properties =
                    properties.set_column_statistics_enabled(column(), EnabledStatistics::None);
            }
        }
        let writer = ArrowWriter::try_new(file, schema, Some(properties.build()))
            .map_err(|e| format!("{}: {e}", partial.display()))?;
        Ok(PartWriter {
            writer,
            partial,
            done,
        })
    }

    /// Writes `batch` as one row group (at most [`ROW_GROUP`] rows): the writer holds no rows
    /// after it returns.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<(), String> {
        let fail = |e: parquet::errors::ParquetError| format!("{}: {e}", self.partial.display());
        self.writer.write(batch).map_err(fail)?;
        self.writer.flush().map_err(fail)
    }

    /// Closes the file (a Parquet file is invalid until then) and gives it its final name.
    pub fn finish(self) -> Result<PathBuf, String> {
        let fail = |e: &dyn std::fmt::Display| format!("{}: {e}", self.partial.display());
        self.writer.close().map_err(|e| fail(&e))?;
        crate::crash::kill_point("part-closed");
        std::fs::rename(&self.partial, &self.done).map_err(|e| fail(&e))?;
        crate::crash::kill_point("part-renamed");
        Ok(self.done)
    }
}

/// Removes part files of an earlier run, which a run with fewer workers would not overwrite
/// (the names [`PartWriter::create`] gives, finished or not).
pub fn remove_earlier_parts(out: &Path, tables: &[&str]) -> Result<(), String> {
    remove_parts(out, tables, |_| true)
}

/// Removes the part files of `tables` that `which` picks, given each file's name: finished
/// (`part-*`) or being written when a job was killed (`.part-*`).
pub fn remove_parts(
    out: &Path,
    tables: &[&str],
    which: impl Fn(&str) -> bool,
) -> Result<(), String> {
    for table in tables {
        let dir = out.join(table);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if (name.starts_with("part-") || name.starts_with(".part-")) && which(&name) {
                std::fs::remove_file(entry.path())
                    .map_err(|e| format!("{}: {e}", entry.path().display()))?;
            }
        }
    }
    Ok(())
}

/// Writes all `rows` as one part file.
pub fn write_part<R>(
    dir: &Path,
    table: &str,
    worker: usize,
    schema: SchemaRef,
    rows: &[R],
    to_batch: impl Fn(&SchemaRef, &[R]) -> Result<RecordBatch, String>,
) -> Result<PathBuf, String> {
    let mut part = PartWriter::create(dir, table, worker, schema.clone())?;
    for chunk in rows.chunks(ROW_GROUP) {
        part.write(&to_batch(&schema, chunk)?)?;
    }
    part.finish()
}

/// Writes a worker's `site_templates` part (unless `templates` is `None`) and `hosts` part.
pub fn write_host_tables(
    dir: &Path,
    worker: usize,
    templates: Option<&[TemplateRow]>,
    hosts: &[HostRow],
) -> Result<(), String> {
    if let Some(templates) = templates {
        let schema = stencil_schemas::site_templates();
        write_part(
            dir,
            "site_templates",
            worker,
            schema,
            templates,
            templates_batch,
        )?;
    }
    write_part(
        dir,
        "hosts",
        worker,
        stencil_schemas::hosts(),
        hosts,
        hosts_batch,
    )?;
    Ok(())
}

pub(crate) fn batch(schema: &SchemaRef, columns: Vec<ArrayRef>) -> Result<RecordBatch, String> {
    RecordBatch::try_new(schema.clone(), columns).map_err(|e| e.to_string())
}

pub(crate) fn strings<R>(rows: &[R], get: impl Fn(&R) -> &str) -> ArrayRef {
    Arc::new(StringArray::from_iter_values(rows.iter().map(get)))
}

pub(crate) fn u32s<R>(rows: &[R], get: impl Fn(&R) -> u32) -> ArrayRef {
    Arc::new(UInt32Array::from_iter_values(rows.iter().map(get)))
}

pub(crate) fn u64s<R>(rows: &[R], get: impl Fn(&R) -> u64) -> ArrayRef {
    Arc::new(UInt64Array::from_iter_values(rows.iter().map(get)))
}

fn u8s<R>(rows: &[R], get: impl Fn(&R) -> u8) -> ArrayRef {
    Arc::new(UInt8Array::from_iter_values(rows.iter().map(get)))
}

fn bools<R>(rows: &[R], get: impl Fn(&R) -> bool) -> ArrayRef {
    Arc::new(BooleanArray::from_iter(rows.iter().map(|r| Some(get(r)))))
}

fn f32s<R>(rows: &[R], get: impl Fn(&R) -> f32) -> ArrayRef {
    Arc::new(Float32Array::from_iter_values(rows.iter().map(get)))
}

/// A row of `site_templates`.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TemplateRow {
    pub host: String,
    /// The site-level method that found the template (`Method::as_str`).
    pub method: String,
    pub hash: u64,
    pub pages_with: u32,
    pub pages_sampled: u32,
    pub path: String,
    pub text_sample: String,
    pub url: String,
    /// The occurrence's node on its page (kept in the state, not in `site_templates`).
    pub node: u32,
    /// A mapping method's template the block is of, numbered per host in the order of the
    /// groups of sample pages it was learned from; none for SiteLevel(θ).
    pub cluster: Option<u32>,
}

pub fn templates_batch(schema: &SchemaRef, rows: &[TemplateRow]) -> Result<RecordBatch, String> {
    batch(
        schema,
        vec![
            strings(rows, |r| &r.host),
            strings(rows, |r| &r.method),
            u64s(rows, |r| r.hash),
            u32s(rows, |r| r.pages_with),
            u32s(rows, |r| r.pages_sampled),
            Arc::new(Float64Array::from_iter_values(rows.iter().map(|r| {
                f64::from(r.pages_with) / f64::from(r.pages_sampled.max(1))
            }))),
            strings(rows, |r| &r.path),
            strings(rows, |r| &r.text_sample),
            strings(rows, |r| &r.url),
            Arc::new(UInt32Array::from_iter(rows.iter().map(|r| r.cluster))),
        ],
    )
}

/// A row of `hosts`.
#[derive(Clone, Debug, PartialEq)]
pub struct HostRow {
    pub host: String,
    pub pages: u64,
    pub pages_sampled: u32,
    pub site_level: bool,
    pub reason: Option<String>,
    pub min_count: u32,
    pub template_hashes: u64,
    pub pages_with_text: u64,
    pub mean_templated_fraction: Option<f64>,
    pub median_templated_fraction: Option<f64>,
    /// Means of the `pages` fractions, in `stencil_schemas::PAGE_FRACTIONS` order.
    pub mean_fractions: [Option<f64>; 7],
    /// The site-level method whose templates the host has.
    pub method: Option<String>,
    /// Pages too large to map against the host's mapped template (null for SiteLevel(θ)).
    pub pages_unmapped: Option<u64>,
    /// With `--state`: tonight's night number, and the host's mean templated fraction on the
    /// last night the state saw it.
    pub night: Option<u32>,
    pub previous_templated_fraction: Option<f64>,
}

pub fn hosts_batch(schema: &SchemaRef, rows: &[HostRow]) -> Result<RecordBatch, String> {
    batch(
        schema,
        vec![
            strings(rows, |r| &r.host),
            u64s(rows, |r| r.pages),
            u32s(rows, |r| r.pages_sampled),
            bools(rows, |r| r.site_level),
            Arc::new(StringArray::from_iter(
                rows.iter().map(|r| r.reason.as_deref()),
            )),
            u32s(rows, |r| r.min_count),
            u64s(rows, |r| r.template_hashes),
            u64s(rows, |r| r.pages_with_text),
            Arc::new(Float64Array::from_iter(
                rows.iter().map(|r| r.mean_templated_fraction),
            )),
            Arc::new(Float64Array::from_iter(
                rows.iter().map(|r| r.median_templated_fraction),
            )),
        ]
        .into_iter()
        .chain((0..7).map(|k| optional_f64s(rows, |r| r.mean_fractions[k])))
        .chain(std::iter::once(Arc::new(StringArray::from_iter(
            rows.iter().map(|r| r.method.as_deref()),
        )) as ArrayRef))
        .chain(std::iter::once(Arc::new(UInt64Array::from_iter(
            rows.iter().map(|r| r.pages_unmapped),
        )) as ArrayRef))
        .chain(std::iter::once(
            Arc::new(UInt32Array::from_iter(rows.iter().map(|r| r.night))) as ArrayRef,
        ))
        .chain(std::iter::once(optional_f64s(rows, |r| {
            r.previous_templated_fraction
        })))
        .collect(),
    )
}

pub(crate) fn optional_f64s<R>(rows: &[R], get: impl Fn(&R) -> Option<f64>) -> ArrayRef {
    Arc::new(Float64Array::from_iter(rows.iter().map(get)))
}

fn optional_strings<R>(rows: &[R], get: impl Fn(&R) -> Option<&str>) -> ArrayRef {
    Arc::new(StringArray::from_iter(rows.iter().map(get)))
}

fn optional_u16s<R>(rows: &[R], get: impl Fn(&R) -> Option<u16>) -> ArrayRef {
    Arc::new(UInt16Array::from_iter(rows.iter().map(get)))
}

/// A row of `records`.
#[derive(Clone, Debug, PartialEq)]
pub struct RecordRow {
    pub warc_file: Arc<str>,
    pub entry: stencil_operators::inventory::RecordEntry,
}

pub fn records_batch(schema: &SchemaRef, rows: &[RecordRow]) -> Result<RecordBatch, String> {
    batch(
        schema,
        vec![
            strings(rows, |r| &r.warc_file),
            u64s(rows, |r| r.entry.offset),
            u64s(rows, |r| r.entry.offset_in_member),
            optional_strings(rows, |r| r.entry.record_type.as_deref()),
            optional_strings(rows, |r| r.entry.target_uri.as_deref()),
            optional_strings(rows, |r| r.entry.record_id.as_deref()),
            optional_u16s(rows, |r| r.entry.http_status),
            optional_strings(rows, |r| r.entry.mime_type.as_deref()),
            strings(rows, |r| r.entry.outcome),
            optional_strings(rows, |r| r.entry.reason),
            optional_strings(rows, |r| r.entry.detail.as_deref()),
        ],
    )
}

/// A row of `pages`.
#[derive(Clone, Debug, PartialEq)]
pub struct PageRow {
    pub url: String,
    pub host: String,
    pub warc_file: Arc<str>,
    pub warc_offset: u64,
    pub record_id: Option<String>,
    pub fetch_date: Option<String>,
    pub http_status: Option<u16>,
    pub charset: String,
    pub truncated: Option<String>,
    pub html_bytes: u64,
    pub dom_nodes: u32,
    pub text_chars: u32,
    pub words: u32,
    pub links: u32,
    pub title: Option<String>,
    pub segments: u32,
    /// In `stencil_schemas::PAGE_FRACTIONS` order.
    pub fractions: [Option<f64>; 7],
    /// In `stencil_schemas::CONTENT_FRACTIONS` order.
    pub content_fractions: [Option<f64>; 2],
    pub main_content_chars: u64,
    pub cleaned_text: String,
    pub cleaned_markdown: Option<String>,
    /// What the page says about itself: the `stencil_schemas::PAGE_METADATA` columns.
    pub metadata: Metadata,
    /// The language of `cleaned_text` (`metadata::detected_language`).
    pub lang_detected: Option<String>,
}

pub fn pages_batch(schema: &SchemaRef, rows: &[PageRow]) -> Result<RecordBatch, String> {
    let mut columns = vec![
        strings(rows, |r| &r.url),
        strings(rows, |r| &r.host),
        strings(rows, |r| &r.warc_file),
        u64s(rows, |r| r.warc_offset),
        optional_strings(rows, |r| r.record_id.as_deref()),
        optional_strings(rows, |r| r.fetch_date.as_deref()),
        optional_u16s(rows, |r| r.http_status),
        strings(rows, |r| &r.charset),
        optional_strings(rows, |r| r.truncated.as_deref()),
        u64s(rows, |r| r.html_bytes),
        u32s(rows, |r| r.dom_nodes),
        u32s(rows, |r| r.text_chars),
        u32s(rows, |r| r.words),
        u32s(rows, |r| r.links),
        optional_strings(rows, |r| r.title.as_deref()),
        u32s(rows, |r| r.segments),
    ];
    columns.extend((0..7).map(|k| optional_f64s(rows, |r| r.fractions[k])));
    columns.extend((0..2).map(|k| optional_f64s(rows, |r| r.content_fractions[k])));
    columns.push(u64s(rows, |r| r.main_content_chars));
    columns.push(strings(rows, |r| &r.cleaned_text));
    columns.push(optional_strings(rows, |r| r.cleaned_markdown.as_deref()));
    let fields: [fn(&PageRow) -> Option<&str>; 10] = [
        |r| r.metadata.canonical_url.as_deref(),
        |r| r.metadata.title.as_deref(),
        |r| r.metadata.author.as_deref(),
        |r| r.metadata.published.as_deref(),
        |r| r.metadata.modified.as_deref(),
        |r| r.metadata.site_name.as_deref(),
        |r| r.metadata.description.as_deref(),
        |r| r.metadata.lang.as_deref(),
        |r| r.lang_detected.as_deref(),
        |r| r.metadata.page_type.as_deref(),
    ];
    columns.extend(fields.into_iter().map(|get| optional_strings(rows, get)));
    batch(schema, columns)
}

/// A row of `segments`.
#[derive(Clone, Debug, PartialEq)]
pub struct SegmentRow {
    pub id: NodeId,
    pub score: Option<f32>,
    pub smoothed: f32,
    pub text_chars: u32,
    pub template: bool,
    /// Seed 003's importance of a tree-regex section; `None` for a smoothed one.
    pub importance: Option<f32>,
    /// Sibling subtrees the section spans from its node (a list's items, a run of inline
    /// nodes); 1 for a smoothed section.
    pub siblings: u32,
}

pub fn segments_batch(schema: &SchemaRef, rows: &[SegmentRow]) -> Result<RecordBatch, String> {
    let mut columns = node_columns(rows, |r| &r.id);
    columns.extend([
        Arc::new(Float32Array::from_iter(rows.iter().map(|r| r.score))) as ArrayRef,
        f32s(rows, |r| r.smoothed),
        u32s(rows, |r| r.text_chars),
        bools(rows, |r| r.template),
        Arc::new(Float32Array::from_iter(rows.iter().map(|r| r.importance))) as ArrayRef,
        u32s(rows, |r| r.siblings),
    ]);
    batch(schema, columns)
}

/// Which node of which page a row is about: the leading columns of `node_scores` and
/// `segments` (`training` has them too, from a [`TrainingRow`]).
#[derive(Clone, Debug, PartialEq)]
pub struct NodeId {
    pub url: Arc<str>,
    pub host: Arc<str>,
    pub node: u32,
    pub path: String,
    /// An interned tag name: a copy, not an allocation, per row.
    pub tag: stencil_operators::dom::LocalName,
    pub depth: u32,
}

impl NodeId {
    /// Node `node` of a page whose URL, site and paths (`Dom::paths`) the caller shares
    /// between the page's rows.
    pub fn new(
        url: &Arc<str>,
        host: &Arc<str>,
        dom: &stencil_operators::dom::Dom,
        node: usize,
        path: String,
    ) -> NodeId {
        NodeId {
            url: url.clone(),
            host: host.clone(),
            node: node as u32,
            path,
            tag: dom.tag(node).cloned().unwrap_or_default(),
            depth: dom.node(node).depth,
        }
    }
}

fn node_columns<R>(rows: &[R], get: impl Fn(&R) -> &NodeId) -> Vec<ArrayRef> {
    vec![
        strings(rows, |r| &get(r).url),
        strings(rows, |r| &get(r).host),
        u32s(rows, |r| get(r).node),
        strings(rows, |r| &get(r).path),
        strings(rows, |r| &get(r).tag),
        u32s(rows, |r| get(r).depth),
    ]
}

const FEATURES: usize = stencil_operators::page_models::features::COUNT;

/// A row of `training`, borrowed from the page it describes: a part holds hundreds of
/// thousands of these, and the columns copy what they need.
pub struct TrainingRow<'a> {
    pub url: &'a str,
    pub host: &'a str,
    pub dom: &'a stencil_operators::dom::Dom,
    pub node: usize,
    /// The node's `Dom::path`.
    pub path: &'a str,
    pub label: &'static str,
    pub scheme: &'static str,
    pub subtree: &'a stencil_operators::dom::subtree::Subtree,
    pub area: f32,
    pub bucket: u8,
    pub features: &'a [f32; FEATURES],
}

/// `training`'s columns, filled as rows arrive rather than from rows kept whole and taken
/// apart later: each value is copied once, strings included, and nothing is allocated per row.
pub struct TrainingColumns {
    url: StringBuilder,
    host: StringBuilder,
    node: Vec<u32>,
    path: StringBuilder,
    tag: StringBuilder,
    depth: Vec<u32>,
    label: StringBuilder,
    scheme: StringBuilder,
    /// `content_hash`, `structure_hash`.
    hashes: [Vec<u64>; 2],
    /// The `Subtree` counts, in column order (`text_chars` … `text_offset`).
    counts: [Vec<u32>; 9],
    area: Vec<f32>,
    bucket: Vec<u8>,
    /// The exception: features stay in rows until `take`. Pushing each value onto its own
    /// column would write 50 streams at once, which costs more than one copy of the row at
    /// `push` and a pass over cache-sized blocks of rows at `take`.
    features: Vec<[f32; FEATURES]>,
}

impl TrainingColumns {
    fn new() -> Self {
        let text =
            |bytes_per_row| StringBuilder::with_capacity(ROW_GROUP, ROW_GROUP * bytes_per_row);
        // Bytes per row somewhat above the evaluation crawl's means, so that a row group
        // rarely grows a buffer; untouched capacity costs no memory.
        TrainingColumns {
            url: text(64),
            host: text(32),
            node: Vec::with_capacity(ROW_GROUP),
            path: text(192),
            tag: text(8),
            depth: Vec::with_capacity(ROW_GROUP),
            label: text(12),
            scheme: text(5),
            hashes: std::array::from_fn(|_| Vec::with_capacity(ROW_GROUP)),
            counts: std::array::from_fn(|_| Vec::with_capacity(ROW_GROUP)),
            area: Vec::with_capacity(ROW_GROUP),
            bucket: Vec::with_capacity(ROW_GROUP),
            features: Vec::with_capacity(ROW_GROUP),
        }
    }
}

impl RowBuffer for TrainingColumns {
    type Row<'a> = TrainingRow<'a>;

    fn push(&mut self, row: TrainingRow<'_>) {
        self.url.append_value(row.url);
        self.host.append_value(row.host);
        self.node.push(row.node as u32);
        self.path.append_value(row.path);
        self.tag
            .append_value(row.dom.tag(row.node).map_or("", |tag| &**tag));
        self.depth.push(row.dom.node(row.node).depth);
        self.label.append_value(row.label);
        self.scheme.append_value(row.scheme);
        let sums = row.subtree;
        for (column, value) in self
            .hashes
            .iter_mut()
            .zip([sums.content_hash, sums.structure_hash])
        {
            column.push(value);
        }
        let counts = [
            sums.text_chars,
            sums.words,
            sums.links,
            sums.anchor_text_chars,
            sums.intra_host_links,
            sums.images,
            sums.descendants,
            sums.html_bytes,
            sums.text_start,
        ];
        for (column, value) in self.counts.iter_mut().zip(counts) {
            column.push(value);
        }
        self.area.push(row.area);
        self.bucket.push(row.bucket);
        self.features.push(*row.features);
    }

    fn len(&self) -> usize {
        self.node.len()
    }

    /// A `training` row is short (its URL, path and numbers), so its count bounds the buffer.
    fn full(&self) -> bool {
        self.node.len() >= ROW_GROUP
    }

    fn take(&mut self, schema: &SchemaRef) -> Result<RecordBatch, String> {
        let mut full = std::mem::replace(self, TrainingColumns::new());
        let mut features: Vec<Vec<f32>> = (0..FEATURES)
            .map(|_| Vec::with_capacity(full.features.len()))
            .collect();
        // 128 rows (25 KB) stay in the L1 cache while every column copies its values out.
        for block in full.features.chunks(128) {
            for (index, column) in features.iter_mut().enumerate() {
                column.extend(block.iter().map(|row| row[index]));
            }
        }
        // The rows' buffer is kept for the next row group: its pages are already mapped.
        full.features.clear();
        std::mem::swap(&mut self.features, &mut full.features);
        // The vectors become the arrays' buffers as they are, without a copy.
        let u32s = |values: Vec<u32>| Arc::new(UInt32Array::from(values)) as ArrayRef;
        let mut columns: Vec<ArrayRef> = vec![
            Arc::new(full.url.finish()),
            Arc::new(full.host.finish()),
            u32s(full.node),
            Arc::new(full.path.finish()),
            Arc::new(full.tag.finish()),
            u32s(full.depth),
            Arc::new(full.label.finish()),
            Arc::new(full.scheme.finish()),
        ];
        columns.extend(
            full.hashes
                .into_iter()
                .map(|values| Arc::new(UInt64Array::from(values)) as ArrayRef),
        );
        columns.extend(full.counts.into_iter().map(u32s));
        columns.push(Arc::new(Float32Array::from(full.area)));
        columns.push(Arc::new(UInt8Array::from(full.bucket)));
        columns.extend(
            features
                .into_iter()
                .map(|values| Arc::new(Float32Array::from(values)) as ArrayRef),
        );
        batch(schema, columns)
    }
}

/// A row of `node_scores`.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeScoreRow {
    pub id: NodeId,
    pub text_chars: u32,
    pub area: f32,
    pub bucket: u8,
    pub score: f32,
    pub smoothed: f32,
    pub section: bool,
    pub template: bool,
}

pub fn node_scores_batch(schema: &SchemaRef, rows: &[NodeScoreRow]) -> Result<RecordBatch, String> {
    let mut columns = node_columns(rows, |r| &r.id);
    columns.extend([
        u32s(rows, |r| r.text_chars),
        f32s(rows, |r| r.area),
        u8s(rows, |r| r.bucket),
        f32s(rows, |r| r.score),
        f32s(rows, |r| r.smoothed),
        bools(rows, |r| r.section),
        bools(rows, |r| r.template),
    ]);
    batch(schema, columns)
}

/// What a [`StreamingPart`] holds until it has a row group's worth of rows.
pub trait RowBuffer {
    type Row<'a>;
    fn push(&mut self, row: Self::Row<'_>);
    fn len(&self) -> usize;
    /// Whether the rows held make a row group.
    fn full(&self) -> bool;
    /// The rows held, as one batch; the buffer is left empty.
    fn take(&mut self, schema: &SchemaRef) -> Result<RecordBatch, String>;
}

/// What a buffered row holds beside its fixed size: the text that [`ROW_GROUP_BYTES`] bounds.
/// None for rows of short fields, which their row count bounds.
pub trait RowText {
    fn text_bytes(&self) -> usize {
        0
    }
}

impl RowText for PageRow {
    fn text_bytes(&self) -> usize {
        let optional = |s: &Option<String>| s.as_ref().map_or(0, String::len);
        let m = &self.metadata;
        self.url.len()
            + self.cleaned_text.len()
            + optional(&self.cleaned_markdown)
            + optional(&self.title)
            + [
                &m.canonical_url,
                &m.title,
                &m.author,
                &m.published,
                &m.modified,
                &m.site_name,
                &m.description,
            ]
            .into_iter()
            .map(optional)
            .sum::<usize>()
    }
}

impl RowText for RecordRow {}
impl RowText for SegmentRow {}
impl RowText for NodeScoreRow {}

/// Whole rows, turned into columns when a row group is full.
pub struct Rows<R> {
    rows: Vec<R>,
    text_bytes: usize,
    to_batch: fn(&SchemaRef, &[R]) -> Result<RecordBatch, String>,
}

impl<R: RowText> RowBuffer for Rows<R> {
    type Row<'a> = R;

    fn push(&mut self, row: R) {
        self.text_bytes += row.text_bytes();
        self.rows.push(row);
    }

    fn len(&self) -> usize {
        self.rows.len()
    }

    fn full(&self) -> bool {
        self.rows.len() >= ROW_GROUP || self.text_bytes >= ROW_GROUP_BYTES
    }

    fn take(&mut self, schema: &SchemaRef) -> Result<RecordBatch, String> {
        let batch = (self.to_batch)(schema, &self.rows);
        self.rows.clear();
        self.text_bytes = 0;
        batch
    }
}

/// Streams rows into a part file, one row group at a time, so memory does not grow with the
/// input.
pub struct StreamingPart<B> {
    part: PartWriter,
    schema: SchemaRef,
    buffer: B,
    pub rows: u64,
}

impl<B: RowBuffer> StreamingPart<B> {
    fn with_buffer(
        dir: &Path,
        table: &str,
        name: impl Into<PartName>,
        schema: SchemaRef,
        buffer: B,
    ) -> Result<Self, String> {
        Ok(StreamingPart {
            part: PartWriter::create(dir, table, name, schema.clone())?,
            schema,
            buffer,
            rows: 0,
        })
    }

    pub fn push(&mut self, row: B::Row<'_>) -> Result<(), String> {
        self.buffer.push(row);
        self.rows += 1;
        if self.buffer.full() {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), String> {
        if self.buffer.len() > 0 {
            self.part.write(&self.buffer.take(&self.schema)?)?;
        }
        Ok(())
    }

    pub fn finish(mut self) -> Result<PathBuf, String> {
        self.flush()?;
        self.part.finish()
    }
}

impl<R: RowText> StreamingPart<Rows<R>> {
    pub fn create(
        dir: &Path,
        table: &str,
        name: impl Into<PartName>,
        schema: SchemaRef,
        to_batch: fn(&SchemaRef, &[R]) -> Result<RecordBatch, String>,
    ) -> Result<Self, String> {
        let rows = Rows {
            rows: Vec::with_capacity(ROW_GROUP),
            text_bytes: 0,
            to_batch,
        };
        Self::with_buffer(dir, table, name, schema, rows)
    }
}

impl StreamingPart<TrainingColumns> {
    pub fn training(dir: &Path, name: impl Into<PartName>) -> Result<Self, String> {
        let schema = stencil_schemas::training();
        Self::with_buffer(dir, "training", name, schema, TrainingColumns::new())
    }
}

impl StreamingPart<Rows<NodeScoreRow>> {
    pub fn node_scores(dir: &Path, worker: usize) -> Result<Self, String> {
        Self::create(
            dir,
            "node_scores",
            worker,
            stencil_schemas::node_scores(),
            node_scores_batch,
        )
    }
}

impl StreamingPart<Rows<RecordRow>> {
    pub fn records(dir: &Path, name: impl Into<PartName>) -> Result<Self, String> {
        Self::create(
            dir,
            "records",
            name,
            stencil_schemas::records(),
            records_batch,
        )
    }
}

impl StreamingPart<Rows<PageRow>> {
    pub fn pages(dir: &Path, name: impl Into<PartName>) -> Result<Self, String> {
        Self::create(dir, "pages", name, stencil_schemas::pages(), pages_batch)
    }
}

impl StreamingPart<Rows<SegmentRow>> {
    pub fn segments(dir: &Path, name: impl Into<PartName>) -> Result<Self, String> {
        Self::create(
            dir,
            "segments",
            name,
            stencil_schemas::segments(),
            segments_batch,
        )
    }
}

/// Calls `each` with every record batch of the table folder `dir`, its part files
/// (`part-*.parquet`) in name order, each read with only `columns`, until `each` breaks.
/// Returns the number of part files, or `None` when there is no such folder.
pub fn each_batch(
    dir: &Path,
    columns: &[&str],
    mut each: impl FnMut(&RecordBatch) -> Result<ControlFlow<()>, String>,
) -> Result<Option<usize>, String> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{}: {e}", dir.display())),
    };
    let mut parts: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name().is_some_and(|n| {
                let name = n.to_string_lossy();
                name.starts_with("part-") && name.ends_with(".parquet")
            })
        })
        .collect();
    parts.sort();
    for part in &parts {
        let fail = |e: &dyn std::fmt::Display| format!("{}: {e}", part.display());
        let file = File::open(part).map_err(|e| fail(&e))?;
        let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(|e| fail(&e))?;
        let mask = ProjectionMask::columns(builder.parquet_schema(), columns.iter().copied());
        let reader = builder
            .with_projection(mask)
            .build()
            .map_err(|e| fail(&e))?;
        for batch in reader {
            let batch = batch.map_err(|e| fail(&e))?;
            if each(&batch).map_err(|e| fail(&e))?.is_break() {
                return Ok(Some(parts.len()));
            }
        }
    }
    Ok(Some(parts.len()))
}

/// Column `name` of `batch`, as the array type its schema gives it.
pub fn column<'a, A: 'static>(batch: &'a RecordBatch, name: &str) -> Result<&'a A, String> {
    batch
        .column_by_name(name)
        .and_then(|c| c.as_any().downcast_ref::<A>())
        .ok_or_else(|| format!("no column {name} of the type docs/schemas.md gives"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_schema::{DataType, Field, Schema};

    struct Text(String);

    impl RowText for Text {
        fn text_bytes(&self) -> usize {
            self.0.len()
        }
    }

    fn texts(schema: &SchemaRef, rows: &[Text]) -> Result<RecordBatch, String> {
        batch(schema, vec![strings(rows, |r| &r.0)])
    }

    /// Rows of long text make row groups by bytes, short rows by count, and no row is lost.
    #[test]
    fn row_groups_are_bounded_by_bytes_and_by_rows() {
        let dir = std::env::temp_dir().join(format!("stencil-tables-{}", std::process::id()));
        let schema: SchemaRef =
            Arc::new(Schema::new(vec![Field::new("text", DataType::Utf8, false)]));
        let groups = |name: &str, rows: usize, row_bytes: usize| {
            let mut part = StreamingPart::create(&dir, name, 0, schema.clone(), texts).unwrap();
            for i in 0..rows {
                let mut text = format!("{i:08}");
                text.extend(std::iter::repeat_n('x', row_bytes));
                part.push(Text(text)).unwrap();
            }
            let file = File::open(part.finish().unwrap()).unwrap();
            let reader = ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
            let meta = reader.metadata().clone();
            let sizes: Vec<i64> = meta.row_groups().iter().map(|g| g.num_rows()).collect();
            let text = reader
                .build()
                .unwrap()
                .map(|b| b.unwrap().num_rows())
                .sum::<usize>();
            assert_eq!(text, rows);
            sizes
        };
        // 1 MiB rows: a row group every 32 of them.
        let long = ROW_GROUP_BYTES / (1 << 20);
        assert_eq!(
            groups("long", 2 * long + 3, 1 << 20),
            [long as i64, long as i64, 3]
        );
        // Short rows: a row group every ROW_GROUP rows.
        let short = groups("short", ROW_GROUP + 5, 0);
        assert_eq!(short, [ROW_GROUP as i64, 5]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
