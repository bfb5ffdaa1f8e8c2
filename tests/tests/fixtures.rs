//! Real WARC files from `../shared/data/warc-samples`, checked against an independent reader.
//!
//! Expected numbers were obtained with warcio 1.8.1 (`pip install warcio`):
//!
//! ```python
//! it = ArchiveIterator(open(f, 'rb'))
//! for r in it:
//!     types[r.rec_type] += 1; offsets.append(it.get_record_offset())
//!     if r.rec_type in ('response', 'resource') and r.http_headers:
//!         ct = (r.http_headers.get_header('Content-Type') or '').split(';')[0].strip().lower()
//!         if ct in ('text/html', 'application/xhtml+xml') and r.http_headers.get_statuscode() == '200':
//!             html200 += 1
//! ```
//!
//! `html200` is what Stencil calls a page (HTML, status 200); the offset sum checks that every
//! record is reported at its gzip member's offset, byte for byte.

use std::collections::BTreeMap;

use stencil_operators::inventory::inspect_file;
use stencil_operators::warc::{self, Limits, ReadItem};
use stencil_tests::shared_dir;

struct Expected {
    file: &'static str,
    types: &'static [(&'static str, u64)],
    pages: u64,
    offset_sum: u64,
}

const EXPECTED: [Expected; 3] = [
    Expected {
        file: "aut-example.warc.gz",
        types: &[
            ("metadata", 261),
            ("request", 261),
            ("response", 299),
            ("warcinfo", 1),
        ],
        pages: 94,
        offset_sum: 851_353_443,
    },
    Expected {
        file: "pywb-iana.warc.gz",
        types: &[
            ("request", 171),
            ("response", 48),
            ("revisit", 123),
            ("warcinfo", 1),
        ],
        pages: 16,
        offset_sum: 210_084_277,
    },
    Expected {
        file: "ukwa-gov.uk-BL-20140325121225068.warc.gz",
        types: &[
            ("metadata", 62),
            ("request", 62),
            ("response", 65),
            ("warcinfo", 1),
        ],
        pages: 32,
        offset_sum: 66_098_549,
    },
];

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
