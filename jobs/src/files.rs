//! Turning the paths a user gives into the sorted list of WARC files to read.

use std::path::{Path, PathBuf};

use stencil_operators::inventory::Share;

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

/// The files, or parts of files, worker `index` of `peers` reads: `(file, share)` pairs.
///
/// With at least as many files as workers, whole files are dealt out round robin, and nothing
/// is read twice. With fewer (one large WARC and `-w 8`), the workers are dealt out to the
/// files instead and each file's records are split among its workers by ordinal: every worker
/// then parses, at the cost of decompressing its file once per worker. The split depends only
/// on the file list and the worker's global index, so the tables do not depend on how workers
/// are spread over processes.
pub fn shares(index: usize, peers: usize, files: usize) -> Vec<(usize, Share)> {
    let peers = peers.max(1);
    if files >= peers {
        return (index..files)
            .step_by(peers)
            .map(|file| (file, Share::WHOLE))
            .collect();
    }
    if files == 0 {
        return Vec::new();
    }
    // Workers file, file + files, file + 2·files, … share `file`.
    let file = index % files;
    let parts = (peers - file).div_ceil(files);
    let part = index / files;
    vec![(
        file,
        Share {
            part: part as u64,
            parts: parts as u64,
        },
    )]
}

/// [`shares`] as the paths of `files` they name.
pub fn assigned(files: &[PathBuf], index: usize, peers: usize) -> Vec<(&PathBuf, Share)> {
    shares(index, peers, files.len())
        .into_iter()
        .map(|(file, share)| (&files[file], share))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every (file, record ordinal) is taken by exactly one worker, for any number of workers.
    #[test]
    fn every_record_of_every_file_has_exactly_one_reader() {
        for files in 0..6 {
            for peers in 1..10 {
                let mut takers = vec![vec![0u32; 60]; files];
                for index in 0..peers {
                    for (file, share) in shares(index, peers, files) {
                        assert!(share.part < share.parts, "{files} files, {peers} peers");
                        for ordinal in 0..60u64 {
                            if ordinal % share.parts == share.part {
                                takers[file][ordinal as usize] += 1;
                            }
                        }
                    }
                }
                assert!(
                    takers.iter().flatten().all(|&n| n == 1),
                    "{files} files, {peers} peers: {takers:?}"
                );
            }
        }
    }

    #[test]
    fn whole_files_when_there_are_enough() {
        assert_eq!(shares(1, 2, 5), vec![(1, Share::WHOLE), (3, Share::WHOLE)]);
        assert_eq!(shares(2, 3, 1), vec![(0, Share { part: 2, parts: 3 })]);
    }
}
