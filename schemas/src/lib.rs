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

#[cfg(test)]
mod tests {
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
