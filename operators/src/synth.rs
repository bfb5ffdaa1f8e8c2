//! Deterministic synthetic crawls: many hosts, each with its own template (header, navigation,
//! sidebar, footer, cookie bar) around per-page articles and per-page "related" lists.
//!
//! They give every command a default input on a machine without crawl data, and tests a crawl whose
//! structure is known: every page comes with its gold, the element paths of the blocks that are
//! template (see [`SynthPage::template_paths`]). They are no substitute for real pages: real
//! templates vary far more in markup than this generator does.

use std::fmt::Write as _;

/// A small, fast, seedable generator (SplitMix64): the same seed gives the same crawl on every
/// platform, which `rand`'s generators do not promise across versions. Also used by tests and
/// benchmarks that need reproducible random trees and pages.
pub struct SplitMix(pub u64);

impl SplitMix {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in 0..n (n ≥ 1); the modulo bias is irrelevant here.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    /// Uniform in lo..=hi.
    pub fn between(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    /// Uniform in [0, 1) on a 2⁻²⁴ grid (exact in f32).
    pub fn unit(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }

    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const WORDS: &[&str] = &[
    "river",
    "council",
    "market",
    "season",
    "energy",
    "report",
    "village",
    "science",
    "harbor",
    "winter",
    "budget",
    "museum",
    "railway",
    "garden",
    "festival",
    "election",
    "forest",
    "bridge",
    "student",
    "orchestra",
    "weather",
    "factory",
    "library",
    "mountain",
    "coast",
    "research",
    "doctor",
    "island",
    "highway",
    "theatre",
    "farmer",
    "climate",
    "school",
    "airport",
    "painter",
    "engineer",
    "league",
    "planet",
    "ocean",
    "museum",
    "record",
    "vote",
    "storm",
    "harvest",
];
const VERBS: &[&str] = &[
    "announced",
    "opened",
    "reported",
    "questioned",
    "celebrated",
    "reviewed",
    "approved",
    "delayed",
    "praised",
    "measured",
    "discovered",
    "rebuilt",
];
const SECTIONS: &[&str] = &[
    "World",
    "Politics",
    "Business",
    "Science",
    "Sport",
    "Culture",
    "Travel",
    "Opinion",
    "Health",
    "Technology",
];

/// One generated page.
#[derive(Clone, Debug, PartialEq)]
pub struct SynthPage {
    pub url: String,
    pub html: String,
    /// The gold: roots of the template blocks, each an element path from `<html>` (element
    /// children only, 0-based: `[1, 0]` is the first element of `<body>`). Everything inside
    /// a root is template; every other element of the body is not.
    pub template_paths: Vec<Vec<usize>>,
}

impl SynthPage {
    /// The gold paths as written to gold files: `"1/0"` for `[1, 0]`.
    pub fn template_path_strings(&self) -> Vec<String> {
        self.template_paths
            .iter()
            .map(|path| {
                path.iter()
                    .map(|step| step.to_string())
                    .collect::<Vec<_>>()
                    .join("/")
            })
            .collect()
    }
}

/// Element paths (see [`SynthPage::template_paths`]) of every node of `dom`: what the gold
/// is matched against. Text and other non-element nodes get their parent's path.
pub fn element_paths(dom: &crate::dom::Dom) -> Vec<Vec<usize>> {
    let mut paths: Vec<Vec<usize>> = vec![Vec::new(); dom.len()];
    let mut next_child = vec![0usize; dom.len()];
    for i in 0..dom.len() {
        let Some(parent) = dom.parent(i) else {
            continue;
        };
        let mut path = paths[parent].clone();
        // Below the document node the path starts at <html>, which is not itself a step.
        let is_html = dom.parent(parent).is_none();
        if dom.element(i).is_some() && !is_html {
            path.push(next_child[parent]);
            next_child[parent] += 1;
        }
        paths[i] = path;
    }
    paths
}

fn sentence(rng: &mut SplitMix) -> String {
    let mut s = String::new();
    let words = 8 + rng.below(10);
    for w in 0..words {
        let word = if w == 2 {
            rng.pick(VERBS)
        } else {
            rng.pick(WORDS)
        };
        if w == 0 {
            let mut chars = word.chars();
            if let Some(first) = chars.next() {
                s.extend(first.to_uppercase());
                s.push_str(chars.as_str());
            }
        } else {
            s.push(' ');
            s.push_str(word);
        }
    }
    s.push('.');
    s
}

/// The template of host `h`: its markup style and fixed texts are drawn from the host's seed.
struct Template {
    host: String,
    name: String,
    sections: Vec<&'static str>,
    /// Three markup styles, so hosts do not all share one tree shape.
    style: usize,
    popular: Vec<String>,
    cookie: String,
}

impl Template {
    fn new(h: usize, seed: u64) -> Self {
        let mut rng = SplitMix(seed ^ (h as u64).wrapping_mul(0x2545_f491_4f6c_dd1d));
        let name = format!(
            "The {} {}",
            capitalize(rng.pick(WORDS)),
            capitalize(rng.pick(WORDS))
        );
        let mut sections: Vec<&str> = SECTIONS.to_vec();
        let keep = 4 + rng.below(5);
        for _ in keep..SECTIONS.len() {
            let drop = rng.below(sections.len());
            sections.remove(drop);
        }
        let popular = (0..5).map(|_| sentence(&mut rng)).collect();
        let cookie = format!("{name} uses cookies to improve your experience.");
        Template {
            host: format!("www.site{h:03}.example"),
            name,
            sections,
            style: rng.below(3),
            popular,
            cookie,
        }
    }

    /// The template after its `version`-th redesign (0: as made): a new cookie-bar text and a
    /// new "Most popular" list; the header, menu and footer stay.
    fn redesigned(mut self, h: usize, seed: u64, version: u32) -> Self {
        if version == 0 {
            return self;
        }
        let mut rng =
            SplitMix(seed ^ (h as u64) << 20 ^ u64::from(version).wrapping_mul(0x9e37_79b9));
        self.popular = (0..5).map(|_| sentence(&mut rng)).collect();
        self.cookie = format!(
            "{} (design {version}) and its partners use cookies.",
            self.name
        );
        self
    }

    fn page(&self, p: usize, seed: u64) -> SynthPage {
        self.page_at(p, &format!("article/{p}"), seed)
    }

    /// Page `p`'s text at `path`: every page of a host, article or not, has the same template.
    fn page_at(&self, p: usize, path: &str, seed: u64) -> SynthPage {
        let mut rng =
            SplitMix(seed ^ xxhash_rust::xxh3::xxh3_64(format!("{}/{p}", self.host).as_bytes()));
        let title = sentence(&mut rng);
        let url = format!("https://{}/{path}", self.host);
        let mut html = String::with_capacity(8 << 10);
        let _ = write!(
            html,
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title} | {name}</title>\
             <script>window.pageId = {p};</script></head>\n<body>\n",
            name = self.name
        );
        let _ = writeln!(
            html,
            "<div class=\"cookie-bar\"><p>{}</p><button>Accept</button></div>",
            self.cookie
        );
        let nav: String = self
            .sections
            .iter()
            .map(|s| format!("<li><a href=\"/{}\">{s}</a></li>", s.to_lowercase()))
            .collect();
        match self.style {
            0 => {
                let _ = writeln!(html, "<header id=\"top\"><a class=\"logo\" href=\"/\">{}</a><nav><ul class=\"menu\">{nav}</ul></nav><div class=\"ad-slot\" data-slot=\"top\"></div></header>", self.name);
            }
            1 => {
                let _ = write!(html, "<div id=\"header\"><div class=\"brand\"><a href=\"/\"><img src=\"/logo.png\" alt=\"{}\"></a></div>\n<ul id=\"nav\">{nav}</ul></div>\n", self.name);
            }
            _ => {
                let _ = writeln!(html, "<table class=\"masthead\"><tbody><tr><td><b>{}</b></td></tr><tr><td><ul>{nav}</ul></td></tr></tbody></table>", self.name);
            }
        }
        let _ = writeln!(html, "<div class=\"page\"><article><h1>{title}</h1>");
        for paragraph_index in 0..3 + rng.below(6) {
            if paragraph_index == 2 {
                // An ad slot inside the article: template nested in content.
                html.push_str("<div class=\"ad-inline\"><small>Advertisement</small></div>\n");
            }
            let paragraph: Vec<String> =
                (0..2 + rng.below(4)).map(|_| sentence(&mut rng)).collect();
            let _ = writeln!(html, "<p>{}</p>", paragraph.join(" "));
        }
        html.push_str("</article>\n<div class=\"related\"><h3>Related</h3><ul>");
        for _ in 0..3 {
            let other = rng.below(1000);
            let _ = write!(
                html,
                "<li><a href=\"/article/{other}\">{}</a></li>",
                sentence(&mut rng)
            );
        }
        html.push_str("</ul></div>\n<aside class=\"sidebar\"><h3>Most popular</h3><ol>");
        for (i, item) in self.popular.iter().enumerate() {
            let _ = write!(html, "<li><a href=\"/popular/{i}\">{item}</a></li>");
        }
        html.push_str("</ol><div class=\"ad-slot\" data-slot=\"side\"></div></aside></div>\n");
        let _ = write!(
            html,
            "<footer><p>© 2026 {} — all rights reserved.</p><a href=\"/about\">About</a> <a href=\"/contact\">Contact</a> \
             <a href=\"https://social.example/{}\">Follow us</a></footer>\n</body></html>\n",
            self.name, self.host
        );
        // Body: cookie bar, header, div.page (article, related, aside), footer. In the article
        // the ad slot is the 4th element (after the h1 and two paragraphs); in the related
        // list only the heading repeats.
        let template_paths = vec![
            vec![1, 0],
            vec![1, 1],
            vec![1, 2, 0, 3],
            vec![1, 2, 1, 0],
            vec![1, 2, 2],
            vec![1, 3],
        ];
        SynthPage {
            url,
            html,
            template_paths,
        }
    }
}

impl Template {
    /// Listing page `p` of a [`multi_template_crawl`]: the host's cookie bar, header and footer
    /// around a grid of `cards` cards (linked image, headline, summary, byline), with a
    /// "featured" block above the grid when `featured`, and a pager.
    fn listing_at(&self, p: usize, seed: u64, (cards, featured): (usize, bool)) -> SynthPage {
        // The article page's chrome, its `<div class="page">` replaced by the listing.
        let article = self.page_at(p, &format!("section/{p}"), seed);
        let (Some(start), Some(end)) = (
            article.html.find("<div class=\"page\">"),
            article.html.find("<footer>"),
        ) else {
            return article;
        };
        let mut rng = SplitMix(
            seed ^ xxhash_rust::xxh3::xxh3_64(format!("{}/list/{p}", self.host).as_bytes()),
        );
        let section = self.sections[p % self.sections.len()];
        let mut main = String::with_capacity(4 << 10);
        let _ = write!(
            main,
            "<main class=\"listing\"><div class=\"crumbs\"><span>{section}</span></div>"
        );
        if featured {
            let _ = write!(
                main,
                "<section class=\"featured\"><h2>Featured</h2><div class=\"lead\"><p>{}</p></div></section>",
                sentence(&mut rng)
            );
        }
        main.push_str("<div class=\"grid\"><ul class=\"cards\">");
        for _ in 0..cards {
            let k = rng.below(1000);
            let _ = write!(
                main,
                "<li class=\"card\"><div class=\"thumb\"><a href=\"/article/{k}\"><img src=\"/img/{k}.jpg\"></a></div>\
                 <div class=\"meta\"><h3><a href=\"/article/{k}\">{}</a></h3><p class=\"summary\">{}</p>\
                 <span class=\"byline\">{}</span></div></li>",
                sentence(&mut rng),
                sentence(&mut rng),
                capitalize(rng.pick(WORDS))
            );
        }
        let _ = writeln!(
            main,
            "</ul></div><div class=\"pager\"><a href=\"?page=2\">Next page</a></div></main>"
        );
        let html = format!("{}{main}{}", &article.html[..start], &article.html[end..]);
        SynthPage {
            url: article.url,
            html,
            // Cookie bar, header, footer; the listing is the page's own.
            template_paths: vec![vec![1, 0], vec![1, 1], vec![1, 3]],
        }
    }
}

/// What [`multi_template_crawl`] made a page as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Design {
    /// A listing page (the host's second template), or an article.
    pub listing: bool,
    /// A listing's cards: the items of its repeated list.
    pub cards: usize,
    /// Whether a listing has its optional "featured" block.
    pub featured: bool,
}

/// A crawl whose hosts have two templates: `pages` articles as [`crawl`] makes them and
/// `pages` listing pages, each a grid of 3 to 12 cards with, on about half of them, a
/// "featured" block: several templates, repeated item lists and optional blocks, with what
/// the generator chose for each page.
pub fn multi_template_crawl(hosts: usize, pages: usize, seed: u64) -> Vec<(SynthPage, Design)> {
    let templates: Vec<Template> = (0..hosts).map(|h| Template::new(h, seed)).collect();
    let mut rng = SplitMix(seed ^ 0x11_57_1e_57);
    let mut crawled = Vec::with_capacity(2 * hosts * pages);
    for p in 0..pages {
        for template in &templates {
            let article = Design {
                listing: false,
                cards: 0,
                featured: false,
            };
            crawled.push((template.page(p, seed), article));
            let listing = Design {
                listing: true,
                cards: rng.between(3, 12),
                featured: rng.below(2) == 0,
            };
            let page = template.listing_at(p, seed, (listing.cards, listing.featured));
            crawled.push((page, listing));
        }
    }
    crawled
}

fn capitalize(word: &str) -> String {
    let mut chars = word.chars();
    chars.next().map_or(String::new(), |first| {
        first.to_uppercase().chain(chars).collect()
    })
}

/// Generates `pages` pages for each of `hosts` hosts, interleaved as a crawler would fetch
/// them (page 0 of every host, then page 1, ...).
pub fn crawl(hosts: usize, pages: usize, seed: u64) -> Vec<SynthPage> {
    let templates: Vec<Template> = (0..hosts).map(|h| Template::new(h, seed)).collect();
    (0..pages)
        .flat_map(|p| templates.iter().map(move |t| (t, p)))
        .map(|(t, p)| t.page(p, seed))
        .collect()
}

/// Whether host `h` is redesigned on night `night` of [`nightly_crawl`]: every third host,
/// a different third each night, from night 2 on.
pub fn redesigned(h: usize, night: u32) -> bool {
    night >= 2 && (h + night as usize).is_multiple_of(3)
}

/// Night `night` (1, 2, …) of a crawl that fetches the same `pages` pages of each host every
/// night (the same articles, the same texts), while some hosts change their template
/// ([`redesigned`]): night 1 is [`crawl`].
pub fn nightly_crawl(hosts: usize, pages: usize, seed: u64, night: u32) -> Vec<SynthPage> {
    let templates: Vec<Template> = (0..hosts)
        .map(|h| {
            let version = (2..=night).filter(|&n| redesigned(h, n)).count() as u32;
            Template::new(h, seed).redesigned(h, seed, version)
        })
        .collect();
    (0..pages)
        .flat_map(|p| templates.iter().map(move |t| (t, p)))
        .map(|(t, p)| t.page(p, seed))
        .collect()
}

/// [`crawl`], followed by each host's home page and the section pages its menu links to (all
/// with the host's template), as a crawl that follows the menu holds them: what seed 004's
/// key page and complete subdigraph need, which [`crawl`]'s articles alone never give.
pub fn crawl_with_menu_pages(hosts: usize, pages: usize, seed: u64) -> Vec<SynthPage> {
    let mut crawled = crawl(hosts, pages, seed);
    for h in 0..hosts {
        let template = Template::new(h, seed);
        crawled.push(template.page_at(pages, "", seed));
        for (k, section) in template.sections.iter().enumerate() {
            let path = section.to_lowercase();
            crawled.push(template.page_at(pages + 1 + k, &path, seed));
        }
    }
    crawled
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_templated() {
        let a = crawl(3, 4, 7);
        let b = crawl(3, 4, 7);
        assert_eq!(a.len(), 12);
        assert!(a
            .iter()
            .zip(&b)
            .all(|(x, y)| x.url == y.url && x.html == y.html));
        assert_ne!(crawl(3, 4, 8)[0].html, a[0].html, "the seed matters");
        // Two pages of one host share the footer; their articles differ.
        let footer = |html: &str| html[html.find("<footer>").unwrap()..].to_string();
        assert_eq!(footer(&a[0].html), footer(&a[3].html));
        assert_ne!(a[0].html, a[3].html);
    }

    #[test]
    fn a_redesign_changes_the_cookie_bar_and_sidebar_only() {
        assert_eq!(nightly_crawl(6, 3, 1, 1), crawl(6, 3, 1));
        let (before, after) = (nightly_crawl(6, 3, 1, 1), nightly_crawl(6, 3, 1, 2));
        for (h, (a, b)) in before.iter().zip(&after).take(6).enumerate() {
            assert_eq!(a.url, b.url);
            assert_eq!(a.html != b.html, redesigned(h, 2), "host {h}");
            if redesigned(h, 2) {
                assert!(b.html.contains("(design 1)"));
                let article = |html: &str| {
                    html[html.find("<article>").unwrap()..html.find("</article>").unwrap()]
                        .to_string()
                };
                assert_eq!(article(&a.html), article(&b.html));
            }
        }
    }

    #[test]
    fn a_multi_template_crawl_has_articles_and_listings() {
        let crawl = multi_template_crawl(2, 5, 3);
        assert_eq!(crawl.len(), 20);
        for (page, design) in &crawl {
            let cards = page.html.matches("<li class=\"card\">").count();
            assert_eq!(cards, design.cards, "{}", page.url);
            assert_eq!(page.html.contains("class=\"featured\""), design.featured);
            assert_eq!(page.html.contains("<article>"), !design.listing);
            assert!(page.html.contains("<footer>") && page.html.contains("cookie-bar"));
        }
        assert!(
            crawl.iter().any(|(_, d)| d.featured)
                && crawl.iter().any(|(_, d)| d.listing && !d.featured)
        );
    }

    #[test]
    fn gold_paths_name_the_template_blocks() {
        for page in crawl(3, 2, 1) {
            let dom = crate::dom::parse(&page.html, 256);
            let paths = element_paths(&dom);
            let at = |path: &[usize]| {
                (0..dom.len())
                    .find(|&i| dom.element(i).is_some() && paths[i] == path)
                    .map(|i| dom.path(i))
                    .unwrap_or_default()
            };
            let found: Vec<String> = page.template_paths.iter().map(|p| at(p)).collect();
            assert!(found[0].ends_with("body>div.cookie-bar"), "{found:?}");
            assert!(found[1].starts_with("html>body>") && !found[1].contains(">div.page"));
            assert!(found[2].ends_with("article>div.ad-inline"), "{found:?}");
            assert!(found[3].ends_with("div.related>h3"), "{found:?}");
            assert!(found[4].ends_with("div.page>aside.sidebar"), "{found:?}");
            assert!(found[5].ends_with("body>footer"), "{found:?}");
            assert_eq!(page.template_path_strings()[3], "1/2/1/0");
        }
    }
}
