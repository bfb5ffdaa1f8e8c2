//! A host's templates, whichever site-level method found them, in the one form the later
//! stages read: for every node of a page, whether a template block starts there.
//!
//! SiteLevel(θ) ([`crate::site::site_level`]) knows a template block by its fingerprint and
//! its count over the host's sample. The mapping methods (RTDM-TD, [`crate::site::rtdm_template`])
//! know a template as a tree mapped onto each page; on a page, a template block is a subtree
//! the mapping covers whole, and it is named by its content hash, the same fingerprint
//! SiteLevel(θ) counts. So the training labels, the site-level fractions, `site_templates`
//! and `hosts` come out of any method alike, and a template hash learned by one method means
//! the same block on a page as one learned by another (which is what lets `stencil apply`
//! reuse any method's `site_templates`).

use crate::dom::subtree::Subtree;
use crate::dom::Dom;
use crate::site::rtdm::{Limits, TooLarge};
use crate::site::rtdm_template::{covered_roots, label_tree, template_nodes, Template};
use crate::site::site_level::{template_roots, Fingerprints, HostModel};

/// A site-level method.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Method {
    /// SiteLevel(θ): block fingerprints counted over a sample of up to 200 pages (seed 000).
    SiteLevel,
    /// RTDM-TD: the common subtree of a few sample pages by restricted top-down mapping
    /// (seed 002).
    Rtdm,
}

impl Method {
    /// The name in the command line and in the `method` column of `site_templates`.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::SiteLevel => "site-level",
            Method::Rtdm => "rtdm",
        }
    }
}

/// What a mapping method found for one host.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MappedHost {
    /// Pages (records) of the host in the input.
    pub pages: u64,
    /// Distinct sample pages offered to the method (the smallest URL keys).
    pub pages_sampled: u32,
    /// The largest URL key among them: a page is a sample page iff its key is at most this.
    pub sample_max_key: u64,
    /// The template, when the host had enough sample pages and two of them could be mapped.
    pub template: Option<Template>,
}

/// A host's templates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HostTemplates {
    SiteLevel(HostModel),
    Rtdm(MappedHost),
}

impl HostTemplates {
    pub fn method(&self) -> Method {
        match self {
            HostTemplates::SiteLevel(_) => Method::SiteLevel,
            HostTemplates::Rtdm(_) => Method::Rtdm,
        }
    }

    /// Pages (records) of the host in the input.
    pub fn pages(&self) -> u64 {
        match self {
            HostTemplates::SiteLevel(model) => model.pages,
            HostTemplates::Rtdm(host) => host.pages,
        }
    }

    /// Whether the host has site-level templates (and so labels).
    pub fn labelled(&self) -> bool {
        match self {
            HostTemplates::SiteLevel(model) => model.labelled,
            HostTemplates::Rtdm(host) => host.template.is_some(),
        }
    }

    /// Pages the templates were learned from: SiteLevel(θ)'s sample; for a mapping method,
    /// the sample pages mapped into the template (all of the sample unless a mapping passed
    /// its limits).
    pub fn pages_sampled(&self) -> u32 {
        match self {
            HostTemplates::SiteLevel(model) => model.pages_sampled,
            HostTemplates::Rtdm(host) => host
                .template
                .as_ref()
                .map_or(host.pages_sampled, |t| t.pages_used),
        }
    }

    /// Sample pages a block must be on to be a template: θ of them for SiteLevel(θ); every
    /// page mapped for a mapping method, whose template is what all of them share.
    pub fn min_count(&self) -> u32 {
        match self {
            HostTemplates::SiteLevel(model) => model.min_count,
            HostTemplates::Rtdm(_) => self.pages_sampled(),
        }
    }

    /// The size of what was learned: template fingerprints for SiteLevel(θ), template tree
    /// nodes for a mapping method.
    pub fn template_size(&self) -> u64 {
        match self {
            HostTemplates::SiteLevel(model) => model.template_count() as u64,
            HostTemplates::Rtdm(host) => host.template.as_ref().map_or(0, |t| t.tree.len() as u64),
        }
    }

    /// Whether the page with this URL key is one the templates were learned from.
    pub fn in_sample(&self, url_key: u64) -> bool {
        match self {
            HostTemplates::SiteLevel(model) => model.in_sample(url_key),
            HostTemplates::Rtdm(host) => url_key <= host.sample_max_key,
        }
    }

    /// Sample pages the template block `hash` was found on.
    pub fn pages_with(&self, hash: u64) -> u32 {
        match self {
            HostTemplates::SiteLevel(model) => model.counts.get(&hash).copied().unwrap_or(0),
            HostTemplates::Rtdm(_) => self.pages_sampled(),
        }
    }

    /// For every node of the page, the fingerprint of the template block that starts there.
    /// `Err` when the page is too large to map against the template (it then has none).
    pub fn roots(
        &self,
        dom: &Dom,
        sums: &[Subtree],
        kind: Fingerprints,
        limits: Limits,
    ) -> Result<Vec<Option<u64>>, TooLarge> {
        match self {
            HostTemplates::SiteLevel(model) => Ok(template_roots(dom, sums, model, kind)),
            HostTemplates::Rtdm(MappedHost {
                template: Some(template),
                ..
            }) => {
                let page = label_tree(dom);
                let covered = template_nodes(&template.tree, &page, limits)?;
                Ok(hashed_roots(sums, &covered_roots(&page, &covered)))
            }
            HostTemplates::Rtdm(_) => Ok(vec![None; dom.len()]),
        }
    }
}

/// Roots named by their content hash, SiteLevel(θ)'s fingerprint of a block. As there, only
/// blocks that show text count: an empty `<head>` or spacer is covered on every page of every
/// site, and saying so would make it a template row of each.
fn hashed_roots(sums: &[Subtree], roots: &[bool]) -> Vec<Option<u64>> {
    roots
        .iter()
        .zip(sums)
        .map(|(&root, sum)| (root && sum.text_chars > 0).then_some(sum.content_hash))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dom::parse;
    use crate::dom::subtree::summarize;
    use crate::site::rtdm_template::find_template;

    fn page(body: &str) -> String {
        format!(
            "<html><body><nav><a href=/>Home</a><a href=/news>News</a></nav>\
             <main><h1>{body}</h1><p>{body} text</p></main>\
             <footer>© Example</footer></body></html>"
        )
    }

    #[test]
    fn a_mapped_template_roots_its_blocks_by_content_hash() {
        let doms: Vec<Dom> = ["One", "Two", "Three"]
            .iter()
            .map(|b| parse(&page(b), 512))
            .collect();
        let template =
            find_template(doms.iter().map(label_tree), 25, Limits::default()).expect("a template");
        let host = HostTemplates::Rtdm(MappedHost {
            pages: 3,
            pages_sampled: 3,
            sample_max_key: 0,
            template: Some(template),
        });
        assert!(host.labelled());
        assert_eq!((host.pages_sampled(), host.min_count()), (3, 3));
        let fourth = parse(&page("Four"), 512);
        let sums = summarize(&fourth, "example.com");
        let roots = host
            .roots(&fourth, &sums, Fingerprints::Subtrees, Limits::default())
            .unwrap();
        let rooted: Vec<&str> = (0..fourth.len())
            .filter(|&i| roots[i].is_some())
            .map(|i| fourth.tag(i).map_or("#text", |t| &**t))
            .collect();
        // The menu and the footer, whole; the <main> is skeleton only (its text differs).
        assert_eq!(rooted, ["nav", "footer"]);
        for i in 0..fourth.len() {
            if let Some(hash) = roots[i] {
                assert_eq!(hash, sums[i].content_hash);
            }
        }
        // A host without a template roots nothing.
        let none = HostTemplates::Rtdm(MappedHost::default());
        assert!(!none.labelled());
        let roots = none
            .roots(&fourth, &sums, Fingerprints::Subtrees, Limits::default())
            .unwrap();
        assert!(roots.iter().all(Option::is_none));
    }
}
