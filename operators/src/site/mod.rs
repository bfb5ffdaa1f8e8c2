//! Site-level methods: a host's template is what its pages share, found by comparing pages
//! rather than by judging one page alone.
//!
//! Each method is a module of its own; [`site_level`] (SiteLevel(θ)) is read first: it counts
//! block fingerprints over a sample of a host's pages and applies the host's model to a page.
//! [`labels`] then turns its templates into training labels, because site statistics exist
//! only for hosts with enough pages, and the page-level models ([`crate::page_models`]) learn
//! from them to judge pages of every other host.

pub mod labels;
pub mod rtdm;
pub mod rtdm_template;
pub mod site_level;
