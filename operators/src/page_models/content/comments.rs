//! Readers' comments under a story, found through the names of the page's markup.
//!
//! A comment thread is long first-person prose, as a story is, so the trees keep it: on
//! dragnet's and L3S-GN1's news and blog pages, whose gold leaves comments out, kept comments
//! were most of what the content model kept wrongly (blogs.suntimes.com kept 14,000 words of
//! comments against a story of 821). Comment sections name themselves: `#comments`,
//! `comment-list`, `commentbody`, `disqus_thread`. A discussion thread names its posts the same
//! way, and there the posts are the content; so a page's comments are dropped only when the
//! page has a text of its own outside them and does not declare itself a discussion in its
//! JSON-LD (`DiscussionForumPosting`, `QAPage`: a forum thread, a question and its answers).
//!
//! How much text of its own depends on how sure the names are ([`regions`]). A **thread** (an
//! element named for comments that holds others so named: `#comments > li.comment`) is a list
//! of comments, and goes whenever anything is kept outside it: under a photo or a video the
//! post's own text may be a title and a date. A **lone** element named for comments may be
//! something else so named (LessWrong wraps a post's body in `commentOnSelection`, a feature's
//! name), and goes only beside a text of its own of [`MIN_OWN_CHARS`].

use html5ever::local_name;

use crate::dom::Dom;
use crate::page_models::names::NameWords;

/// Characters called content outside the comments that make a page a story with comments
/// rather than a discussion, when the comment section is a lone element ([`Region::Lone`]): a
/// short post of a paragraph or two.
pub const MIN_OWN_CHARS: u32 = 500;

/// The bit of [`NameWords::cues`] that says a name has a comment word ([`is_comment_word`]).
/// Not one of the content model's features: only this rule reads it.
pub(crate) const COMMENT_NAME: u32 = 1 << 31;

/// Whether a lower-cased piece of a class or id names a comment section or a comment: it starts
/// with `comment` (not `commentary` or `commentaries`, an opinion piece's own name, nor
/// `commentator`) or with `disqus`. `page_models::names` asks it of each distinct piece.
pub(crate) fn is_comment_word(piece: &str) -> bool {
    (piece.starts_with("comment")
        && !piece.starts_with("commentary")
        && !piece.starts_with("commentaries")
        && !piece.starts_with("commentat"))
        || piece.starts_with("disqus")
}

/// Where a node lies against the page's comment sections ([`regions`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Region {
    /// In no element named for comments.
    Outside,
    /// Inside an element named for comments that holds no other so named, and in no thread.
    Lone,
    /// Inside a thread: an element named for comments that holds another so named.
    Thread,
}

/// Where each node lies against the elements named for comments ([`is_comment_word`]; `names`:
/// [`crate::page_models::names::of_page`]). An element that holds the page's first `<h1>` is
/// not a comment section whatever it is named: a blog engine may name a post's wrapper for its
/// comment status (`comments-open`), and the same goes for `<body>`.
pub fn regions(dom: &Dom, names: &[NameWords]) -> Vec<Region> {
    let mut holds_title = vec![false; dom.len()];
    if let Some(h1) = (0..dom.len()).find(|&i| dom.tag(i).is_some_and(|t| *t == local_name!("h1")))
    {
        for a in dom.ancestors_or_self(h1) {
            holds_title[a] = true;
        }
    }
    let named: Vec<bool> = (0..dom.len())
        .map(|i| {
            names.get(i).is_some_and(|n| n.cues & COMMENT_NAME != 0)
                && !holds_title[i]
                && dom
                    .tag(i)
                    .is_some_and(|t| !matches!(*t, local_name!("body") | local_name!("html")))
        })
        .collect();
    // Children come after their parents in the arena: backwards, each node has told its
    // parent before the parent is read; forwards, each parent is placed before its children.
    let mut holds_named = vec![false; dom.len()];
    for i in (1..dom.len()).rev() {
        if let (Some(parent), true) = (dom.parent(i), holds_named[i] || named[i]) {
            holds_named[parent] = true;
        }
    }
    let mut regions = vec![Region::Outside; dom.len()];
    for i in 0..dom.len() {
        let above = dom.parent(i).map_or(Region::Outside, |p| regions[p]);
        regions[i] = match (above, named[i], holds_named[i]) {
            (Region::Thread, _, _) | (_, true, true) => Region::Thread,
            (Region::Lone, _, _) | (_, true, false) => Region::Lone,
            (Region::Outside, false, _) => Region::Outside,
        };
    }
    regions
}

/// Whether the page's JSON-LD declares it a discussion: a script that opens like JSON, has a
/// `"@type"` key and names `DiscussionForumPosting` or `QAPage`.
pub fn declares_discussion(dom: &Dom) -> bool {
    (0..dom.len()).any(|i| match (dom.text(i), dom.visible_text(i)) {
        (Some(text), None) => {
            text.trim_start().starts_with(['{', '['])
                && text.contains("\"@type\"")
                && (text.contains("DiscussionForumPosting") || text.contains("QAPage"))
        }
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dom;
    use crate::page_models::names;

    #[test]
    fn comment_words_name_comments_but_commentary_does_not() {
        let names_comments = |name: &str| names::words_of_name(name).cues & COMMENT_NAME != 0;
        for name in [
            "comments",
            "comment-list",
            "commentBody",
            "commentarea",
            "disqus_thread",
        ] {
            assert!(names_comments(name), "{name}");
        }
        for name in [
            "commentary",
            "Commentaries",
            "commentator-bio",
            "recommended",
            "post",
        ] {
            assert!(!names_comments(name), "{name}");
        }
    }

    /// The region of each text of `html`, in document order.
    fn regions_of_texts(html: &str) -> Vec<(String, Region)> {
        let page = dom::parse(html, 512);
        let regions = regions(&page, &names::of_page(&page));
        (0..page.len())
            .filter_map(|i| page.text(i).map(|text| (text.to_string(), regions[i])))
            .collect()
    }

    #[test]
    fn a_section_holding_the_title_is_no_comment_section() {
        assert_eq!(
            regions_of_texts(
                "<body class=comments-open><article class='post comments-open'><h1>Story</h1>\
                 <p>Text</p></article><div id=comments><p>Nice</p></div></body>"
            ),
            [
                ("Story".to_string(), Region::Outside),
                ("Text".to_string(), Region::Outside),
                ("Nice".to_string(), Region::Lone),
            ]
        );
    }

    #[test]
    fn a_section_holding_comments_is_a_thread_and_one_alone_is_lone() {
        // The whole list is the thread, its unnamed items too.
        assert_eq!(
            regions_of_texts(
                "<body><h1>Story</h1><div class=commentOnSelection><p>Body</p></div>\
                 <ol id=comments><li class=comment><p>First</p></li><li><p>Second</p></li></ol>\
                 </body>"
            ),
            [
                ("Story".to_string(), Region::Outside),
                ("Body".to_string(), Region::Lone),
                ("First".to_string(), Region::Thread),
                ("Second".to_string(), Region::Thread),
            ]
        );
    }

    #[test]
    fn a_forum_thread_declares_itself() {
        let page = |ld: &str| {
            dom::parse(
                &format!(
                    "<head><script type=application/ld+json>{ld}</script></head><body>x</body>"
                ),
                512,
            )
        };
        assert!(declares_discussion(&page(
            r#"{"@type":"DiscussionForumPosting"}"#
        )));
        assert!(declares_discussion(&page(r#"[{"@type":"QAPage"}]"#)));
        assert!(!declares_discussion(&page(r#"{"@type":"NewsArticle"}"#)));
    }
}
