//! Our tree builder ([`dom::parse`]) against html5ever's, which follows the HTML standard to
//! the letter ([`dom::parse_with_html5ever_tree_builder`]), on every page of the shared
//! corpora. Ours leaves out what needs nodes moved (see `operators/src/dom/builder.rs`), so
//! some trees differ in shape; what must hold is that the text a reader sees is the same, and
//! that the trees differ on few pages.

use stencil_operators::dom::{self, Dom, NodeKind};
use stencil_operators::reading::charset;
use stencil_operators::reading::warc::Limits;
use stencil_tests::{gold, shared_dir};

/// How far two parses of a page agree, from strictest to loosest.
#[derive(Default, Debug, Clone, Copy)]
struct Agreement {
    pages: usize,
    /// Same nodes in the same places, text included.
    identical: usize,
    /// Same elements and non-blank text in the same places (blank text may sit elsewhere).
    same_tree: usize,
    /// The same visible text, whitespace aside.
    same_visible_text: usize,
}

impl Agreement {
    fn add(&mut self, ours: &Dom, theirs: &Dom) -> Option<String> {
        self.pages += 1;
        let identical = shape(ours, false) == shape(theirs, false);
        let ours_tree = shape(ours, true);
        let theirs_tree = shape(theirs, true);
        let same_tree = ours_tree == theirs_tree;
        let same_text = visible_words(ours) == visible_words(theirs);
        self.identical += usize::from(identical);
        self.same_tree += usize::from(same_tree);
        self.same_visible_text += usize::from(same_text);
        (!same_tree).then(|| first_difference(&ours_tree, &theirs_tree))
    }

    fn share(&self, n: usize) -> f64 {
        n as f64 / self.pages.max(1) as f64
    }
}

/// The tree in document order: depth, then tag or text, of every node. With `skip_blank`,
/// whitespace-only text is left out and text is whitespace-normalized.
fn shape(dom: &Dom, skip_blank: bool) -> Vec<String> {
    let mut out = Vec::with_capacity(dom.len());
    for i in 0..dom.len() {
        let node = dom.node(i);
        let step = match node.kind {
            NodeKind::Document => continue,
            NodeKind::Element(_) => dom.tag(i).map(|t| t.to_ascii_lowercase().to_string()),
            NodeKind::Text { visible, .. } => {
                let text = dom.text(i).unwrap_or_default();
                if skip_blank {
                    let words: Vec<&str> = text.split_whitespace().collect();
                    (!words.is_empty()).then(|| format!("#{visible} {}", words.join(" ")))
                } else {
                    Some(format!("#{visible} {text}"))
                }
            }
        };
        if let Some(step) = step {
            out.push(format!("{} {step}", node.depth));
        }
    }
    out
}

fn visible_words(dom: &Dom) -> Vec<String> {
    (0..dom.len())
        .filter_map(|i| dom.visible_text(i))
        .flat_map(|t| t.split_whitespace().map(str::to_string))
        .collect()
}

fn first_difference(a: &[String], b: &[String]) -> String {
    let at = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let show = |s: &[String]| {
        s[at.saturating_sub(3)..(at + 4).min(s.len())]
            .iter()
            .map(|l| l.chars().take(80).collect::<String>())
            .collect::<Vec<_>>()
            .join(" | ")
    };
    format!(
        "node {at} of {}/{}\n    ours:   {}\n    theirs: {}",
        a.len(),
        b.len(),
        show(a),
        show(b)
    )
}

fn compare(corpus: &str, pages: impl Iterator<Item = (String, Vec<u8>, String)>) -> Agreement {
    let limits = Limits::default();
    let show = std::env::var("STENCIL_SHOW_DIFFS").is_ok();
    let mut agreement = Agreement::default();
    for (id, bytes, host) in pages {
        let tld = host.rsplit('.').next().filter(|t| !t.is_empty());
        let html = charset::decode(&bytes, None, tld).text;
        let ours = dom::parse(&html, limits.max_dom_depth);
        let theirs = dom::parse_with_html5ever_tree_builder(&html, limits.max_dom_depth);
        if let Some(difference) = agreement.add(&ours, &theirs) {
            if show {
                eprintln!("{corpus}/{id}: {difference}");
            }
        }
    }
    eprintln!(
        "{corpus}: {} pages; identical {:.3}, same tree {:.3}, same visible text {:.3}",
        agreement.pages,
        agreement.share(agreement.identical),
        agreement.share(agreement.same_tree),
        agreement.share(agreement.same_visible_text),
    );
    agreement
}

#[test]
fn our_tree_builder_agrees_with_html5evers_on_real_pages() {
    let Some(data) = shared_dir("data") else {
        return;
    };
    let mut all = Agreement::default();
    let mut merge = |a: Agreement| {
        all.pages += a.pages;
        all.identical += a.identical;
        all.same_tree += a.same_tree;
        all.same_visible_text += a.same_visible_text;
    };
    merge(compare(
        "dragnet",
        gold::dragnet(&data.join("dragnet"), 1)
            .into_iter()
            .map(|p| (p.id, p.html, p.host)),
    ));
    merge(compare(
        "cleanportaleval",
        gold::cleanportaleval(&data.join("cleanportaleval"))
            .into_iter()
            .map(|p| (p.id, p.html, p.host)),
    ));
    merge(compare(
        "l3s-gn1",
        gold::l3s_gn1(&data.join("l3s-gn1"))
            .into_iter()
            .map(|p| (p.id, p.original, p.host)),
    ));
    merge(compare(
        "swde-books",
        gold::swde_books(&data.join("swde-books"))
            .into_iter()
            .map(|p| (p.id, p.html, "swde.example".to_string())),
    ));
    eprintln!("all: {all:?}");
    assert!(all.pages > 4000, "the corpora are there: {all:?}");
    // The shares are printed above (`--nocapture` shows them). Trees differ where the
    // standard moves nodes (tables holding stray content, misnested formatting around
    // blocks), which leaves the visible text as it is.
    assert!(all.share(all.same_visible_text) >= 0.995, "{all:?}");
    assert!(all.share(all.same_tree) >= 0.93, "{all:?}");
}
