//! The Arrow schema of every table Stencil writes, defined once (see `docs/schemas.md`).
//!
//! Schemas are data: each table is a function returning its [`Schema`], so the writer, the
//! documentation test and any reader agree by construction.

use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema, SchemaRef};

/// `records`: one row for every input record or unreadable stretch of input, so the output
/// accounts for everything that was read. `outcome` is `page`, `skipped` or `error`; `reason`
/// is the skip reason or error kind (null for pages).
pub fn records() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("warc_file", DataType::Utf8, false),
        Field::new("warc_offset", DataType::UInt64, false),
        Field::new("offset_in_member", DataType::UInt64, false),
        Field::new("record_type", DataType::Utf8, true),
        Field::new("target_uri", DataType::Utf8, true),
        Field::new("record_id", DataType::Utf8, true),
        Field::new("http_status", DataType::UInt16, true),
        Field::new("mime_type", DataType::Utf8, true),
        Field::new("outcome", DataType::Utf8, false),
        Field::new("reason", DataType::Utf8, true),
        Field::new("detail", DataType::Utf8, true),
    ]))
}

/// `site_templates`: one row per (host, fingerprint) that SiteLevel(θ) found to be a template.
/// `path` and `text_sample` describe one occurrence: the first in document order on the
/// sampled page with the smallest URL key, so every run picks the same one.
pub fn site_templates() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("host", DataType::Utf8, false),
        Field::new("hash", DataType::UInt64, false),
        Field::new("pages_with", DataType::UInt32, false),
        Field::new("pages_sampled", DataType::UInt32, false),
        Field::new("fraction", DataType::Float64, false),
        Field::new("path", DataType::Utf8, false),
        Field::new("text_sample", DataType::Utf8, false),
        Field::new("url", DataType::Utf8, false),
    ]))
}

/// `hosts`: one row per host seen in the input, labelled or not (`labelled` false and
/// `reason` set when the host had too few pages).
pub fn hosts() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("host", DataType::Utf8, false),
        Field::new("pages", DataType::UInt64, false),
        Field::new("pages_sampled", DataType::UInt32, false),
        Field::new("labelled", DataType::Boolean, false),
        Field::new("reason", DataType::Utf8, true),
        Field::new("min_count", DataType::UInt32, false),
        Field::new("template_hashes", DataType::UInt64, false),
        Field::new("pages_with_text", DataType::UInt64, false),
        Field::new("mean_templated_fraction", DataType::Float64, true),
        Field::new("median_templated_fraction", DataType::Float64, true),
    ]))
}

/// `training`: one row per labelled DOM node, with the node aggregates of
/// `stencil_operators::subtree::Subtree` and every classifier feature, so that other tools can
/// train on the same rows.
pub fn training() -> SchemaRef {
    let mut fields = node_fields();
    fields.extend([
        Field::new("label", DataType::Utf8, false),
        Field::new("scheme", DataType::Utf8, false),
        Field::new("content_hash", DataType::UInt64, false),
        Field::new("structure_hash", DataType::UInt64, false),
        Field::new("text_chars", DataType::UInt32, false),
        Field::new("words", DataType::UInt32, false),
        Field::new("links", DataType::UInt32, false),
        Field::new("anchor_text_chars", DataType::UInt32, false),
        Field::new("intra_host_links", DataType::UInt32, false),
        Field::new("images", DataType::UInt32, false),
        Field::new("descendants", DataType::UInt32, false),
        Field::new("html_bytes", DataType::UInt32, false),
        // `text_start` is the name of the (normalized) feature below; the raw offset is this.
        Field::new("text_offset", DataType::UInt32, false),
    ]);
    fields.extend(classifier_fields());
    Arc::new(Schema::new(fields))
}

/// Which node of which page a row is about, shared by `training` and `node_scores`: `node` is
/// the pre-order index in Stencil's DOM, `path` a readable path, `depth` the depth (document =
/// 0).
fn node_fields() -> Vec<Field> {
    vec![
        Field::new("url", DataType::Utf8, false),
        Field::new("host", DataType::Utf8, false),
        Field::new("node", DataType::UInt32, false),
        Field::new("path", DataType::Utf8, false),
        Field::new("tag", DataType::Utf8, false),
        Field::new("depth", DataType::UInt32, false),
    ]
}

/// The classifier's view of a node, shared by `training` and `node_scores`: its size proxy,
/// size bucket, and one Float32 column per feature, named as in `model.json`.
fn classifier_fields() -> Vec<Field> {
    let mut fields = vec![
        Field::new("area", DataType::Float32, false),
        Field::new("bucket", DataType::UInt8, false),
    ];
    fields.extend(
        stencil_operators::features::NAMES
            .iter()
            .map(|name| Field::new(*name, DataType::Float32, false)),
    );
    fields
}

/// `node_scores`: for every element of every page, the page-level classifier score x(i) ∈
/// [0, 1], its smoothing y(i) (regularized tree isotonic regression, seed 000 §4), whether the
/// node starts a section (ŷ defined), whether y(i) ≥ τ, and the node's size proxy and bucket.
pub fn node_scores() -> SchemaRef {
    let mut fields = node_fields();
    fields.extend([
        Field::new("text_chars", DataType::UInt32, false),
        Field::new("area", DataType::Float32, false),
        Field::new("bucket", DataType::UInt8, false),
        Field::new("score", DataType::Float32, false),
        Field::new("smoothed", DataType::Float32, false),
        Field::new("section", DataType::Boolean, false),
        Field::new("template", DataType::Boolean, false),
    ]);
    Arc::new(Schema::new(fields))
}

#[cfg(test)]
mod tests {
    #[test]
    fn column_names_are_unique_in_every_table() {
        for schema in [
            super::records(),
            super::site_templates(),
            super::hosts(),
            super::training(),
            super::node_scores(),
        ] {
            let mut names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
            let all = names.len();
            names.sort_unstable();
            names.dedup();
            assert_eq!(names.len(), all, "duplicate column in {schema:?}");
        }
    }

    #[test]
    fn records_has_the_contract_columns() {
        let schema = super::records();
        for name in [
            "warc_file",
            "warc_offset",
            "record_type",
            "target_uri",
            "outcome",
            "reason",
        ] {
            assert!(schema.field_with_name(name).is_ok(), "{name}");
        }
    }
}
