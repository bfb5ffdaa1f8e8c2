//! How much of a page is template, by four measures: visible text, anchor text, links and
//! HTML bytes. Template-volume studies (how much of the web is boilerplate) report these per
//! page and per host, for the page-level segmentation and for SiteLevel(θ) alike, so both go
//! through this one function with their own idea of which nodes are template.

use crate::dom::subtree::Subtree;
use crate::dom::Dom;

/// Template shares of one page, each in [0, 1]; `None` where the page has none of that measure
/// (a page without links has no link fraction, rather than a fraction of 0 that would pull
/// means down).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Fractions {
    pub text: Option<f64>,
    pub anchor_text: Option<f64>,
    pub links: Option<f64>,
    pub html: Option<f64>,
}

/// The shares of the page inside nodes marked `template`, where a node is inside when it or an
/// ancestor is marked. Each measure is summed over the top-most marked nodes, whose subtrees
/// `sums` already total, and divided by the document's total.
pub fn of(dom: &Dom, sums: &[Subtree], template: &[bool]) -> Fractions {
    if dom.is_empty() || sums.len() != dom.len() || template.len() != dom.len() {
        return Fractions::default();
    }
    let mut inside = vec![false; dom.len()];
    let mut templated = [0u64; 4];
    for i in 0..dom.len() {
        let parent_inside = dom.parent(i).is_some_and(|p| inside[p]);
        inside[i] = template[i] || parent_inside;
        if inside[i] && !parent_inside {
            for (sum, value) in templated.iter_mut().zip(measures(&sums[i])) {
                *sum += value;
            }
        }
    }
    let totals = measures(&sums[0]);
    let share = |k: usize| (totals[k] > 0).then(|| templated[k] as f64 / totals[k] as f64);
    Fractions {
        text: share(0),
        anchor_text: share(1),
        links: share(2),
        html: share(3),
    }
}

fn measures(sum: &Subtree) -> [u64; 4] {
    [
        u64::from(sum.text_chars),
        u64::from(sum.anchor_text_chars),
        u64::from(sum.links),
        u64::from(sum.html_bytes),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dom::parse;
    use crate::dom::subtree::summarize;

    const PAGE: &str =
        "<html><body><div id=\"nav\"><a href=\"/a\">Home</a> <a href=\"/b\">News</a>\
        </div><p>Article text that matters, with <a href=\"/c\">one link</a>.</p></body></html>";

    fn marked(dom: &Dom, id: &str) -> Vec<bool> {
        (0..dom.len()).map(|i| dom.id(i) == Some(id)).collect()
    }

    #[test]
    fn shares_follow_the_marked_subtree() {
        let dom = parse(PAGE, 512);
        let sums = summarize(&dom, "example.com");
        let f = of(&dom, &sums, &marked(&dom, "nav"));
        let nav = (0..dom.len()).find(|&i| dom.id(i) == Some("nav")).unwrap();
        let text = f64::from(sums[nav].text_chars) / f64::from(sums[0].text_chars);
        assert_eq!(f.text, Some(text));
        assert_eq!(f.links, Some(2.0 / 3.0));
        let anchors = (4 + 4) as f64 / (4 + 4 + 8) as f64;
        assert_eq!(f.anchor_text, Some(anchors));
        let html = f.html.unwrap();
        assert!(html > 0.0 && html < 1.0, "{html}");
    }

    #[test]
    fn nothing_marked_is_zero_everything_marked_is_one_and_missing_measures_are_none() {
        let dom = parse(PAGE, 512);
        let sums = summarize(&dom, "example.com");
        let none = of(&dom, &sums, &vec![false; dom.len()]);
        assert_eq!(none.text, Some(0.0));
        let mut all = vec![false; dom.len()];
        all[0] = true;
        let all = of(&dom, &sums, &all);
        assert_eq!(
            (all.text, all.links, all.html),
            (Some(1.0), Some(1.0), Some(1.0))
        );

        let bare = parse("<p>No links here</p>", 512);
        let sums = summarize(&bare, "example.com");
        let f = of(&bare, &sums, &vec![true; bare.len()]);
        assert_eq!((f.links, f.anchor_text), (None, None));
        assert_eq!(f.text, Some(1.0));
    }

    #[test]
    fn nested_marks_count_once() {
        let dom = parse(PAGE, 512);
        let sums = summarize(&dom, "example.com");
        let both: Vec<bool> = (0..dom.len())
            .map(|i| dom.id(i) == Some("nav") || dom.tag(i).is_some_and(|t| &**t == "a"))
            .collect();
        let f = of(&dom, &sums, &both);
        // The nav's two links and the article's one: all three links, counted once each.
        assert_eq!(f.links, Some(1.0));
    }
}
