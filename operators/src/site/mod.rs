//! Site-level methods: a host's template is what its pages share, found by comparing pages
//! rather than by judging one page alone.
//!
//! Each method is a module of its own; [`site_level`] (SiteLevel(θ)) is read first: it counts
//! block fingerprints over a sample of a host's pages and applies the host's model to a page.
//! [`blocks`] are Kołcz & Yih's text blocks, which it can count instead of subtrees.
//! [`labels`] then turns its templates into training labels, because site statistics exist
//! only for hosts with enough pages, and the page-level models ([`crate::page_models`]) learn
//! from them to judge pages of every other host.
//!
//! [`rtdm`]: the restricted (and exact) top-down mapping; [`rtdm_template`]: a template from a
//! few sample pages by that mapping (seed 002); [`clusters`]: those pages grouped by structure
//! first, a template per group; [`embedding`]: a mapped template found in a page in one pass,
//! the removal of both mapping methods.
//! [`menu_graph`]: a key page and the pages its menu links to (seed 004's complete subdigraph).
//! [`etdm`]: the key page's template, by exact top-down mapping onto those pages (seed 004).

pub mod blocks;
pub mod clusters;
pub mod embedding;
pub mod etdm;
pub mod labels;
pub mod menu_graph;
pub mod rtdm;
pub mod rtdm_template;
pub mod sections;
pub mod site_level;
pub mod templates;
pub mod tree_regex;
