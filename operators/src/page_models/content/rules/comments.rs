//! Readers' comments under a story, found through the names of the page's markup.
//!
//! A comment thread is long first-person prose, as a story is, so the trees keep it: on
//! dragnet's and L3S-GN1's news and blog pages, whose gold leaves comments out, kept comments
//! are much of what the content model keeps wrongly, and a busy thread can outweigh its story
//! many times over (blogs.suntimes.com; docs/evaluation.md). Comment sections name themselves
//! (`#comments`, `comment-list`, `commentbody`, `disqus_thread`), or a heading or an anchor so
//! named comes before them ([`regions`]). A discussion thread names its posts the same way, and
//! there the posts are the content; so a page's comments are dropped only when the page has a
//! text of its own outside them and does not say it is a discussion (`drop_comments`).

use html5ever::local_name;

use crate::dom::{heading_rank, Dom};
use crate::page_models::content::blocks::Blocks;
use crate::page_models::names::{self, NameWords};
use crate::page_models::vocabulary::COMMENT_NAME;

/// Characters called content outside the comments that make a page a story with comments
/// rather than a discussion, when the comment section is a lone element ([`Region::Lone`]): a
/// short post of a paragraph or two.
pub const MIN_OWN_CHARS: u32 = 500;

/// Whether anything on the page is named for comments: an element by its id or class names
/// (`names`: [`crate::page_models::names::of_page`]), or an anchor by its `name`.
pub fn any_named(dom: &Dom, names: &[NameWords]) -> bool {
    names.iter().any(|n| n.cues & COMMENT_NAME != 0)
        || (0..dom.len()).any(|i| names_comments(dom, i))
}

/// Whether node `i` is an `<a name>` anchor named for comments (`<a name="comments">`).
fn names_comments(dom: &Dom, i: usize) -> bool {
    dom.anchor(i)
        .is_some_and(|name| names::words_of_name(name).cues & COMMENT_NAME != 0)
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
    /// Among what a heading or an anchor named for comments introduces, its next siblings
    /// ([`after_comment_headings`]), and in no element so named: as sure as a lone element.
    Introduced,
}

/// Where each node lies against the elements named for comments
/// (`vocabulary::is_comment_word`; `names`:
/// [`crate::page_models::names::of_page`]; anchors by their `name` too) and what their headings
/// and anchors introduce ([`after_comment_headings`]). An element that holds the page's first
/// `<h1>` is not a comment section whatever it is named: a blog engine may name a post's
/// wrapper for its comment status (`comments-open`), and the same goes for `<body>`.
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
            (names.get(i).is_some_and(|n| n.cues & COMMENT_NAME != 0) || names_comments(dom, i))
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
    let after_heading = after_comment_headings(dom, &named, &holds_title);
    let mut regions = vec![Region::Outside; dom.len()];
    for i in 0..dom.len() {
        let above = dom.parent(i).map_or(Region::Outside, |p| regions[p]);
        regions[i] = match (above, named[i], holds_named[i]) {
            (Region::Thread, _, _) | (_, true, true) => Region::Thread,
            (Region::Lone, _, _) | (_, true, false) => Region::Lone,
            (Region::Introduced, false, _) => Region::Introduced,
            (Region::Outside, false, _) if after_heading[i] => Region::Introduced,
            (Region::Outside, false, _) => Region::Outside,
        };
    }
    regions
}

/// The nodes a comment heading or anchor introduces, for pages that do not wrap their comments
/// in an element so named. Older blog engines and news sites do not: Movable Type and TypePad
/// write a heading `<h2 id="comments">` and then each comment as its next sibling, the
/// Telegraph of 2008 an anchor `<a name="comments"></a>` and then the comments, ctv.ca the
/// anchor and then each comment as loose text beside the story's paragraphs ([`of_blocks`]).
/// On dragnet and L3S-GN1 these are most of the comments that the names of elements miss, and
/// they can run to many times the post (crazyauntpurl.com; docs/evaluation.md).
///
/// A heading named for comments (`named`: by id or class), a heading holding an empty anchor so
/// named (`<h2><a id="comments"></a>Comments</h2>`) and such an anchor outside any heading (`<a
/// name="comments"></a>`, taken as an `<h2>`) introduce their next siblings, up to one that
/// holds the page's title or is a heading of their rank or above not itself named for comments
/// (a manual's section on code comments ends there).
fn after_comment_headings(dom: &Dom, named: &[bool], holds_title: &[bool]) -> Vec<bool> {
    let rank_of = |n: usize| dom.tag(n).and_then(heading_rank);
    let mut introduced = vec![false; dom.len()];
    for i in 0..dom.len() {
        if !named[i] || introduced[i] {
            continue;
        }
        let (heading, rank) = if let Some(rank) = rank_of(i) {
            (i, rank)
        } else if is_empty_anchor(dom, i) {
            match dom.parent(i).and_then(|p| Some((p, rank_of(p)?))) {
                Some(in_heading) => in_heading,
                None => (i, BARE_ANCHOR_RANK),
            }
        } else {
            continue;
        };
        introduced[dom.subtree(heading)].fill(true);
        // Each sibling is introduced once: a later heading in the run is skipped above, so a
        // page of many such headings is still one pass.
        for sibling in dom.next_siblings(heading) {
            let ends = holds_title[sibling]
                || (!named[sibling]
                    && rank_of(sibling).is_some_and(|r| r <= rank)
                    && !dom
                        .children(sibling)
                        .any(|c| named[c] && is_empty_anchor(dom, c)));
            if ends {
                break;
            }
            introduced[dom.subtree(sibling)].fill(true);
        }
    }
    introduced
}

/// Each block's region: its owner's, or, when the owner is in none, [`Region::Introduced`] when
/// every text of the block is in some region and one is introduced (`regions`: [`regions`]).
/// A comment an anchor introduces may be loose text beside the story's paragraphs (`<a
/// name="comments"></a><b>Ann</b><br>Nice<br>`): its block's owner is the story's container,
/// but each of its texts is introduced. A block whose texts are only in elements named for
/// comments keeps its owner's region: a line of code whose text is all in `<span class="token
/// comment">` is not a reader's comment.
pub fn of_blocks(blocks: &Blocks, regions: &[Region]) -> Vec<Region> {
    let mut any_outside = vec![false; blocks.len()];
    let mut any_introduced = vec![false; blocks.len()];
    for (node, &block) in blocks.of_node.iter().enumerate() {
        let b = block as usize;
        if b < blocks.len() {
            any_outside[b] |= regions[node] == Region::Outside;
            any_introduced[b] |= regions[node] == Region::Introduced;
        }
    }
    blocks
        .owners
        .iter()
        .enumerate()
        .map(|(b, &owner)| match regions[owner as usize] {
            Region::Outside if any_introduced[b] && !any_outside[b] => Region::Introduced,
            owners => owners,
        })
        .collect()
}

/// The rank of heading that ends the comments an anchor outside any heading introduces.
const BARE_ANCHOR_RANK: u8 = 2;

/// An `<a>` that is a place to link to, not a link: no `href`, and nothing inside but white
/// space (so the check stops at its first element or word).
fn is_empty_anchor(dom: &Dom, i: usize) -> bool {
    dom.tag(i).is_some_and(|t| *t == local_name!("a"))
        && dom.href(i).is_none()
        && dom
            .subtree(i)
            .skip(1)
            .all(|n| dom.text(n).is_some_and(|t| t.trim().is_empty()))
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

/// Whether the page's URL is a discussion's, in the shapes that forum software gives its
/// threads: a host named for one (`forum.`, `forums.`, `community.`, `discuss.`, `boards.`,
/// `bbs.`), a path segment naming threads, forums or discussions (XenForo's `/threads/`,
/// Discourse's `/t/`, vBulletin's `showthread.php`, phpBB's `viewtopic.php`), or Reddit's
/// `/r/<name>/comments/`. Reddit names a thread's replies `comment` and declares nothing in
/// JSON-LD, so without the URL its replies would go as a story's comments (WCXB's forum gold
/// keeps them). `topic` and `topics` are not read: news sites file stories under `/topics/`.
pub fn url_names_discussion(url: &str) -> bool {
    let Ok(url) = url::Url::parse(url) else {
        return false;
    };
    let host_label = url
        .host_str()
        .and_then(|host| host.split('.').next())
        .unwrap_or("");
    if ["forum", "forums", "community", "discuss", "boards", "bbs"]
        .iter()
        .any(|name| host_label.eq_ignore_ascii_case(name))
    {
        return true;
    }
    let segments: Vec<&str> = url.path_segments().map_or(Vec::new(), Iterator::collect);
    segments.iter().enumerate().any(|(k, segment)| {
        let named = |names: &[&str]| names.iter().any(|n| segment.eq_ignore_ascii_case(n));
        named(&[
            "thread",
            "threads",
            "forum",
            "forums",
            "discussion",
            "discussions",
            "t",
            "boards",
            "showthread.php",
            "viewtopic.php",
        ]) || (named(&["comments"]) && k >= 2 && segments[k - 2] == "r")
    })
}

/// Readers' comments under a story are not its content (dragnet's and L3S-GN1's gold leave
/// them out, as WCXB's article gold does), but a discussion's posts are: on a page that does
/// not say it is a discussion, in its JSON-LD ([`declares_discussion`]: a forum thread, a
/// question and its answers) or in its URL, whose shape forum software fixes
/// ([`url_names_discussion`]), comments are dropped when the page keeps a text of its own
/// outside them.
///
/// How much text of its own depends on how sure the names are ([`regions`]). A block in a
/// **thread** (an element named for comments that holds others so named: `#comments >
/// li.comment`) is in a list of comments, and goes whenever anything is kept outside it: under
/// a photo or a video the post's own text may be a title and a date. A **lone** element named
/// for comments may be something else so named (LessWrong wraps a post's body in
/// `commentOnSelection`, a feature's name), and goes only beside [`MIN_OWN_CHARS`] characters
/// of the page's own; so do the comments a heading or an anchor so named introduces
/// ([`Region::Introduced`]).
///
/// Held out over three host partitions, dropping comments gains on the news sets (dragnet,
/// L3S-GN1) and on WCXB's articles and moves WCXB's forums either way; the introduced comments
/// make no page worse, and a discussion's URL keeps a Reddit thread's replies
/// (docs/evaluation.md).
pub(super) fn drop_comments(
    dom: &Dom,
    blocks: &Blocks,
    names: Option<&[NameWords]>,
    url: &str,
    calls: &mut [bool],
) {
    // Most pages name no comments, or keep nothing in a comment section, and are done after
    // a pass over the names or the arena; the JSON-LD is read only when something would be
    // dropped.
    let names = names::given_or_of_page(dom, names);
    if !any_named(dom, &names) {
        return;
    }
    let regions = regions(dom, &names);
    let block_regions = of_blocks(blocks, &regions);
    let mut own_chars = 0u32;
    let mut in_comments = false;
    for ((&call, &region), stats) in calls.iter().zip(&block_regions).zip(&blocks.stats) {
        if call {
            match region {
                Region::Outside => own_chars += stats.chars,
                Region::Lone | Region::Thread | Region::Introduced => in_comments = true,
            }
        }
    }
    if !in_comments || own_chars == 0 || declares_discussion(dom) || url_names_discussion(url) {
        return;
    }
    let lone_too = own_chars >= MIN_OWN_CHARS;
    for (call, &region) in calls.iter_mut().zip(&block_regions) {
        match region {
            Region::Thread => *call = false,
            Region::Lone | Region::Introduced if lone_too => *call = false,
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dom;
    use crate::dom::subtree::summarize;
    use crate::page_models::content::blocks::blocks;
    use crate::page_models::content::testing::calls_when_all_sure;
    use crate::page_models::content::{decide_parts, Context, Rule};

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

    /// Asserts the region of each text of `html`, in document order.
    fn assert_regions(html: &str, expected: &[(&str, Region)]) {
        let page = dom::parse(html, 512);
        let regions = regions(&page, &names::of_page(&page));
        let texts: Vec<(&str, Region)> = (0..page.len())
            .filter_map(|i| page.text(i).map(|text| (text, regions[i])))
            .collect();
        assert_eq!(texts, expected, "{html}");
    }

    #[test]
    fn a_section_holding_the_title_is_no_comment_section() {
        assert_regions(
            "<body class=comments-open><article class='post comments-open'><h1>Story</h1>\
             <p>Text</p></article><div id=comments><p>Nice</p></div></body>",
            &[
                ("Story", Region::Outside),
                ("Text", Region::Outside),
                ("Nice", Region::Lone),
            ],
        );
    }

    #[test]
    fn a_section_holding_comments_is_a_thread_and_one_alone_is_lone() {
        // The whole list is the thread, its unnamed items too.
        assert_regions(
            "<body><h1>Story</h1><div class=commentOnSelection><p>Body</p></div>\
             <ol id=comments><li class=comment><p>First</p></li><li><p>Second</p></li></ol>\
             </body>",
            &[
                ("Story", Region::Outside),
                ("Body", Region::Lone),
                ("First", Region::Thread),
                ("Second", Region::Thread),
            ],
        );
    }

    #[test]
    fn a_comment_heading_introduces_the_comments_after_it() {
        // Movable Type: the heading, then each comment as its sibling.
        assert_regions(
            "<body><div id=content><h1>Story</h1><p>Text</p>\
             <h2 id=comments>Comments</h2><div id=c1><p>Nice</p></div>\
             <p class=posted>Posted by: Ann</p></div><div>Side</div></body>",
            &[
                ("Story", Region::Outside),
                ("Text", Region::Outside),
                ("Comments", Region::Lone),
                ("Nice", Region::Introduced),
                ("Posted by: Ann", Region::Introduced),
                ("Side", Region::Outside),
            ],
        );
        // TypePad: an empty anchor so named inside the heading.
        assert_regions(
            "<body><h1>Story</h1><h2><a id=comments></a>Comments</h2><p>Nice</p></body>",
            &[
                ("Story", Region::Outside),
                ("Comments", Region::Introduced),
                ("Nice", Region::Introduced),
            ],
        );
    }

    #[test]
    fn an_anchor_named_for_comments_introduces_what_follows_it() {
        // The Telegraph in 2008: an HTML 4 anchor, a heading in a `<div>`, the comments.
        assert_regions(
            "<body><div><h1>Story</h1><p>Text</p><a name=comments></a>\
             <div class=yvhd>Comments</div><p class=story>Nice</p>\
             <h2>More news</h2><p>Teaser</p></div><p>Footer</p></body>",
            &[
                ("Story", Region::Outside),
                ("Text", Region::Outside),
                ("Comments", Region::Introduced),
                ("Nice", Region::Introduced),
                ("More news", Region::Outside),
                ("Teaser", Region::Outside),
                ("Footer", Region::Outside),
            ],
        );
        // A link to the comments is no anchor.
        assert_regions(
            "<body><h1>Story</h1><a name=comments href=#c></a><p>Text</p></body>",
            &[("Story", Region::Outside), ("Text", Region::Outside)],
        );
    }

    #[test]
    fn a_manuals_section_on_comments_ends_at_the_next_heading() {
        assert_regions(
            "<body><h1>Syntax</h1><h2 id=comments>Comments</h2><p>Start with #</p>\
             <h3>Block comments</h3><p>Use quotes</p><h2 id=strings>Strings</h2>\
             <p>Quote them</p><p>A link: <a id=comment-link href=#c>comments</a></p></body>",
            &[
                ("Syntax", Region::Outside),
                ("Comments", Region::Lone),
                ("Start with #", Region::Introduced),
                ("Block comments", Region::Introduced),
                ("Use quotes", Region::Introduced),
                ("Strings", Region::Outside),
                ("Quote them", Region::Outside),
                ("A link: ", Region::Outside),
                ("comments", Region::Lone),
            ],
        );
    }

    #[test]
    fn many_comment_headings_are_one_pass() {
        // Each run stops at the next heading of its rank, and each starts at its own heading:
        // 50,000 runs over one parent's 100,000 children, each child looked at once or twice.
        let page = dom::parse(
            &format!(
                "<body>{}</body>",
                "<h3 id=comments>c</h3><h2>s</h2>".repeat(50_000)
            ),
            512,
        );
        let regions = regions(&page, &names::of_page(&page));
        let texts: Vec<(&str, Region)> = (0..page.len())
            .filter_map(|i| page.text(i).map(|t| (t, regions[i])))
            .collect();
        assert_eq!(texts.len(), 100_000);
        assert!(texts
            .iter()
            .all(|&(t, r)| (t == "c") == (r == Region::Lone)));
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

    #[test]
    fn a_forum_threads_url_says_so() {
        for url in [
            "https://old.reddit.com/r/science/comments/1rku5x9/hair_follicles/",
            "https://forums.freebsd.org/threads/2024-the-year-of-desktop-freebsd.91732/",
            "https://meta.discourse.org/t/some-topic/12345",
            "https://www.webhostingtalk.com/showthread.php?t=1930933",
            "https://www.phpbb.com/community/viewtopic.php?t=2650000",
            "https://community.netdata.cloud/some/page",
            "https://Forum.Example.com/",
        ] {
            assert!(url_names_discussion(url), "{url}");
        }
        for url in [
            "https://www.canada.com/topics/news/story.html?id=af4bb925",
            "https://www.example.com/2024/05/comments-on-the-budget.html",
            "https://www.example.com/news/comments/12345",
            "https://www.warriorforum.com/beginners-area/1488296-simple-method.html",
            "not a url",
            "",
        ] {
            assert!(!url_names_discussion(url), "{url}");
        }
    }

    #[test]
    fn readers_comments_are_not_content_but_a_discussions_posts_are() {
        let story =
            "A council voted on Tuesday to rebuild the old bridge over the river. ".repeat(8);
        let reply = "About time they fixed it, I cross it every single day.";
        // A thread: a section named for comments holding comments so named.
        let thread =
            format!("<section id=comments><div class=comment-body><p>{reply}</p></div></section>");
        // A lone element so named, holding nothing else so named.
        let lone = format!("<div class=commentOnSelection><p>{reply}</p></div>");
        let page = |script: &str, story: &str, comments: &str| {
            format!(
                "<head><script type=application/ld+json>{script}</script></head><body>\
                 <article><h1>Bridge</h1><p>{story}</p></article>{comments}</body>"
            )
        };
        let news = r#"{"@type":"NewsArticle"}"#;
        let discussion = r#"{"@type":"DiscussionForumPosting"}"#;
        let caption = "Fixed at last.";
        for (script, story, comments, expected, why) in [
            (
                news,
                story.as_str(),
                &thread,
                [true, true, false],
                "a story's comments",
            ),
            (
                discussion,
                story.as_str(),
                &thread,
                [true; 3],
                "a discussion's replies",
            ),
            (
                news,
                caption,
                &thread,
                [true, true, false],
                "a photo's comments",
            ),
            (
                news,
                story.as_str(),
                &lone,
                [true, true, false],
                "a lone section beside a story",
            ),
            (
                news,
                caption,
                &lone,
                [true; 3],
                "a lone element so named beside a caption may be the post itself",
            ),
        ] {
            let (blocks, calls) = calls_when_all_sure(&page(script, story, comments));
            assert_eq!(blocks, 3);
            assert_eq!(calls, expected, "{why}");
        }
        // What a forum's JSON-LD does not say, its thread's URL may.
        let dom = dom::parse(&page(news, &story, &thread), 512);
        let sums = summarize(&dom, "example.com");
        let blocks = blocks(&dom);
        let p = vec![0.9; blocks.len()];
        let at = |url| {
            let context = Context {
                url,
                ..Context::default()
            };
            decide_parts(&dom, &sums, &blocks, &p, 0.5, Rule::Blocks, context)
        };
        let reddit = "https://old.reddit.com/r/science/comments/1rku5x9/bridge/";
        assert_eq!(at(reddit), [true; 3], "a thread's replies");
        let news_url = "https://news.example.com/2024/05/bridge.html";
        assert_eq!(at(news_url), [true, true, false], "a story's comments");
    }

    #[test]
    fn comments_a_heading_introduces_go_beside_a_story() {
        // Movable Type's comments: no element holds them, a heading named for them comes first.
        let page = |story: &str| {
            format!(
                "<body><div id=content><h1>Bridge</h1><p>{story}</p>\
                 <h2 id=comments>Comments</h2><p>About time they fixed it.</p>\
                 <p class=posted>Posted by: Ann at May 1, 2012 9:01 AM</p></div></body>"
            )
        };
        let story =
            "A council voted on Tuesday to rebuild the old bridge over the river. ".repeat(8);
        for (story, expected, why) in [
            (
                story.as_str(),
                [true, true, false, false, false],
                "beside a story",
            ),
            (
                "Fixed at last.",
                [true; 5],
                "beside a caption, the section may be the post",
            ),
        ] {
            let (blocks, calls) = calls_when_all_sure(&page(story));
            assert_eq!(blocks, 5);
            assert_eq!(calls, expected, "{why}");
        }
        // CTV in 2008: an anchor, then each comment as loose text beside the story's
        // paragraphs, so the comments' block is owned by the story's container.
        let (blocks, calls) = calls_when_all_sure(&format!(
            "<body><div><h1>Bridge</h1><p>{story}</p><hr><a name=commentSection></a>\
             <b>Ann</b><br>About time they fixed it.<br><hr><b>Bob</b><br>Agreed.</div></body>"
        ));
        assert_eq!(blocks, 3, "title, story, the comments' loose text");
        assert_eq!(calls, [true, true, false], "loose comments after an anchor");
        // A line of code whose text is all a highlighted code comment is no reader's comment.
        let (blocks, calls) = calls_when_all_sure(&format!(
            "<body><h1>Bridge</h1><p>{story}</p>\
             <pre><span class='token comment'>// count the spans</span></pre></body>"
        ));
        assert_eq!(blocks, 3);
        assert_eq!(calls, [true; 3], "a code comment");
    }
}
