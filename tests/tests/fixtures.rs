//! Real WARC files from `../shared/data/warc-samples`, checked against an independent reader
//! (warcio; see `stencil_tests::warc_samples`).

use std::collections::BTreeMap;

use stencil_operators::inventory::inspect_file;
use stencil_operators::reading::warc::{self, Limits, ReadItem};
use stencil_tests::shared_dir;
use stencil_tests::warc_samples::EXPECTED;

#[test]
fn record_counts_pages_and_offsets_match_warcio() {
    let Some(dir) = shared_dir("data/warc-samples") else {
        return;
    };
    let limits = Limits::default();
    for expected in &EXPECTED {
        let path = dir.join(expected.file);
        let inventory = inspect_file(&path, &limits, true, |_| {}).expect("fixture opens");
        let types: BTreeMap<String, u64> = expected
            .types
            .iter()
            .map(|(k, v)| (k.to_string(), *v))
            .collect();
        assert_eq!(inventory.by_record_type, types, "{}", expected.file);
        assert_eq!(
            inventory.records,
            types.values().sum::<u64>(),
            "{}",
            expected.file
        );
        assert_eq!(inventory.pages, expected.pages, "{}", expected.file);
        assert_eq!(inventory.read_errors, 0, "{}", expected.file);
        assert_eq!(
            inventory.outcomes(),
            inventory.records + inventory.read_errors,
            "every record has exactly one outcome in {}",
            expected.file
        );
        assert!(
            inventory.dom_nodes > inventory.pages * 100,
            "{}: pages were parsed",
            expected.file
        );

        let mut offset_sum = 0;
        let summary = warc::read_file(&path, &limits, |item| {
            if let ReadItem::Record(r) = item {
                assert_eq!(r.head.position.offset_in_member, 0, "one member per record");
                offset_sum += r.head.position.offset;
            }
        })
        .expect("fixture opens");
        assert_eq!(offset_sum, expected.offset_sum, "{}", expected.file);
        assert_eq!(
            summary.compressed_bytes,
            std::fs::metadata(&path).unwrap().len()
        );
    }
}
