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

/// `site_templates`: one row per (host, fingerprint) that the site-level method (`method`:
/// `site-level` for SiteLevel(θ), `rtdm` for RTDM-TD) found to be a template. A mapping
/// method's template blocks are the subtrees its template covers whole on a sample page, named
/// by their content hash as SiteLevel(θ) names its blocks, and are on every sample page it
/// mapped (`pages_with` = `pages_sampled`, the sample pages used: the host's pages with the
/// smallest URL keys). `path` and `text_sample` describe one occurrence: the first in document
/// order on the sampled page with the smallest URL key, so every run picks the same one.
pub fn site_templates() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("host", DataType::Utf8, false),
        Field::new("method", DataType::Utf8, false),
        Field::new("hash", DataType::UInt64, false),
        Field::new("pages_with", DataType::UInt32, false),
        Field::new("pages_sampled", DataType::UInt32, false),
        Field::new("fraction", DataType::Float64, false),
        Field::new("path", DataType::Utf8, false),
        Field::new("text_sample", DataType::Utf8, false),
        Field::new("url", DataType::Utf8, false),
        Field::new("cluster", DataType::UInt32, true),
    ]))
}

/// `hosts`: one row per host seen in the input, with site-level statistics or not
/// (`site_level` false and `reason` set when the host had too few pages), and the site-level
/// method whose templates it has (`--method`; ETDM falls back to SiteLevel(θ) host by host;
/// null in `stencil apply`), and for a mapping method the pages too large to map against the
/// template (`pages_unmapped`: they keep no site-level template). The `mean_*`
/// columns average the `pages` table's fractions over the host's pages that have the measure;
/// they are null where no page has it, and always null in `stencil site`, which scores nothing.
pub fn hosts() -> SchemaRef {
    let mut fields = vec![
        Field::new("host", DataType::Utf8, false),
        Field::new("pages", DataType::UInt64, false),
        Field::new("pages_sampled", DataType::UInt32, false),
        Field::new("site_level", DataType::Boolean, false),
        Field::new("reason", DataType::Utf8, true),
        Field::new("min_count", DataType::UInt32, false),
        Field::new("template_hashes", DataType::UInt64, false),
        Field::new("pages_with_text", DataType::UInt64, false),
        Field::new("mean_templated_fraction", DataType::Float64, true),
        Field::new("median_templated_fraction", DataType::Float64, true),
    ];
    fields.extend(
        PAGE_FRACTIONS
            .iter()
            .map(|name| Field::new(format!("mean_{name}"), DataType::Float64, true)),
    );
    fields.push(Field::new("method", DataType::Utf8, true));
    fields.push(Field::new("pages_unmapped", DataType::UInt64, true));
    fields.push(Field::new("night", DataType::UInt32, true));
    fields.push(Field::new(
        "previous_templated_fraction",
        DataType::Float64,
        true,
    ));
    Arc::new(Schema::new(fields))
}

/// `template_changes`: with `--state`, one row per template block of a host that appeared
/// (`change` = `appeared`: a template tonight and not in the state) or disappeared
/// (`disappeared`: in the state and no longer a template, or its host aged out of the state).
/// The block is described as in `site_templates`: by the new row for an appeared block, by the
/// state's row for a disappeared one. `templated_fraction_before` and `_after` are the host's
/// mean templated-text fraction on the last night it was seen before tonight and tonight (null
/// where the host had no page with text then).
pub fn template_changes() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("host", DataType::Utf8, false),
        Field::new("night", DataType::UInt32, false),
        Field::new("change", DataType::Utf8, false),
        Field::new("method", DataType::Utf8, false),
        Field::new("hash", DataType::UInt64, false),
        Field::new("pages_with", DataType::UInt32, false),
        Field::new("pages_sampled", DataType::UInt32, false),
        Field::new("path", DataType::Utf8, false),
        Field::new("text_sample", DataType::Utf8, false),
        Field::new("url", DataType::Utf8, false),
        Field::new("templated_fraction_before", DataType::Float64, true),
        Field::new("templated_fraction_after", DataType::Float64, true),
    ]))
}

/// The state's `hosts` (`--state DIR`): one row per host the state holds: its pages over all
/// nights kept, its sample size, the first and last night it had pages, and its mean
/// templated-text fraction on that last night.
pub fn state_hosts() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("host", DataType::Utf8, false),
        Field::new("pages", DataType::UInt64, false),
        Field::new("pages_sampled", DataType::UInt32, false),
        Field::new("first_night", DataType::UInt32, false),
        Field::new("last_night", DataType::UInt32, false),
        Field::new("templated_fraction", DataType::Float64, true),
    ]))
}

/// The state's `samples`: one row per page of a host's bottom-k sample (the `--host-sample`
/// distinct URLs with the smallest URL keys over all nights kept), with the page's block
/// fingerprints, sorted: what the site statistics are counted from.
pub fn state_samples() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("host", DataType::Utf8, false),
        Field::new("url_key", DataType::UInt64, false),
        Field::new_list(
            "fingerprints",
            Field::new("item", DataType::UInt64, false),
            false,
        ),
    ]))
}

/// The state's `site_templates`: `site_templates`' columns for every host the state holds,
/// and `node`, the occurrence's node on its page (pre-order index), which breaks ties when
/// tonight re-reads the same URL.
pub fn state_templates() -> SchemaRef {
    let mut fields: Vec<Field> = site_templates()
        .fields()
        .iter()
        .map(|f| f.as_ref().clone())
        .collect();
    fields.push(Field::new("node", DataType::UInt32, false));
    Arc::new(Schema::new(fields))
}

/// The per-page template fractions of `pages`, in column order: page-level (smoothed
/// segmentation, τ) first, then site-level (SiteLevel(θ) templates, null where the host had
/// too few pages). `hosts` has the mean of each.
pub const PAGE_FRACTIONS: [&str; 7] = [
    "template_text_fraction",
    "template_anchor_text_fraction",
    "template_link_fraction",
    "template_html_fraction",
    "site_template_text_fraction",
    "site_template_link_fraction",
    "site_template_html_fraction",
];

/// `pages`: one row per parsed HTML page: where it came from, its size, its template fractions
/// (is this node the site's template?), its main-content fractions (is this what the page
/// exists to deliver?) and its cleaned text (the main content, one line per block), also as
/// Markdown.
pub fn pages() -> SchemaRef {
    let mut fields = vec![
        Field::new("url", DataType::Utf8, false),
        Field::new("host", DataType::Utf8, false),
        Field::new("warc_file", DataType::Utf8, false),
        Field::new("warc_offset", DataType::UInt64, false),
        Field::new("record_id", DataType::Utf8, true),
        Field::new("fetch_date", DataType::Utf8, true),
        Field::new("http_status", DataType::UInt16, true),
        Field::new("charset", DataType::Utf8, false),
        Field::new("truncated", DataType::Utf8, true),
        Field::new("html_bytes", DataType::UInt64, false),
        Field::new("dom_nodes", DataType::UInt32, false),
        Field::new("text_chars", DataType::UInt32, false),
        Field::new("words", DataType::UInt32, false),
        Field::new("links", DataType::UInt32, false),
        Field::new("title", DataType::Utf8, true),
        Field::new("segments", DataType::UInt32, false),
    ];
    fields.extend(
        PAGE_FRACTIONS
            .iter()
            .map(|name| Field::new(*name, DataType::Float64, true)),
    );
    fields.extend(
        CONTENT_FRACTIONS
            .iter()
            .map(|name| Field::new(*name, DataType::Float64, true)),
    );
    fields.push(Field::new("main_content_chars", DataType::UInt64, false));
    fields.push(Field::new("cleaned_text", DataType::Utf8, false));
    // The cleaned text as Markdown: the same words (null with --no-markdown).
    fields.push(Field::new("cleaned_markdown", DataType::Utf8, true));
    fields.extend(
        PAGE_METADATA
            .iter()
            .map(|name| Field::new(*name, DataType::Utf8, true)),
    );
    Arc::new(Schema::new(fields))
}

/// What a page says about itself (`stencil_operators::dom::metadata`), in column order, and the
/// language detected from its cleaned text: strings, null when the page does not say.
/// `page_title` is the page's own title (`title` stays the `<title>` as it is).
pub const PAGE_METADATA: [&str; 10] = [
    "canonical_url",
    "page_title",
    "author",
    "published",
    "modified",
    "site_name",
    "description",
    "lang",
    "lang_detected",
    "page_type",
];

/// The main-content model's view of a page (`stencil_operators::page_models::content`), in column
/// order: the share of the page's visible text, and of its anchor text, in blocks called main
/// content. Null when the page has no such text at all.
pub const CONTENT_FRACTIONS: [&str; 2] = ["content_text_fraction", "content_anchor_text_fraction"];

/// `segments`: one row per section of every page. For most pages the sections of the
/// smoothed segmentation (a node where ŷ is defined, seed 000 §4): its classifier score (null
/// for the root, which is a section by construction but may not be scored), smoothed score,
/// visible characters and whether smoothed ≥ τ; `importance` null and `siblings` 1. For a page
/// of a `--method tree-regex` host, seed 003's sections: the node is the section's first, which
/// spans `siblings` sibling subtrees from it (a list's items, a run of inline nodes); its
/// `importance` (1 − size-weighted noise confidence) is set and `template` is importance < 0.25.
pub fn segments() -> SchemaRef {
    let mut fields = node_fields();
    fields.extend([
        Field::new("score", DataType::Float32, true),
        Field::new("smoothed", DataType::Float32, false),
        Field::new("text_chars", DataType::UInt32, false),
        Field::new("template", DataType::Boolean, false),
        Field::new("importance", DataType::Float32, true),
        Field::new("siblings", DataType::UInt32, false),
    ]);
    Arc::new(Schema::new(fields))
}

/// `training`: one row per labelled DOM node, with the node aggregates of
/// `stencil_operators::dom::subtree::Subtree` and every classifier feature, so that other tools can
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
        stencil_operators::page_models::features::NAMES
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
            super::pages(),
            super::segments(),
            super::template_changes(),
            super::state_hosts(),
            super::state_samples(),
            super::state_templates(),
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
