//! What an element's id and class names say, to both page-level models at once: the template
//! model's roles and the content model's cues, both read from [`super::vocabulary`].
//!
//! A name's words are found by splitting it at every non-alphanumeric character, lower-casing
//! the pieces (pieces over 40 bytes are no words) and matching each against the two models'
//! word tables. That is string work, and the same names come back all the time: a page repeats
//! a few class names on hundreds of elements, a host repeats its class names on every page, and
//! both models ask about every element. So a page's names are read once for both models
//! ([`of_page`]), and each distinct name of the page is matched once.

use std::borrow::Cow;
use std::sync::OnceLock;

use super::vocabulary::{is_comment_word, COMMENT_NAME, CUE_WORDS, ROLE_WORDS};
use crate::dom::Dom;
use crate::FastMap;

/// What one name, or the union of an element's names, says to each model.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NameWords {
    /// The template model's roles (`super::vocabulary::ROLE_*`).
    pub(crate) roles: u16,
    /// The content model's cues (`super::vocabulary::CUE_*`), and whether a piece is a comment
    /// word (`super::vocabulary::COMMENT_NAME`, for the comments rule).
    pub(crate) cues: u32,
}

impl std::ops::BitOrAssign for NameWords {
    fn bitor_assign(&mut self, other: NameWords) {
        self.roles |= other.roles;
        self.cues |= other.cues;
    }
}

/// What each element's id and class names say (nothing, for the other nodes). Each distinct
/// name of the page is matched once and remembered by the page's own string: matching every
/// name of every element, once per model, costs a good share of the content model's time in
/// `perf`. The memo is the page's: a table of the names seen on other pages, kept per worker,
/// costs more than it saves, as its lookups miss the processor's caches.
pub fn of_page(dom: &Dom) -> Vec<NameWords> {
    // About half of a page's nodes are elements, and a page has about one distinct name in
    // eight elements.
    let mut known: FastMap<&str, NameWords> =
        FastMap::with_capacity_and_hasher(dom.len() / 16, Default::default());
    (0..dom.len())
        .map(|i| {
            let mut words = NameWords::default();
            for name in dom.id(i).into_iter().chain(dom.classes(i)) {
                words |= *known.entry(name).or_insert_with(|| words_of_name(name));
            }
            words
        })
        .collect()
}

/// `names` when the caller has read them already (`stencil run` does, once for both models),
/// else the page's own ([`of_page`]).
pub fn given_or_of_page<'a>(dom: &Dom, names: Option<&'a [NameWords]>) -> Cow<'a, [NameWords]> {
    match names {
        Some(names) => Cow::Borrowed(names),
        None => Cow::Owned(of_page(dom)),
    }
}

/// What `name` says, matched piece by piece.
pub(crate) fn words_of_name(name: &str) -> NameWords {
    static TABLE: OnceLock<WordTable> = OnceLock::new();
    let table = TABLE.get_or_init(WordTable::of_both_models);
    let mut words = NameWords::default();
    if name.is_ascii() {
        // Most names: split and lower-cased byte by byte, on the stack.
        let mut lower = [0u8; 40];
        for piece in name.as_bytes().split(|b| !b.is_ascii_alphanumeric()) {
            if piece.is_empty() || piece.len() > lower.len() {
                continue;
            }
            let lower = &mut lower[..piece.len()];
            lower.copy_from_slice(piece);
            lower.make_ascii_lowercase();
            if let Ok(piece) = std::str::from_utf8(lower) {
                words |= table.words(piece);
            }
        }
        return words;
    }
    let mut lower = String::new();
    for piece in name.split(|c: char| !c.is_alphanumeric()) {
        if piece.is_empty() || piece.len() > 40 {
            continue;
        }
        lower.clear();
        lower.extend(piece.chars().flat_map(char::to_lowercase));
        words |= table.words(&lower);
    }
    words
}

/// Both models' word lists, made for lookups: a piece gets the union of what the words it
/// equals and the prefixes it starts with say. Each model lists (mask, words, prefixes);
/// short or ambiguous words match whole only (`ad` must not match `shadow`).
struct WordTable {
    exact: FastMap<&'static str, NameWords>,
    /// The prefixes by their first byte: a piece is compared with the few that can match.
    prefixes: Vec<Vec<(&'static str, NameWords)>>,
}

impl WordTable {
    fn of_both_models() -> WordTable {
        let mut table = WordTable {
            exact: FastMap::default(),
            prefixes: vec![Vec::new(); 256],
        };
        let roles = ROLE_WORDS.iter().map(|&(roles, words, prefixes)| {
            let says = NameWords { roles, cues: 0 };
            (says, words, prefixes)
        });
        let cues = CUE_WORDS.iter().map(|&(cues, words, prefixes)| {
            let says = NameWords { roles: 0, cues };
            (says, words, prefixes)
        });
        for (says, words, prefixes) in roles.chain(cues) {
            for &word in words {
                *table.exact.entry(word).or_default() |= says;
            }
            for &prefix in prefixes {
                if let Some(&first) = prefix.as_bytes().first() {
                    table.prefixes[usize::from(first)].push((prefix, says));
                }
            }
        }
        table
    }

    fn words(&self, piece: &str) -> NameWords {
        let mut says = self.exact.get(piece).copied().unwrap_or_default();
        if is_comment_word(piece) {
            says.cues |= COMMENT_NAME;
        }
        if let Some(&first) = piece.as_bytes().first() {
            for &(prefix, also) in &self.prefixes[usize::from(first)] {
                if piece.starts_with(prefix) {
                    says |= also;
                }
            }
        }
        says
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dom;

    #[test]
    fn names_are_split_lowered_and_matched_for_both_models() {
        let words = words_of_name("Site-Footer__legal");
        assert_ne!(words.roles, 0, "footer is a template role");
        assert_ne!(words.cues, 0, "footer and legal are content cues");
        assert_eq!(words_of_name("x-9f3a"), NameWords::default());
        // A name with a letter outside ASCII takes the other path, to the same words.
        assert_eq!(words_of_name("Site-Footer__légal").roles, words.roles);
        assert_eq!(
            words_of_name("Site-Footer__légal").cues,
            words_of_name("Site-Footer").cues
        );
        // A piece over 40 bytes is no word, whatever it starts with.
        assert_eq!(
            words_of_name(&format!("footer{}", "a".repeat(40))),
            NameWords::default()
        );
    }

    #[test]
    fn a_page_gives_what_matching_each_name_gives() {
        let dom = dom::parse(
            "<div id=Main class='related-posts card'><p class='related-posts'>x</p>\
             <p class='shadow'>y</p></div>",
            512,
        );
        let page = of_page(&dom);
        assert_eq!(page.len(), dom.len());
        for (i, &words) in page.iter().enumerate() {
            let mut expected = NameWords::default();
            for name in dom.id(i).into_iter().chain(dom.classes(i)) {
                expected |= words_of_name(name);
            }
            assert_eq!(words, expected);
        }
        // The <p>'s `related-posts`, the <div>'s name again, comes from the page's table.
        let related = words_of_name("related-posts");
        assert_ne!(related.cues, 0);
        assert_eq!(page.iter().filter(|&&w| w == related).count(), 1);
    }
}
