//! Turning the paths a user gives into the sorted list of WARC files to read.

use std::path::{Path, PathBuf};

fn is_warc_name(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name.ends_with(".warc") || name.ends_with(".warc.gz")
}

/// Files given by name are taken as they are; directories are searched (iteratively) for
/// `*.warc` and `*.warc.gz`. The result is sorted, so every worker sees the same list and
/// splitting it by index is deterministic.
pub fn collect(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut found = Vec::new();
    for path in paths {
        let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
        if !meta.is_dir() {
            found.push(path.clone());
            continue;
        }
        let mut pending = vec![path.clone()];
        while let Some(dir) = pending.pop() {
            let entries = std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            for entry in entries {
                let entry = entry.map_err(|e| format!("{}: {e}", dir.display()))?;
                let path = entry.path();
                if path.is_dir() {
                    pending.push(path);
                } else if is_warc_name(&path) {
                    found.push(path);
                }
            }
        }
    }
    found.sort();
    found.dedup();
    if found.is_empty() {
        return Err("no WARC files (*.warc, *.warc.gz) found in the given paths".to_string());
    }
    Ok(found)
}
