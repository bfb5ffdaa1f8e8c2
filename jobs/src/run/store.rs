//! Where a worker keeps its parsed pages between the stages of `stencil run`: in memory up to
//! its share of `--memory-budget`, then appended to a spill file on local disk and read back
//! sequentially. Each page is parsed once; what is kept is the compact DOM arena and its
//! subtree sums, never the HTML.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use stencil_operators::contain::Panic;
use stencil_operators::dom::subtree::Subtree;
use stencil_operators::dom::Dom;
use stencil_operators::inventory::RecordEntry;

/// What a page's rows need besides its DOM.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PageMeta {
    pub url: String,
    /// Lower-case host of the URL, as read.
    pub host: String,
    /// Index of the WARC file in the job's sorted input list.
    pub file: u32,
    pub offset: u64,
    pub record_id: Option<String>,
    pub fetch_date: Option<String>,
    pub http_status: Option<u16>,
    pub charset: String,
    pub truncated: Option<String>,
    pub html_bytes: u64,
    /// The rest of the page's `records` row, which is written when the page is finished
    /// (or has failed).
    pub offset_in_member: u64,
    pub record_type: Option<String>,
    pub target_uri: Option<String>,
    pub mime_type: Option<String>,
}

impl PageMeta {
    /// The page's `records` row: a page, or an error of kind `panic` when a stage panicked on
    /// it.
    pub fn record_entry(&self, panic: Option<&Panic>) -> RecordEntry {
        RecordEntry {
            offset: self.offset,
            offset_in_member: self.offset_in_member,
            record_type: self.record_type.clone(),
            target_uri: self.target_uri.clone(),
            record_id: self.record_id.clone(),
            http_status: self.http_status,
            mime_type: self.mime_type.clone(),
            outcome: if panic.is_some() { "error" } else { "page" },
            reason: panic.map(|_| Panic::KIND),
            detail: panic.map(Panic::detail),
        }
    }
}

/// One parsed page: its facts, DOM and the subtree sums computed when it was read.
pub struct Kept {
    pub meta: PageMeta,
    pub dom: Dom,
    pub sums: Vec<Subtree>,
}

impl Kept {
    fn heap_bytes(&self) -> usize {
        self.dom.heap_bytes()
            + self.sums.capacity() * std::mem::size_of::<Subtree>()
            + self.meta.url.len()
            + self.meta.host.len()
            + 256
    }
}

/// A worker's pages, in the order they were read.
pub struct Store {
    budget: usize,
    in_memory: usize,
    memory: Vec<Kept>,
    spill_path: PathBuf,
    spill: Option<BufWriter<File>>,
    pub spilled_pages: u64,
    pub spilled_bytes: u64,
    pub peak_memory: usize,
}

impl Store {
    /// Keeps pages in memory up to `budget` bytes, then spills them to `spill_path`.
    pub fn new(budget: usize, spill_path: PathBuf) -> Store {
        Store {
            budget,
            in_memory: 0,
            memory: Vec::new(),
            spill_path,
            spill: None,
            spilled_pages: 0,
            spilled_bytes: 0,
            peak_memory: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.memory.len() + self.spilled_pages as usize
    }

    /// What is left of the budget, in bytes.
    pub fn room(&self) -> usize {
        self.budget.saturating_sub(self.in_memory)
    }

    /// Counts `bytes` kept beside the pages (a later stage's inputs) against the budget.
    pub fn hold(&mut self, bytes: usize) {
        self.in_memory += bytes;
        self.peak_memory = self.peak_memory.max(self.in_memory);
    }

    pub fn push(&mut self, kept: Kept) -> Result<(), String> {
        let bytes = kept.heap_bytes();
        if self.spill.is_none() && self.in_memory + bytes <= self.budget {
            self.in_memory += bytes;
            self.peak_memory = self.peak_memory.max(self.in_memory);
            self.memory.push(kept);
            return Ok(());
        }
        let fail = |e: std::io::Error| format!("{}: {e}", self.spill_path.display());
        if self.spill.is_none() {
            if let Some(dir) = self.spill_path.parent() {
                std::fs::create_dir_all(dir).map_err(fail)?;
            }
            let file = File::create(&self.spill_path).map_err(fail)?;
            tracing::info!(
                path = %self.spill_path.display(),
                in_memory_mb = self.in_memory / 1_000_000,
                "memory budget reached: further pages spill to disk"
            );
            self.spill = Some(BufWriter::with_capacity(1 << 20, file));
        }
        let frame = encode(&kept)?;
        let writer = self.spill.as_mut().ok_or("spill file closed")?;
        writer
            .write_all(&(frame.len() as u64).to_le_bytes())
            .and_then(|()| writer.write_all(&frame))
            .map_err(fail)?;
        self.spilled_pages += 1;
        self.spilled_bytes += frame.len() as u64 + 8;
        Ok(())
    }

    /// Visits every page in order: those in memory, then those read back from the spill file.
    pub fn for_each(
        &mut self,
        visit: impl FnMut(usize, &Kept) -> Result<(), String>,
    ) -> Result<(), String> {
        self.for_each_where(|_| true, visit)
    }

    /// Visits the pages whose facts are `wanted`, in order; a spilled page that is not wanted
    /// is skipped without decoding its DOM.
    pub fn for_each_where(
        &mut self,
        wanted: impl Fn(&PageMeta) -> bool,
        mut visit: impl FnMut(usize, &Kept) -> Result<(), String>,
    ) -> Result<(), String> {
        for (ordinal, kept) in self.memory.iter().enumerate() {
            if wanted(&kept.meta) {
                visit(ordinal, kept)?;
            }
        }
        let first = self.memory.len();
        self.read_spill(wanted, |ordinal, kept| visit(first + ordinal, &kept))
    }

    /// Visits every page once more and lets go of it: memory is freed as the pass goes.
    pub fn drain(
        mut self,
        mut visit: impl FnMut(usize, Kept) -> Result<(), String>,
    ) -> Result<(), String> {
        let memory = std::mem::take(&mut self.memory);
        let first = memory.len();
        for (ordinal, kept) in memory.into_iter().enumerate() {
            visit(ordinal, kept)?;
        }
        self.read_spill(|_| true, |ordinal, kept| visit(first + ordinal, kept))
    }

    fn read_spill(
        &mut self,
        wanted: impl Fn(&PageMeta) -> bool,
        mut visit: impl FnMut(usize, Kept) -> Result<(), String>,
    ) -> Result<(), String> {
        let Some(writer) = self.spill.as_mut() else {
            return Ok(());
        };
        let fail = |e: &dyn std::fmt::Display| format!("{}: {e}", self.spill_path.display());
        writer.flush().map_err(|e| fail(&e))?;
        let mut reader =
            BufReader::with_capacity(1 << 20, File::open(&self.spill_path).map_err(|e| fail(&e))?);
        let mut frame = Vec::new();
        for ordinal in 0..self.spilled_pages as usize {
            let mut length = [0u8; 8];
            reader.read_exact(&mut length).map_err(|e| fail(&e))?;
            frame.resize(u64::from_le_bytes(length) as usize, 0);
            reader.read_exact(&mut frame).map_err(|e| fail(&e))?;
            if let Some(kept) = decode(&frame, &wanted).map_err(|e| fail(&e))? {
                visit(ordinal, kept)?;
            }
        }
        Ok(())
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        if self.spill.take().is_some() {
            let _ = std::fs::remove_file(&self.spill_path);
        }
    }
}

/// A page as one frame: its facts as JSON, its DOM ([`Dom::encode`]) and its sums, each behind
/// its length.
fn encode(kept: &Kept) -> Result<Vec<u8>, String> {
    let meta = serde_json::to_vec(&kept.meta).map_err(|e| e.to_string())?;
    let mut frame = Vec::with_capacity(meta.len() + kept.dom.heap_bytes());
    frame.extend_from_slice(&(meta.len() as u32).to_le_bytes());
    frame.extend_from_slice(&meta);
    let mut dom = Vec::new();
    kept.dom.encode(&mut dom);
    frame.extend_from_slice(&(dom.len() as u32).to_le_bytes());
    frame.extend_from_slice(&dom);
    frame.extend_from_slice(&(kept.sums.len() as u32).to_le_bytes());
    for sum in &kept.sums {
        frame.extend_from_slice(&sum.content_hash.to_le_bytes());
        frame.extend_from_slice(&sum.structure_hash.to_le_bytes());
        for value in [
            sum.text_chars,
            sum.words,
            sum.links,
            sum.anchor_text_chars,
            sum.intra_host_links,
            sum.images,
            sum.descendants,
            sum.html_bytes,
            sum.text_start,
        ] {
            frame.extend_from_slice(&value.to_le_bytes());
        }
    }
    Ok(frame)
}

const SUM_BYTES: usize = 16 + 9 * 4;

/// Reads a frame field by field; a short frame is an error.
struct Cursor<'a> {
    frame: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&end| end <= self.frame.len());
        let end = end.ok_or("truncated spill frame")?;
        let slice = &self.frame[self.at..end];
        self.at = end;
        Ok(slice)
    }

    fn length(&mut self) -> Result<usize, String> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
    }
}

/// The page of a frame, or `None` when its facts are not `wanted` (its DOM left undecoded).
fn decode(frame: &[u8], wanted: impl Fn(&PageMeta) -> bool) -> Result<Option<Kept>, String> {
    let mut cursor = Cursor { frame, at: 0 };
    let meta_len = cursor.length()?;
    let meta: PageMeta =
        serde_json::from_slice(cursor.take(meta_len)?).map_err(|e| e.to_string())?;
    if !wanted(&meta) {
        return Ok(None);
    }
    let dom_len = cursor.length()?;
    let dom = Dom::decode(cursor.take(dom_len)?).map_err(|e| e.to_string())?;
    let count = cursor.length()?;
    if count != dom.len() {
        return Err("spill frame: sums do not match the DOM".to_string());
    }
    let bytes = cursor.take(count.saturating_mul(SUM_BYTES))?;
    let sums = bytes
        .chunks_exact(SUM_BYTES)
        .map(|b| {
            let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap_or([0; 8]));
            let u32_at = |k: usize| {
                let i = 16 + 4 * k;
                u32::from_le_bytes(b[i..i + 4].try_into().unwrap_or([0; 4]))
            };
            Subtree {
                content_hash: u64_at(0),
                structure_hash: u64_at(8),
                text_chars: u32_at(0),
                words: u32_at(1),
                links: u32_at(2),
                anchor_text_chars: u32_at(3),
                intra_host_links: u32_at(4),
                images: u32_at(5),
                descendants: u32_at(6),
                html_bytes: u32_at(7),
                text_start: u32_at(8),
            }
        })
        .collect();
    Ok(Some(Kept { meta, dom, sums }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use stencil_operators::dom::subtree::summarize;

    fn page(i: usize) -> Kept {
        let html = format!("<html><body><div id=n{i}>Menu</div><p>Page {i} text</p></body></html>");
        let dom = stencil_operators::dom::parse(&html, 512);
        let sums = summarize(&dom, "example.com");
        Kept {
            meta: PageMeta {
                url: format!("http://example.com/{i}"),
                host: "example.com".into(),
                file: 0,
                offset: i as u64,
                record_id: None,
                fetch_date: Some("2026-01-01".into()),
                http_status: Some(200),
                charset: "UTF-8".into(),
                truncated: None,
                html_bytes: html.len() as u64,
                offset_in_member: 0,
                record_type: Some("response".into()),
                target_uri: Some(format!("http://example.com/{i}")),
                mime_type: Some("text/html".into()),
            },
            dom,
            sums,
        }
    }

    #[test]
    fn pages_past_the_budget_spill_and_come_back_in_order() {
        let dir = std::env::temp_dir().join(format!("stencil-store-{}", std::process::id()));
        let path = dir.join("spill-0");
        // Room for about three pages in memory.
        let budget = 3 * page(0).heap_bytes() + 10;
        let mut store = Store::new(budget, path.clone());
        for i in 0..10 {
            store.push(page(i)).unwrap();
        }
        assert_eq!(store.len(), 10);
        assert_eq!(store.spilled_pages, 7);
        assert!(path.exists());
        for pass in 0..2 {
            let mut seen = Vec::new();
            store
                .for_each(|ordinal, kept| {
                    let fresh = page(ordinal);
                    assert_eq!(kept.meta.url, fresh.meta.url, "pass {pass}");
                    assert_eq!(kept.sums, fresh.sums);
                    assert_eq!(kept.dom.paths(), fresh.dom.paths());
                    seen.push(ordinal);
                    Ok(())
                })
                .unwrap();
            assert_eq!(seen, (0..10).collect::<Vec<_>>());
        }
        let mut drained = 0;
        store
            .drain(|ordinal, kept| {
                assert_eq!(kept.meta.offset, ordinal as u64);
                drained += 1;
                Ok(())
            })
            .unwrap();
        assert_eq!(drained, 10);
        assert!(!path.exists(), "the spill file is removed");
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_damaged_frame_is_an_error() {
        let frame = encode(&page(1)).unwrap();
        let all = |_: &PageMeta| true;
        assert!(decode(&frame, all).is_ok_and(|kept| kept.is_some()));
        assert!(decode(&frame, |_| false).is_ok_and(|kept| kept.is_none()));
        assert!(decode(&frame[..frame.len() - 1], all).is_err());
        assert!(decode(&frame[..10], all).is_err());
    }
}
