//! What a block's containers are called: the words of the id and class names of the elements
//! around a block, each with its log-odds of standing over main content, learned from the gold.
//!
//! Web authors name their containers for what they hold, in a vocabulary shared far beyond one
//! site: `article-body`, `entry-content`, `post-message` over what a page exists to deliver;
//! `sidebar`, `breadcrumb`, `newsletter`, `recently-viewed`, `footnotes` over what it does
//! not. The content features read a fixed list of such words (`super::features`' cues); this
//! lexicon learns the rest from the gold, as [`super::lexicon`] does for the words of the
//! text, and gives the trees one number per block ([`scores`]): the mean weight of the name
//! words of the block's owner and its nearest [`NEAR_LEVELS`] ancestors. A word enters the
//! lexicon only when it stands over blocks of at least three hosts (`stencil train-content`),
//! so that a site's own naming cannot stand for it.

use super::blocks::Blocks;
use super::lexicon::Lexicon;
use crate::dom::Dom;
use crate::FastMap;
use xxhash_rust::xxh3::xxh3_64;

/// Ancestors of a block's owner whose names make its near score (the owner's own included).
///
/// Only the near names: a block's whole path up to the root (its mean, its lowest weight) also
/// says what kind of page it is on, and held out that costs shop pages more than it brings
/// (docs/evaluation.md).
pub const NEAR_LEVELS: usize = 3;

/// Name words longer than this (in bytes) are not looked up.
const LONGEST_WORD: usize = 40;

/// The distinct words of every element's id and class names, hashed: element `i`'s are
/// `words[ranges[i].0 as usize..ranges[i].1 as usize]`.
pub struct ElementWords {
    words: Vec<u64>,
    ranges: Vec<(u32, u32)>,
}

impl ElementWords {
    pub fn of(dom: &Dom) -> ElementWords {
        let mut names = PageNames::new(dom);
        let mut seen = Vec::new();
        let mut words = Vec::new();
        let mut ranges = Vec::with_capacity(dom.len());
        for i in 0..dom.len() {
            let start = words.len();
            names.for_each_word(dom, i, |_| (), &mut seen, |w, ()| words.push(w));
            ranges.push((start as u32, words.len() as u32));
        }
        ElementWords { words, ranges }
    }

    fn of_element(&self, i: usize) -> &[u64] {
        self.ranges
            .get(i)
            .map_or(&[][..], |&(a, b)| &self.words[a as usize..b as usize])
    }
}

/// A page's id and class names, each distinct one split once (a page repeats a few names on
/// hundreds of elements; it has about one distinct name in eight elements), each of its words
/// carried with a value computed once (`T`: nothing when fitting, the word's weight when
/// scoring). What the lexicon is fitted on ([`ElementWords`]) and what [`scores`] reads are the
/// same words because both read them here.
struct PageNames<'d, T> {
    /// Each distinct name's words: a range of `split`.
    known: FastMap<&'d str, (u32, u32)>,
    split: Vec<(u64, T)>,
}

impl<'d, T: Copy> PageNames<'d, T> {
    fn new(dom: &Dom) -> Self {
        PageNames {
            known: FastMap::with_capacity_and_hasher(dom.len() / 16, Default::default()),
            split: Vec::new(),
        }
    }

    /// Calls `f` with each distinct word of element `i`'s names, in order, and its value
    /// (`value` computes it the first time the word's name is met); `seen` is scratch space.
    fn for_each_word(
        &mut self,
        dom: &'d Dom,
        i: usize,
        value: impl Fn(u64) -> T,
        seen: &mut Vec<u64>,
        mut f: impl FnMut(u64, T),
    ) {
        let PageNames { known, split } = self;
        seen.clear();
        for name in dom.id(i).into_iter().chain(dom.classes(i)) {
            let (from, to) = *known.entry(name).or_insert_with(|| {
                let from = split.len() as u32;
                for_each_name_word(name, |w| split.push((w, value(w))));
                (from, split.len() as u32)
            });
            for &(w, v) in &split[from as usize..to as usize] {
                if !seen.contains(&w) {
                    seen.push(w);
                    f(w, v);
                }
            }
        }
    }
}

/// Calls `f` with the hash of every word of one id or class name, lower-cased on the stack.
///
/// A name's words are its alphabetic runs of two letters or more: `col-md-8` gives `col` and
/// `md`, and the generated names of CSS-in-JS tools (`sc-1x2y3z`, `css-9kj2`) give little that
/// recurs.
fn for_each_name_word(name: &str, mut f: impl FnMut(u64)) {
    let mut buffer = [0u8; LONGEST_WORD];
    for piece in name.split(|c: char| !c.is_ascii_alphabetic()) {
        if (2..=LONGEST_WORD).contains(&piece.len()) {
            let lower = &mut buffer[..piece.len()];
            lower.copy_from_slice(piece.as_bytes());
            lower.make_ascii_lowercase();
            f(xxh3_64(lower));
        }
    }
}

/// Every block's container words, for fitting: the distinct words of its owner's and every
/// ancestor's names. The lexicon is fitted on the whole path although [`scores`] reads only the
/// near names: fitted on the near words only, it does worse on shop pages (docs/evaluation.md).
pub fn block_words(dom: &Dom, blocks: &Blocks, elements: &ElementWords) -> Vec<Vec<u64>> {
    blocks
        .owners
        .iter()
        .map(|&owner| {
            let mut out: Vec<u64> = Vec::new();
            for a in dom.ancestors_or_self(owner as usize) {
                for &w in elements.of_element(a) {
                    if !out.contains(&w) {
                        out.push(w);
                    }
                }
            }
            out
        })
        .collect()
}

/// Every block's score under `lexicon`: the mean weight of the name words of its owner and the
/// owner's nearest [`NEAR_LEVELS`] ancestors (an element's words counted once each; 0 where
/// none of them has a name word).
///
/// Only the elements within those levels of a block are read, each once (a page's icons and
/// layout wrappers, most of its classed elements, are not), and each distinct name of the page
/// is split and looked up once.
pub fn scores(dom: &Dom, blocks: &Blocks, lexicon: &Lexicon) -> Vec<f32> {
    let mut names = PageNames::new(dom);
    let mut seen = Vec::new();
    // Per element: (Σ weight, words), once read (`UNREAD` words before).
    const UNREAD: u32 = u32::MAX;
    let mut own: Vec<(f32, u32)> = vec![(0.0, UNREAD); dom.len()];
    blocks
        .owners
        .iter()
        .map(|&owner| {
            let (mut sum, mut count) = (0f32, 0u32);
            for a in dom.ancestors_or_self(owner as usize).take(NEAR_LEVELS + 1) {
                if own[a].1 == UNREAD {
                    let (mut s, mut c) = (0f32, 0u32);
                    let weight = |w| lexicon.weight(w);
                    names.for_each_word(dom, a, weight, &mut seen, |_, weight| {
                        s += weight;
                        c += 1;
                    });
                    own[a] = (s, c);
                }
                sum += own[a].0;
                count += own[a].1;
            }
            if count == 0 {
                0.0
            } else {
                sum / count as f32
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dom;
    use crate::page_models::content::blocks::blocks;

    #[test]
    fn names_split_into_alphabetic_words() {
        let words = |name: &str| {
            let mut out = Vec::new();
            for_each_name_word(name, |w| out.push(w));
            out
        };
        assert_eq!(
            words("product-description__Body col-md-8"),
            ["product", "description", "body", "col", "md"]
                .map(|w| xxh3_64(w.as_bytes()))
                .to_vec()
        );
        assert!(words("x1 9").is_empty());
    }

    /// A container lexicon fitted to one page, each block content as `content` says.
    fn fitted(dom: &Dom, blocks: &Blocks, content: impl Fn(usize) -> bool) -> Lexicon {
        let words = block_words(dom, blocks, &ElementWords::of(dom));
        Lexicon::fit(
            words
                .iter()
                .enumerate()
                .map(|(b, w)| (b, w.as_slice(), content(b), 1.0)),
            1,
        )
    }

    #[test]
    fn a_block_scores_by_the_names_above_it() {
        let html = "<html><body class=page><div class=footer-links><p>Small print here.</p></div>\
            <div id=main class=article-body><p>The story itself, told at length.</p></div></body></html>";
        let dom = dom::parse(html, 64);
        let blocks = blocks(&dom);
        let lexicon = fitted(&dom, &blocks, |b| b == 1);
        let s = scores(&dom, &blocks, &lexicon);
        assert_eq!(s.len(), 2);
        assert!(s[0] < 0.0 && s[1] > 0.0, "{s:?}");
        let unknown = scores(&dom, &blocks, &Lexicon::default());
        assert_eq!(unknown, [0.0, 0.0]);
    }

    #[test]
    fn scores_read_each_elements_words_once() {
        // Words repeated across an element's names (`nav nav-item`, an id of one of its
        // classes) count once, as `ElementWords` (what the lexicon is fitted on) has them.
        let html = "<html><body><div id=menu class='nav nav-item'><ul class=menu-list>\
            <li class='nav-item item'><a href=/a>One</a></li>\
            <li class='nav-item item'><a href=/b>Two</a></li></ul></div>\
            <main class='main-content content'><section><div><div><p>Deep text.</p></div></div>\
            </section></main></body></html>";
        let dom = dom::parse(html, 64);
        let blocks = blocks(&dom);
        let lexicon = fitted(&dom, &blocks, |b| b + 1 == blocks.len());
        let elements = ElementWords::of(&dom);
        let expected: Vec<f32> = blocks
            .owners
            .iter()
            .map(|&owner| {
                let near: Vec<u64> = dom
                    .ancestors_or_self(owner as usize)
                    .take(NEAR_LEVELS + 1)
                    .flat_map(|a| elements.of_element(a).to_vec())
                    .collect();
                let sum: f32 = near.iter().map(|&w| lexicon.weight(w)).sum();
                if near.is_empty() {
                    0.0
                } else {
                    sum / near.len() as f32
                }
            })
            .collect();
        assert_eq!(scores(&dom, &blocks, &lexicon), expected);
        // The paragraph sits five levels under <main>: its near names do not reach it.
        assert_eq!(expected.last().copied(), Some(0.0));
    }
}
