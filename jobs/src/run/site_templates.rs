//! An earlier run's `site_templates` in `apply`: read back into host models (standing in for
//! stage 2), and the template roots of a page under one of them (stage 3).

use std::collections::HashMap;
use std::path::Path;

use stencil_operators::site::labels::Scheme;
use stencil_operators::site::site_level::HostModel;

use super::store::Kept;

/// `apply` finds templates by subtree hash (the `paper` labels' fingerprints); a run with
/// `--labels kolcz` stored text-block fingerprints, which would silently match nothing.
pub(super) fn refuse_text_block_templates(dir: &Path) -> Result<(), String> {
    let Ok(text) = std::fs::read_to_string(dir.join("run.json")) else {
        return Ok(());
    };
    let json: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    if json["configuration"]["labels"] == "kolcz" {
        return Err(format!(
            "{}: its site templates are text-block fingerprints (--labels kolcz); apply needs \
             those of a run with --labels paper",
            dir.display()
        ));
    }
    Ok(())
}

/// Reads the `site_templates` table of an earlier run into host models that mark exactly its
/// templates.
pub(crate) fn load_site_templates(dir: &Path) -> Result<HashMap<String, HostModel>, String> {
    use arrow_array::{Array, StringArray, UInt32Array, UInt64Array};
    use std::ops::ControlFlow::Continue;
    let table = dir.join("site_templates");
    let mut models: HashMap<String, HostModel> = HashMap::new();
    let columns = ["host", "hash", "pages_with", "pages_sampled"];
    let parts = crate::tables::each_batch(&table, &columns, |batch| {
        let hosts = crate::tables::column::<StringArray>(batch, "host")?;
        let hashes = crate::tables::column::<UInt64Array>(batch, "hash")?;
        let with = crate::tables::column::<UInt32Array>(batch, "pages_with")?;
        let sampled = crate::tables::column::<UInt32Array>(batch, "pages_sampled")?;
        for row in 0..batch.num_rows() {
            if hosts.is_null(row) {
                continue;
            }
            let model = models
                .entry(hosts.value(row).to_string())
                .or_insert_with(|| HostModel {
                    pages: 0,
                    pages_sampled: sampled.value(row),
                    labelled: true,
                    min_count: 1,
                    sample_max_key: 0,
                    counts: HashMap::new(),
                });
            model
                .counts
                .insert(hashes.value(row), with.value(row).max(1));
        }
        Ok(Continue(()))
    })?;
    match parts {
        None => Err(format!("{}: no such folder", table.display())),
        Some(0) => Err(format!("{}: no part-*.parquet files", table.display())),
        Some(_) => Ok(models),
    }
}

/// The template roots (node indices) of a page under a loaded host model.
pub(super) fn site_roots(kept: &Kept, model: &HostModel, scheme: Scheme) -> Vec<u32> {
    stencil_operators::site::site_level::template_roots(
        &kept.dom,
        &kept.sums,
        model,
        scheme.fingerprints(),
    )
    .iter()
    .enumerate()
    .filter(|(_, r)| r.is_some())
    .map(|(i, _)| i as u32)
    .collect()
}
