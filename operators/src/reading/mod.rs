//! Reading: from a WARC file to a page's decoded HTML, or the reason a record is not one.
//!
//! Read in the order a record travels: [`warc`] frames records out of a file (and writes them,
//! for `stencil synth` and the tests); [`page`] turns each record into exactly one outcome,
//! with [`http`] undoing the response's envelope and encodings and [`charset`] choosing the
//! text encoding as a browser would. Every record leaves this stage as a page or as a counted
//! reason, so that what later stages report adds up to the input.

pub mod charset;
pub mod http;
pub mod page;
pub mod warc;
