//! Stencil's algorithms as plain functions over plain data.
//!
//! Reading order of a page's journey: [`warc`] frames records out of a file, [`page`] turns a
//! record into decoded HTML (with [`http`] and [`charset`]), [`dom`] parses it into a compact
//! arena, and [`subtree`] hashes every subtree and counts what later stages need (text
//! normalized by [`normalize`]). [`inventory`] accounts for every record's outcome, and
//! [`contain`] keeps a panic on one record to that record.
//!
//! Nothing here knows about timely; the dataflow wiring lives in the `stencil` binary and calls
//! these functions.

pub mod charset;
pub mod contain;
pub mod content;
pub mod dom;
pub mod features;
pub mod fractions;
pub mod http;
pub mod inventory;
pub mod isotonic;
pub mod labels;
pub mod logistic;
pub mod model;
pub mod normalize;
pub mod page;
pub mod segmentation;
pub mod site_level;
pub mod subtree;
pub mod synth;
pub mod text;
pub mod warc;
