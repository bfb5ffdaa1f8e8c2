//! Writing into a [`Dom`]'s arena: what both tree builders share, so that an element stores the
//! same attributes and the same visibility whichever builder made it.

use html5ever::{local_name, LocalName};

use super::tags::is_screen_reader_only;
use super::tokenizer::Attribute;
use super::{Dom, Element, NodeKind, Span, NONE};

/// Where an attribute goes in the arena: the five whose values later stages read are kept as
/// strings, every other one by its name only. [`Dom::add_element`] stores by it and the
/// reference builder's arena sizing counts by it, so the capacities follow what is stored.
#[derive(Clone, Copy)]
pub(super) enum Slot {
    Id,
    Classes,
    Href,
    Src,
    Alt,
    NameOnly,
}

impl Slot {
    pub(super) fn of(name: &LocalName) -> Slot {
        match *name {
            local_name!("id") => Slot::Id,
            local_name!("class") => Slot::Classes,
            local_name!("href") => Slot::Href,
            local_name!("src") => Slot::Src,
            local_name!("alt") => Slot::Alt,
            _ => Slot::NameOnly,
        }
    }
}

impl Dom {
    pub(super) fn add_string(&mut self, text: &str) -> Span {
        let start = self.strings.len() as u32;
        self.strings.push_str(text);
        Span {
            start,
            len: text.len() as u32,
        }
    }

    /// The element for a start tag, its kept attribute values added to the arena's tables.
    pub(super) fn add_element(&mut self, tag: LocalName, attrs: &[Attribute<'_>]) -> Element {
        let hidden_by_tag = super::tags::hides_by_tag(&tag);
        let (mut hidden_by_attribute, mut labelled) = (false, false);
        let mut role: Option<&str> = None;
        let dialog = tag == local_name!("dialog");
        let mut element = Element {
            tag,
            id: None,
            classes: 0..0,
            other_attributes: 0..0,
            kept: 0..0,
            href: None,
            src: None,
            alt: None,
            anchor: None,
            attribute_bytes: 0,
            hides_content: false,
            modal: dialog,
            screen_reader_only: false,
        };
        let classes_start = self.classes.len() as u32;
        let others_start = self.other_attributes.len() as u32;
        let kept_start = self.kept.len() as u32;
        for attr in attrs {
            let value: &str = &attr.value;
            element.attribute_bytes += (attr.name.len() + value.len() + 4) as u32;
            match Slot::of(&attr.name) {
                Slot::Id => element.id = Some(self.add_string(value)),
                Slot::Classes => {
                    for class in value.split_ascii_whitespace() {
                        element.screen_reader_only |= is_screen_reader_only(class);
                        let span = self.add_string(class);
                        self.classes.push(span);
                    }
                }
                Slot::Href => element.href = Some(self.add_string(value.trim())),
                Slot::Src => element.src = Some(self.add_string(value.trim())),
                Slot::Alt => element.alt = Some(self.add_string(value)),
                Slot::NameOnly => {
                    match attr.name {
                        local_name!("hidden") => hidden_by_attribute = true,
                        local_name!("style") => hidden_by_attribute |= style_hides(value),
                        local_name!("role") => role = Some(value.trim()),
                        ref name if &**name == "aria-labelledby" => {
                            labelled = !value.trim().is_empty();
                        }
                        ref name if &**name == "aria-modal" => {
                            element.modal |= value.trim().eq_ignore_ascii_case("true");
                        }
                        local_name!("name") if element.tag == local_name!("a") => {
                            element.anchor = Some(self.add_string(value.trim()));
                        }
                        _ => {}
                    }
                    if keeps_value(&element.tag, &attr.name) {
                        let span = self.add_string(value.trim());
                        self.kept.push((attr.name.clone(), span));
                    }
                    self.other_attributes.push(attr.name.clone());
                }
            }
        }
        element.classes = classes_start..self.classes.len() as u32;
        element.other_attributes = others_start..self.other_attributes.len() as u32;
        element.kept = kept_start..self.kept.len() as u32;
        // A tab panel hidden until its tab is chosen (WAI-ARIA's `role="tabpanel"`) holds what
        // a reader reaches with one click: a documentation page's code in each language, a
        // service page's plans. Human gold keeps most of such panels' words (WCXB's dev
        // documentation and service pages: docs/evaluation.md), so it is visible text here.
        // So is an accordion's panel, hidden until its heading is clicked: WAI-ARIA's pattern
        // labels it by that heading (`aria-labelledby`) with no role or `role="region"` (a
        // guide's steps, a course's FAQ), and nearly all of such panels' words are gold on
        // WCXB's dev pages. Menus, dialogs, modals and unlabelled disclosures hidden the same
        // way stay hidden: they are labelled by a role of their own or by nothing.
        let role_is = |name: &str| role.is_some_and(|r| r.eq_ignore_ascii_case(name));
        let tab_panel = role_is("tabpanel");
        let accordion_panel = labelled && (role.is_none() || role_is("region")) && !element.modal;
        element.hides_content =
            hidden_by_tag || (hidden_by_attribute && !tab_panel && !accordion_panel);
        element
    }

    /// Whether two elements have the same tag and attributes (as far as the arena keeps them).
    pub(super) fn same_element(&self, a: u32, b: u32) -> bool {
        let (x, y) = (&self.elements[a as usize], &self.elements[b as usize]);
        let text = |span: Option<Span>| span.map(|s| self.str(s));
        let classes = |e: &Element| {
            self.classes[e.classes.start as usize..e.classes.end as usize]
                .iter()
                .map(|&s| self.str(s))
        };
        let kept = |e: &Element| {
            self.kept[e.kept.start as usize..e.kept.end as usize]
                .iter()
                .map(|(name, span)| (name, self.str(*span)))
        };
        let others = |e: &Element| {
            &self.other_attributes
                [e.other_attributes.start as usize..e.other_attributes.end as usize]
        };
        x.tag == y.tag
            && x.modal == y.modal
            && x.attribute_bytes == y.attribute_bytes
            && text(x.id) == text(y.id)
            && text(x.href) == text(y.href)
            && text(x.src) == text(y.src)
            && text(x.alt) == text(y.alt)
            && text(x.anchor) == text(y.anchor)
            && classes(x).eq(classes(y))
            && others(x) == others(y)
            && kept(x).eq(kept(y))
    }

    /// Sets the title from the text inside `title_element` (the first `<title>`, or [`NONE`]).
    pub(super) fn set_title(&mut self, title_element: u32) {
        if title_element == NONE {
            return;
        }
        let texts: Vec<usize> = self
            .subtree(title_element as usize)
            .filter(|&i| self.text(i).is_some())
            .collect();
        self.title = match texts[..] {
            // The usual title is one text node: point at its string instead of copying it.
            [only] => match self.nodes[only].kind {
                NodeKind::Text { span, .. } => Some(span),
                _ => None,
            },
            _ => {
                let text: String = texts.iter().filter_map(|&i| self.text(i)).collect();
                Some(self.add_string(&text))
            }
        };
    }
}

/// Whether the arena keeps the value of attribute `name` on a `tag` element (besides id,
/// class, href, src and alt): what says what the page is, for [`super::metadata`]. A
/// `<meta>`'s name, property, http-equiv and content; a `<link>`'s or an `<a>`'s rel (the
/// canonical link, `rel="author"`); `<html lang>`; a `<script>`'s type (JSON-LD); a `<time>`'s
/// datetime; and microdata on any element (itemprop, itemtype, and the content an element
/// with an itemprop gives instead of its text). Few per page, so they cost little to keep.
pub(super) fn keeps_value(tag: &LocalName, name: &LocalName) -> bool {
    match *name {
        local_name!("itemprop") | local_name!("itemtype") | local_name!("content") => true,
        local_name!("name") | local_name!("property") | local_name!("http-equiv") => {
            *tag == local_name!("meta")
        }
        local_name!("rel") => *tag == local_name!("link") || *tag == local_name!("a"),
        local_name!("lang") | local_name!("xml:lang") => *tag == local_name!("html"),
        local_name!("type") => *tag == local_name!("script"),
        local_name!("datetime") => *tag == local_name!("time"),
        _ => false,
    }
}

/// Whether an inline style hides the element: `display:none` or `visibility:hidden`.
fn style_hides(style: &str) -> bool {
    let compact: String = style
        .chars()
        .filter(|c| !c.is_whitespace())
        .map(|c| c.to_ascii_lowercase())
        .collect();
    compact.contains("display:none") || compact.contains("visibility:hidden")
}
