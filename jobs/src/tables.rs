//! Writing the output tables: zstd Parquet, one part file per worker and table, written under
//! a temporary name and renamed when complete, so a reader (or a rerun) never sees half a file.
//!
//! The rows are plain structs; each table's columns come from its one schema in
//! `stencil-schemas`, and the conversion below checks against it when the batch is built.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{
    ArrayRef, BooleanArray, Float32Array, Float64Array, RecordBatch, StringArray, UInt16Array,
    UInt32Array, UInt64Array, UInt8Array,
};
use arrow_schema::SchemaRef;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;
use parquet::schema::types::ColumnPath;

/// Rows per Parquet row group (and per batch handed to the writer).
pub const ROW_GROUP: usize = 64 * 1024;

/// One part file of one table.
pub struct PartWriter {
    writer: ArrowWriter<File>,
    partial: PathBuf,
    done: PathBuf,
}

impl PartWriter {
    /// `DIR/TABLE/part-WWWWW.parquet`, where WWWWW is the worker index.
    pub fn create(
        dir: &Path,
        table: &str,
        worker: usize,
        schema: SchemaRef,
    ) -> Result<Self, String> {
        let table_dir = dir.join(table);
        std::fs::create_dir_all(&table_dir).map_err(|e| format!("{}: {e}", table_dir.display()))?;
        let done = table_dir.join(format!("part-{worker:05}.parquet"));
        let partial = table_dir.join(format!(".part-{worker:05}.parquet.partial"));
        let file = File::create(&partial).map_err(|e| format!("{}: {e}", partial.display()))?;
        let mut properties = WriterProperties::builder()
            .set_compression(Compression::ZSTD(ZstdLevel::default()))
            .set_max_row_group_row_count(Some(ROW_GROUP));
        // Scores and features are nearly all distinct: a dictionary would be built for each
        // of their pages only to be given up at its size limit, a cost the `training` table
        // (70 float columns) paid on every row. Names, URLs and small integers keep theirs.
        for field in schema.fields() {
            if field.data_type().is_floating() {
                properties = properties
                    .set_column_dictionary_enabled(ColumnPath::from(field.name().as_str()), false);
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

    pub fn write(&mut self, batch: &RecordBatch) -> Result<(), String> {
        self.writer
            .write(batch)
            .map_err(|e| format!("{}: {e}", self.partial.display()))
    }

    /// Closes the file (a Parquet file is invalid until then) and gives it its final name.
    pub fn finish(self) -> Result<PathBuf, String> {
        let fail = |e: &dyn std::fmt::Display| format!("{}: {e}", self.partial.display());
        self.writer.close().map_err(|e| fail(&e))?;
        std::fs::rename(&self.partial, &self.done).map_err(|e| fail(&e))?;
        Ok(self.done)
    }
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

fn batch(schema: &SchemaRef, columns: Vec<ArrayRef>) -> Result<RecordBatch, String> {
    RecordBatch::try_new(schema.clone(), columns).map_err(|e| e.to_string())
}

fn strings<R>(rows: &[R], get: impl Fn(&R) -> &str) -> ArrayRef {
    Arc::new(StringArray::from_iter_values(rows.iter().map(get)))
}

fn u32s<R>(rows: &[R], get: impl Fn(&R) -> u32) -> ArrayRef {
    Arc::new(UInt32Array::from_iter_values(rows.iter().map(get)))
}

fn u64s<R>(rows: &[R], get: impl Fn(&R) -> u64) -> ArrayRef {
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
#[derive(Clone, Debug, PartialEq)]
pub struct TemplateRow {
    pub host: String,
    pub hash: u64,
    pub pages_with: u32,
    pub pages_sampled: u32,
    pub path: String,
    pub text_sample: String,
    pub url: String,
}

pub fn templates_batch(schema: &SchemaRef, rows: &[TemplateRow]) -> Result<RecordBatch, String> {
    batch(
        schema,
        vec![
            strings(rows, |r| &r.host),
            u64s(rows, |r| r.hash),
            u32s(rows, |r| r.pages_with),
            u32s(rows, |r| r.pages_sampled),
            Arc::new(Float64Array::from_iter_values(rows.iter().map(|r| {
                f64::from(r.pages_with) / f64::from(r.pages_sampled.max(1))
            }))),
            strings(rows, |r| &r.path),
            strings(rows, |r| &r.text_sample),
            strings(rows, |r| &r.url),
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
        .collect(),
    )
}

fn optional_f64s<R>(rows: &[R], get: impl Fn(&R) -> Option<f64>) -> ArrayRef {
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
    pub cleaned_text: String,
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
    columns.push(strings(rows, |r| &r.cleaned_text));
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
}

pub fn segments_batch(schema: &SchemaRef, rows: &[SegmentRow]) -> Result<RecordBatch, String> {
    let mut columns = node_columns(rows, |r| &r.id);
    columns.extend([
        Arc::new(Float32Array::from_iter(rows.iter().map(|r| r.score))) as ArrayRef,
        f32s(rows, |r| r.smoothed),
        u32s(rows, |r| r.text_chars),
        bools(rows, |r| r.template),
    ]);
    batch(schema, columns)
}

/// The classifier's view of a node: size proxy, bucket and feature row.
#[derive(Clone, Debug, PartialEq)]
pub struct Classified {
    pub area: f32,
    pub bucket: u8,
    /// Inline rather than a `Vec`: `training` holds hundreds of thousands of these rows.
    pub features: [f32; FEATURES],
}

const FEATURES: usize = stencil_operators::features::COUNT;

fn classifier_columns<R>(rows: &[R], get: impl Fn(&R) -> &Classified) -> Vec<ArrayRef> {
    let mut columns = vec![f32s(rows, |r| get(r).area), u8s(rows, |r| get(r).bucket)];
    // One pass over the rows filling every feature column, not one pass per column: a row's
    // features are adjacent in memory, a column's values are a row apart.
    let mut features: Vec<Vec<f32>> = (0..FEATURES)
        .map(|_| Vec::with_capacity(rows.len()))
        .collect();
    for row in rows {
        for (column, &value) in features.iter_mut().zip(&get(row).features) {
            column.push(value);
        }
    }
    columns.extend(
        features
            .into_iter()
            .map(|column| Arc::new(Float32Array::from(column)) as ArrayRef),
    );
    columns
}

/// Which node of which page a row is about: the leading columns of `training` and
/// `node_scores`.
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

/// A row of `training`.
#[derive(Clone, Debug, PartialEq)]
pub struct TrainingRow {
    pub id: NodeId,
    pub label: &'static str,
    pub scheme: &'static str,
    pub subtree: stencil_operators::subtree::Subtree,
    pub classified: Classified,
}

pub fn training_batch(schema: &SchemaRef, rows: &[TrainingRow]) -> Result<RecordBatch, String> {
    let mut columns = node_columns(rows, |r| &r.id);
    columns.extend([
        strings(rows, |r| r.label),
        strings(rows, |r| r.scheme),
        u64s(rows, |r| r.subtree.content_hash),
        u64s(rows, |r| r.subtree.structure_hash),
        u32s(rows, |r| r.subtree.text_chars),
        u32s(rows, |r| r.subtree.words),
        u32s(rows, |r| r.subtree.links),
        u32s(rows, |r| r.subtree.anchor_text_chars),
        u32s(rows, |r| r.subtree.intra_host_links),
        u32s(rows, |r| r.subtree.images),
        u32s(rows, |r| r.subtree.descendants),
        u32s(rows, |r| r.subtree.html_bytes),
        u32s(rows, |r| r.subtree.text_start),
    ]);
    columns.extend(classifier_columns(rows, |r| &r.classified));
    batch(schema, columns)
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

/// Streams rows into a part file, one row group at a time, so memory does not grow with the
/// input.
pub struct StreamingPart<R> {
    part: PartWriter,
    schema: SchemaRef,
    to_batch: fn(&SchemaRef, &[R]) -> Result<RecordBatch, String>,
    buffer: Vec<R>,
    pub rows: u64,
}

impl<R> StreamingPart<R> {
    pub fn create(
        dir: &Path,
        table: &str,
        worker: usize,
        schema: SchemaRef,
        to_batch: fn(&SchemaRef, &[R]) -> Result<RecordBatch, String>,
    ) -> Result<Self, String> {
        Ok(StreamingPart {
            part: PartWriter::create(dir, table, worker, schema.clone())?,
            schema,
            to_batch,
            buffer: Vec::with_capacity(ROW_GROUP),
            rows: 0,
        })
    }

    pub fn push(&mut self, row: R) -> Result<(), String> {
        self.buffer.push(row);
        self.rows += 1;
        if self.buffer.len() >= ROW_GROUP {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), String> {
        if !self.buffer.is_empty() {
            self.part
                .write(&(self.to_batch)(&self.schema, &self.buffer)?)?;
            self.buffer.clear();
        }
        Ok(())
    }

    pub fn finish(mut self) -> Result<PathBuf, String> {
        self.flush()?;
        self.part.finish()
    }
}

impl StreamingPart<TrainingRow> {
    pub fn training(dir: &Path, worker: usize) -> Result<Self, String> {
        Self::create(
            dir,
            "training",
            worker,
            stencil_schemas::training(),
            training_batch,
        )
    }
}

impl StreamingPart<NodeScoreRow> {
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

impl StreamingPart<RecordRow> {
    pub fn records(dir: &Path, worker: usize) -> Result<Self, String> {
        Self::create(
            dir,
            "records",
            worker,
            stencil_schemas::records(),
            records_batch,
        )
    }
}

impl StreamingPart<PageRow> {
    pub fn pages(dir: &Path, worker: usize) -> Result<Self, String> {
        Self::create(dir, "pages", worker, stencil_schemas::pages(), pages_batch)
    }
}

impl StreamingPart<SegmentRow> {
    pub fn segments(dir: &Path, worker: usize) -> Result<Self, String> {
        Self::create(
            dir,
            "segments",
            worker,
            stencil_schemas::segments(),
            segments_batch,
        )
    }
}
