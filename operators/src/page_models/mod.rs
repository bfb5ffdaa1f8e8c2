//! Page-level models: every node of a page judged from that page alone, so that any page can
//! be scored, including pages of hosts too small for site-level statistics.
//!
//! The template model first: [`features`] measures every element, [`model`] holds the
//! classifier (one logistic regression per size bucket: sampling, fitting, validation, the
//! model file, scoring), and [`logistic`] is the solver it is fitted with. [`content`] is the
//! second model, the main-content one: it judges text blocks rather than elements, and
//! `cleaned_text` is built from its calls. [`names`] reads what class and id names say, for
//! both.

pub mod content;
pub mod features;
pub mod logistic;
pub mod model;
pub mod names;
pub mod vocabulary;
