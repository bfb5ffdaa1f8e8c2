//! A host's templates, whichever site-level method found them, in the one form the later
//! stages read: for every node of a page, whether a template block starts there.
//!
//! SiteLevel(θ) ([`crate::site::site_level`]) knows a template block by its fingerprint and its
//! count over the host's sample. The mapping methods (RTDM-TD, [`crate::site::rtdm_template`]) know
//! a template as a tree found in each page ([`crate::site::embedding`]); on a page, a template
//! block is a subtree it covers whole, and it is named by its content hash, the same fingerprint
//! SiteLevel(θ) counts. So the training labels, the site-level fractions, `site_templates` and
//! `hosts` come out of any method alike, and a template hash learned by one method means the same
//! block on a page as one learned by another (which is what lets `stencil apply` reuse any method's
//! `site_templates`).

use crate::dom::subtree::Subtree;
use crate::dom::Dom;
use crate::site::clusters;
use crate::site::embedding::embedded_roots;
use crate::site::etdm::label_tree_exact;
use crate::site::rtdm::{Labelled, Limits, TooLarge, Tree};
use crate::site::rtdm_template::PageTree;
use crate::site::sections::{noise_roots, sections, Section, DEFAULT_NOISE_THRESHOLD};
use crate::site::site_level::{template_roots, Fingerprints, HostModel};
use crate::site::tree_regex::{page_tree, Tags, TreeRegex, MIN_NODE_SUPPORT};

/// A site-level method.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Method {
    /// SiteLevel(θ): block fingerprints counted over a sample of up to 200 pages (seed 000).
    SiteLevel,
    /// RTDM-TD: the common subtree of a few sample pages by restricted top-down mapping
    /// (seed 002).
    Rtdm,
    /// ETDM: the key page's nodes that an exact top-down mapping finds in at least t pages of
    /// its menu's complete subdigraph (seed 004).
    Etdm,
    /// A tree regular expression learned from a few pages, and the sections of a page it
    /// matches whose importance is below 0.25 (seed 003).
    TreeRegex,
}

impl Method {
    /// The name in the command line and in the `method` column of `site_templates`.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::SiteLevel => "site-level",
            Method::Rtdm => "rtdm",
            Method::Etdm => "etdm",
            Method::TreeRegex => "tree-regex",
        }
    }
}

/// What a mapping method (RTDM-TD or ETDM) found for one host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MappedHost {
    pub method: Method,
    /// Pages (records) of the host in the input.
    pub pages: u64,
    /// The largest URL key of the host's sample: a page is a sample page iff its key is at
    /// most this (RTDM-TD's sample pages; for ETDM, SiteLevel(θ)'s sample, which the
    /// classifier's examples come from whatever the method).
    pub sample_max_key: u64,
    /// The templates found: ETDM's one, or RTDM-TD's one per group of its sample pages alike
    /// in structure ([`crate::site::clusters`]), in the order of the groups' first pages.
    pub templates: Vec<MappedTemplate>,
    /// Pages the templates were found from: RTDM-TD's sample pages mapped; ETDM's key page and
    /// the pages of its complete subdigraph mapped.
    pub pages_used: u32,
    /// Pages a template node is on at least: every page of its group for RTDM-TD (the
    /// smallest group's count); the key page and t others for ETDM.
    pub min_count: u32,
    /// SiteLevel(θ)'s model of the host, for a page that fits none of the templates (a design
    /// with too few sample pages for a group of its own).
    pub fallback: Option<HostModel>,
}

/// One template of a host, with what a page is matched to it by.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MappedTemplate {
    pub tree: Tree,
    /// The template's element paths ([`clusters::signature`]): every page it was found from has
    /// them all.
    pub signature: Vec<u64>,
}

impl MappedTemplate {
    pub fn new(tree: Tree) -> MappedTemplate {
        MappedTemplate {
            signature: clusters::signature(&tree),
            tree,
        }
    }
}

impl MappedHost {
    /// A host with the templates of its groups of sample pages, each with the pages it was
    /// found from: a template node is on every page of its group, so on at least the smallest
    /// group's. A host without any reports the `offered` sample pages.
    pub fn of_groups(
        method: Method,
        (pages, sample_max_key): (u64, u64),
        found: Vec<(Tree, u32)>,
        offered: u32,
    ) -> MappedHost {
        let pages_used = pages_used(found.iter().map(|(_, used)| *used), offered);
        let min_count = found
            .iter()
            .map(|(_, used)| *used)
            .min()
            .unwrap_or(pages_used);
        MappedHost {
            method,
            pages,
            sample_max_key,
            templates: found
                .into_iter()
                .map(|(tree, _)| MappedTemplate::new(tree))
                .collect(),
            pages_used,
            min_count,
            fallback: None,
        }
    }

    /// A host the method found no template for.
    pub fn without_template(method: Method, pages: u64, sample_max_key: u64) -> MappedHost {
        MappedHost {
            method,
            pages,
            sample_max_key,
            templates: Vec::new(),
            pages_used: 0,
            min_count: 0,
            fallback: None,
        }
    }
}

/// What seed 003's method found for one host: a tree regular expression per group of its
/// sample pages alike in structure ([`crate::site::tree_regex::learn_groups`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegexHost {
    /// Pages (records) of the host in the input.
    pub pages: u64,
    /// The largest URL key of the host's sample (as [`MappedHost::sample_max_key`]).
    pub sample_max_key: u64,
    /// The templates, in the order of the groups' first pages, each with its signature
    /// ([`TreeRegex::signature`]).
    pub templates: Vec<(TreeRegex, Vec<u64>)>,
    /// Pages the templates were learned from (or the sample pages offered, without any).
    pub pages_used: u32,
    /// SiteLevel(θ)'s model, for a page that fits none of the templates.
    pub fallback: Option<HostModel>,
}

impl RegexHost {
    /// A host with the templates of its groups, each with the pages it was learned from.
    pub fn of_groups(
        (pages, sample_max_key): (u64, u64),
        found: Vec<(TreeRegex, u32)>,
        offered: u32,
    ) -> RegexHost {
        let pages_used = pages_used(found.iter().map(|(_, used)| *used), offered);
        RegexHost {
            pages,
            sample_max_key,
            templates: found
                .into_iter()
                .map(|(regex, _)| {
                    let signature = regex.signature();
                    (regex, signature)
                })
                .collect(),
            pages_used,
            fallback: None,
        }
    }

    /// Pages a noise section's content is on at least: its node's support (at least
    /// [`MIN_NODE_SUPPORT`] of the smallest template's sample) times more than ¾ of those
    /// (an importance below ¼), at least 2.
    pub fn min_count(&self) -> u32 {
        let k = self
            .templates
            .iter()
            .map(|(r, _)| r.pages())
            .min()
            .unwrap_or(0);
        ((f64::from(k) * MIN_NODE_SUPPORT * (1.0 - f64::from(DEFAULT_NOISE_THRESHOLD))).ceil()
            as u32)
            .max(2)
    }

    /// The template a page is cleaned by, as [`MappedHost::template_number`] chooses it.
    pub fn template_number(&self, page: &Tree) -> Option<u32> {
        let signatures = self.templates.iter().map(|(_, s)| s.as_slice());
        clusters::best_fit(signatures, || clusters::signature(&Tags(page)))
    }
}

/// The pages a host's templates were learned from, given each template's (`used`): their sum,
/// or the `offered` sample pages when there is no template.
fn pages_used(used: impl Iterator<Item = u32>, offered: u32) -> u32 {
    let mut used = used.peekable();
    match used.peek() {
        None => offered,
        Some(_) => used.sum(),
    }
}

/// A host's templates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HostTemplates {
    SiteLevel(HostModel),
    Mapped(MappedHost),
    Regex(RegexHost),
}

/// What a host's templates say of one page ([`HostTemplates::call`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PageCall {
    /// For every node of the page, the fingerprint of the template block that starts there.
    pub roots: Vec<Option<u64>>,
    /// The number of the host's template the page was cleaned by (`site_templates.cluster`;
    /// none for SiteLevel(θ), or for a page that fits no template).
    pub template: Option<u32>,
    /// Seed 003's sections of the page (tree-regex hosts only), its noise the roots.
    pub sections: Vec<Section>,
    /// Whether the page fit none of a mapping method's templates and the roots are
    /// SiteLevel(θ)'s ([`HostTemplates::fallback`]).
    pub fell_back: bool,
}

impl PageCall {
    /// A call of template roots alone: no template number, no sections, not a fallback.
    pub fn of_roots(roots: Vec<Option<u64>>) -> PageCall {
        PageCall {
            roots,
            ..PageCall::default()
        }
    }
}

impl HostTemplates {
    pub fn method(&self) -> Method {
        match self {
            HostTemplates::SiteLevel(_) => Method::SiteLevel,
            HostTemplates::Mapped(host) => host.method,
            HostTemplates::Regex(_) => Method::TreeRegex,
        }
    }

    /// SiteLevel(θ)'s model beside a mapping method's templates, for the pages that fit none.
    pub fn fallback(&self) -> Option<&HostModel> {
        match self {
            HostTemplates::SiteLevel(_) => None,
            HostTemplates::Mapped(host) => host.fallback.as_ref(),
            HostTemplates::Regex(host) => host.fallback.as_ref(),
        }
    }

    /// Gives a mapping method's templates SiteLevel(θ)'s model for the pages that fit none.
    pub fn set_fallback(&mut self, model: HostModel) {
        match self {
            HostTemplates::SiteLevel(_) => {}
            HostTemplates::Mapped(host) => host.fallback = Some(model),
            HostTemplates::Regex(host) => host.fallback = Some(model),
        }
    }

    /// Pages (records) of the host in the input.
    pub fn pages(&self) -> u64 {
        match self {
            HostTemplates::SiteLevel(model) => model.pages,
            HostTemplates::Mapped(host) => host.pages,
            HostTemplates::Regex(host) => host.pages,
        }
    }

    /// Whether the host has site-level templates (and so labels).
    pub fn labelled(&self) -> bool {
        match self {
            HostTemplates::SiteLevel(model) => model.labelled,
            HostTemplates::Mapped(host) => !host.templates.is_empty(),
            HostTemplates::Regex(host) => !host.templates.is_empty(),
        }
    }

    /// Pages the templates were learned from: SiteLevel(θ)'s sample, or the pages a mapping
    /// method mapped.
    pub fn pages_sampled(&self) -> u32 {
        match self {
            HostTemplates::SiteLevel(model) => model.pages_sampled,
            HostTemplates::Mapped(host) => host.pages_used,
            HostTemplates::Regex(host) => host.pages_used,
        }
    }

    /// Pages a block must be on to be a template: θ of the sample for SiteLevel(θ); for a
    /// mapping method, what its template asks of a node.
    pub fn min_count(&self) -> u32 {
        match self {
            HostTemplates::SiteLevel(model) => model.min_count,
            HostTemplates::Mapped(host) => host.min_count,
            HostTemplates::Regex(host) => host.min_count(),
        }
    }

    /// The size of what was learned: template fingerprints for SiteLevel(θ), template tree
    /// nodes for a mapping method.
    pub fn template_size(&self) -> u64 {
        match self {
            HostTemplates::SiteLevel(model) => model.template_count() as u64,
            HostTemplates::Mapped(host) => host.templates.iter().map(|t| t.tree.len() as u64).sum(),
            HostTemplates::Regex(host) => host.templates.iter().map(|(r, _)| r.len() as u64).sum(),
        }
    }

    /// Whether the page with this URL key is one of the host's sample pages.
    pub fn in_sample(&self, url_key: u64) -> bool {
        match self {
            HostTemplates::SiteLevel(model) => model.in_sample(url_key),
            HostTemplates::Mapped(host) => url_key <= host.sample_max_key,
            HostTemplates::Regex(host) => url_key <= host.sample_max_key,
        }
    }

    /// Sample pages the template block `hash` is on: counted for SiteLevel(θ); for a mapping
    /// method, as many as its template asks of a node.
    pub fn pages_with(&self, hash: u64) -> u32 {
        match self {
            HostTemplates::SiteLevel(model) => model.counts.get(&hash).copied().unwrap_or(0),
            HostTemplates::Mapped(host) => host.min_count,
            HostTemplates::Regex(host) => host.min_count(),
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
        self.call(dom, sums, kind, limits).map(|call| call.roots)
    }

    /// What the host's templates say of the page: its template roots, the template it was
    /// cleaned by and, for a tree-regex host, its sections.
    pub fn call(
        &self,
        dom: &Dom,
        sums: &[Subtree],
        kind: Fingerprints,
        limits: Limits,
    ) -> Result<PageCall, TooLarge> {
        let host = match self {
            HostTemplates::SiteLevel(model) => {
                return Ok(PageCall::of_roots(template_roots(dom, sums, model, kind)))
            }
            HostTemplates::Regex(host) => host.call(dom, sums),
            HostTemplates::Mapped(host) => {
                // Seed 002's removal: the template found in the page in one top-down pass, for
                // both mapping methods; the least-cost mapping is for finding templates.
                let (roots, template) = match host.method {
                    Method::Etdm => host.embedded(&label_tree_exact(dom), limits)?,
                    _ => host.embedded(&PageTree::new(dom, sums), limits)?,
                };
                PageCall {
                    roots: hashed_roots(sums, &roots),
                    template,
                    ..PageCall::default()
                }
            }
        };
        // A page of a design none of the templates is of keeps SiteLevel(θ)'s call.
        match (host.template, self.fallback()) {
            (None, Some(model)) => Ok(PageCall {
                roots: template_roots(dom, sums, model, kind),
                fell_back: true,
                ..PageCall::default()
            }),
            _ => Ok(host),
        }
    }
}

impl RegexHost {
    /// The page matched against the template it fits and cut into sections; its noise
    /// ([`noise_roots`]) is its template roots.
    fn call(&self, dom: &Dom, sums: &[Subtree]) -> PageCall {
        let page = page_tree(dom, sums);
        let Some(number) = self.template_number(&page.tree) else {
            return PageCall::of_roots(vec![None; sums.len()]);
        };
        let regex = &self.templates[number as usize].0;
        let matched = regex.matched(&page.tree);
        let sections = sections(dom, sums, &page, &matched, regex);
        let noise = noise_roots(dom, sums, &sections, DEFAULT_NOISE_THRESHOLD);
        PageCall {
            roots: hashed_roots(sums, &noise),
            template: Some(number),
            sections,
            fell_back: false,
        }
    }
}

impl MappedHost {
    /// The template a page is cleaned by, by its place in `templates`: the host's only one, or
    /// of several the one whose element paths the page has most of, if it has at least
    /// [`clusters::DEFAULT_THRESHOLD`] of them (a page of a design no group had fits none).
    /// Ties go to the first group.
    pub fn template_number(&self, page: &impl Labelled) -> Option<u32> {
        let signatures = self.templates.iter().map(|t| t.signature.as_slice());
        clusters::best_fit(signatures, || clusters::signature(page))
    }

    /// The nodes of `page` that the template it fits ([`MappedHost::template_number`]) covers,
    /// and that template's number.
    fn embedded(
        &self,
        page: &impl Labelled,
        limits: Limits,
    ) -> Result<(Vec<u32>, Option<u32>), TooLarge> {
        let Some(number) = self.template_number(page) else {
            return Ok((Vec::new(), None));
        };
        let template = &self.templates[number as usize].tree;
        let roots = embedded_roots(template, page, limits.max_cells)?;
        Ok((roots, Some(number)))
    }
}

/// Roots named by their content hash, SiteLevel(θ)'s fingerprint of a block. As there, only
/// blocks that show text count: an empty `<head>` or spacer is covered on every page of every
/// site, and saying so would make it a template row of each.
fn hashed_roots(sums: &[Subtree], roots: &[u32]) -> Vec<Option<u64>> {
    let mut hashed = vec![None; sums.len()];
    for &root in roots {
        let sum = &sums[root as usize];
        if sum.text_chars > 0 {
            hashed[root as usize] = Some(sum.content_hash);
        }
    }
    hashed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dom::parse;
    use crate::dom::subtree::summarize;
    use crate::site::clusters::find_templates;
    use crate::site::rtdm_template::{find_template, label_tree};

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
        let trees = doms
            .iter()
            .map(|dom| label_tree(dom, &summarize(dom, "example.com")));
        let template = find_template(trees, 25, Limits::default()).expect("a template");
        let host = HostTemplates::Mapped(MappedHost {
            method: Method::Rtdm,
            pages: 3,
            sample_max_key: 0,
            pages_used: template.pages_used,
            min_count: template.pages_used,
            templates: vec![MappedTemplate::new(template.tree)],
            fallback: None,
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
        let none = HostTemplates::Mapped(MappedHost::without_template(Method::Rtdm, 3, 0));
        assert!(!none.labelled());
        let roots = none
            .roots(&fourth, &sums, Fingerprints::Subtrees, Limits::default())
            .unwrap();
        assert!(roots.iter().all(Option::is_none));
    }

    fn listing(title: &str) -> String {
        format!(
            "<html><body><div id=top><table><tr><td><a href=/>Start</a></td><td>Shop</td></tr>\
             </table></div><div class=grid><section><h2>{title}</h2><div class=card><span>\
             {title} one</span></div></section></div><div id=bottom><span>Contact us</span>\
             </div></body></html>"
        )
    }

    /// A host with two templates gets one per group of its pages, and each page is cleaned by
    /// its own: a single template over all the pages would keep nothing below `<html>`.
    #[test]
    fn a_host_of_two_templates_gets_two_and_each_page_its_own() {
        let htmls = [
            page("One"),
            listing("Alpha"),
            page("Two"),
            listing("Beta"),
            page("Three"),
            listing("Gamma"),
        ];
        let doms: Vec<Dom> = htmls.iter().map(|h| parse(h, 512)).collect();
        let trees: Vec<Tree> = doms
            .iter()
            .map(|dom| label_tree(dom, &summarize(dom, "example.com")))
            .collect();
        let together = find_template(trees.clone(), 25, Limits::default()).unwrap();
        let found = find_templates(
            trees,
            (3, clusters::DEFAULT_THRESHOLD),
            25,
            Limits::default(),
        );
        assert_eq!(found.len(), 2);
        assert_eq!((found[0].pages_used, found[1].pages_used), (3, 3));
        let host = MappedHost {
            method: Method::Rtdm,
            pages: 6,
            sample_max_key: 0,
            templates: found
                .into_iter()
                .map(|t| MappedTemplate::new(t.tree))
                .collect(),
            pages_used: 6,
            min_count: 3,
            fallback: None,
        };
        let one = MappedHost {
            templates: vec![MappedTemplate::new(together.tree)],
            ..host.clone()
        };
        let rooted_by = |host: &MappedHost, html: &str| -> Vec<String> {
            let dom = parse(html, 512);
            let sums = summarize(&dom, "example.com");
            let roots = HostTemplates::Mapped(host.clone())
                .roots(&dom, &sums, Fingerprints::Subtrees, Limits::default())
                .unwrap();
            (0..dom.len())
                .filter(|&i| roots[i].is_some())
                .map(|i| dom.tag(i).map_or("#text".to_string(), |t| t.to_string()))
                .collect()
        };
        let rooted = |html: &str| rooted_by(&host, html);
        // One template learned over all six pages finds nothing in either kind of page.
        assert!(rooted_by(&one, &page("Four")).is_empty());
        assert!(rooted_by(&one, &listing("Delta")).is_empty());
        assert_eq!(rooted(&page("Four")), ["nav", "footer"]);
        assert_eq!(rooted(&listing("Delta")), ["div", "div"]);
        // A page of a third design fits neither and keeps everything.
        let other = "<html><body><p><i>x</i></p><p><i>y</i></p></body></html>";
        assert!(rooted(other).is_empty());

        // With SiteLevel(θ)'s model beside the templates, it keeps SiteLevel(θ)'s call: the
        // block on every page of the host is its template there.
        let third = |i: usize| {
            format!(
                "<html><body><div id=mast><p>Contact us</p></div><p>Story {i}</p></body></html>"
            )
        };
        let mut all: Vec<String> = htmls.to_vec();
        all.extend((0..6).map(third));
        let pages = all.iter().enumerate().map(|(i, html)| {
            let dom = parse(html, 512);
            let sums = summarize(&dom, "example.com");
            crate::site::site_level::PageFingerprints {
                host: "example.com".to_string(),
                url_key: i as u64,
                fingerprints: crate::site::site_level::fingerprints(
                    &dom,
                    &sums,
                    Fingerprints::Subtrees,
                ),
            }
        });
        let params = crate::site::site_level::Params::default();
        let models = crate::site::site_level::learn(pages, &params, Fingerprints::Subtrees);
        let mut with = HostTemplates::Mapped(host.clone());
        with.set_fallback(models["example.com"].clone());
        let dom = parse(&third(9), 512);
        let sums = summarize(&dom, "example.com");
        let call = with
            .call(&dom, &sums, Fingerprints::Subtrees, Limits::default())
            .unwrap();
        assert!(call.fell_back && call.template.is_none());
        let rooted: Vec<&str> = (0..dom.len())
            .filter(|&i| call.roots[i].is_some())
            .map(|i| dom.tag(i).map_or("#text", |t| &**t))
            .collect();
        assert_eq!(rooted, ["div", "p"], "the masthead and its paragraph");
        // A page of one of the templates is still cleaned by its own.
        let dom = parse(&page("Five"), 512);
        let sums = summarize(&dom, "example.com");
        let call = with
            .call(&dom, &sums, Fingerprints::Subtrees, Limits::default())
            .unwrap();
        assert!(!call.fell_back && call.template.is_some());
    }
}
