//! Stencil's algorithms as plain functions over plain data, grouped by the stage of a page's
//! journey they serve, in the order a page meets them:
//!
//! 1. [`reading`]: records framed out of WARC files, each turned into a decoded HTML page or
//!    the reason it is not one.
//! 2. [`dom`]: the page parsed into a compact arena, every subtree hashed and summed
//!    ([`dom::subtree`]), the visible text laid out as one stream ([`dom::text`]).
//! 3. [`site`]: site-level methods, which find a host's templates in what its pages share and
//!    label nodes with them for training.
//! 4. [`page_models`]: page-level models, which judge every node of any page from the page
//!    alone: the template classifier, fitted to the site-level labels, and the main-content
//!    model.
//! 5. [`smoothing`]: the template scores made into consistent sections, and the text left
//!    when the template is dropped.
//!
//! Beside the stages, because they serve more than one: [`inventory`] accounts for every
//! record's outcome, [`contain`] keeps a panic on one record to that record, [`fractions`]
//! measures how much of a page is template whichever method called it, [`overlay`] draws a page's
//! sections on a safe copy of it, and [`synth`] generates synthetic crawls with their gold for
//! the demo and the tests.
//!
//! Nothing here knows about timely; the dataflow wiring lives in the `stencil` binary and calls
//! these functions.

pub mod contain;
pub mod dom;
pub mod fractions;
pub mod inventory;
pub mod overlay;
pub mod page_models;
pub mod reading;
pub mod site;
pub mod smoothing;
pub mod synth;

/// A hash map for per-page lookups keyed by node indices, hashes and class names. std's
/// SipHash and xxh3's streaming hasher cost more than the rest of the lookup for such small
/// keys (docs/benchmarks.md); foldhash with a fixed seed is a few instructions per key and
/// gives the same map in every process. Nothing iterates these maps, so their order never
/// reaches an output.
pub(crate) type FastMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::FixedState>;

/// A xorshift64 step: the tests' source of random inputs (reproducible, no dependency).
#[cfg(test)]
pub(crate) fn xorshift(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}
