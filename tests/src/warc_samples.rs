//! What an independent reader (warcio) finds in the real WARC files of
//! `../shared/data/warc-samples`, for the tests that read them.
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

pub struct Expected {
    pub file: &'static str,
    pub types: &'static [(&'static str, u64)],
    pub pages: u64,
    pub offset_sum: u64,
}

pub const EXPECTED: [Expected; 3] = [
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
