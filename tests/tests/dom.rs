//! The arena is the tree a browser builds, and subtree hashes identify shared blocks.

use stencil_operators::dom::subtree::{summarize, Subtree};
use stencil_operators::dom::{self, Dom};

fn parse(html: &str) -> Dom {
    dom::parse(html, 4096)
}

fn find(dom: &Dom, tag: &str) -> Vec<usize> {
    (0..dom.len())
        .filter(|&i| dom.tag(i).is_some_and(|t| &**t == tag))
        .collect()
}

fn child_tags(dom: &Dom, i: usize) -> Vec<String> {
    dom.children(i)
        .filter_map(|c| dom.tag(c).map(|t| t.to_string()))
        .collect()
}

#[test]
fn script_content_is_text_not_markup_and_not_visible() {
    let dom = parse("<html><body><script>var s='<div>';</script><p>shown</p></body></html>");
    assert!(
        find(&dom, "div").is_empty(),
        "no <div> element from inside the script"
    );
    let script = find(&dom, "script")[0];
    let inner: Vec<_> = dom.children(script).collect();
    assert_eq!(inner.len(), 1);
    assert_eq!(dom.text(inner[0]), Some("var s='<div>';"));
    assert_eq!(dom.visible_text(inner[0]), None);
    let sums = summarize(&dom, "");
    assert_eq!(sums[0].text_chars, "shown".len() as u32);
}

#[test]
fn unclosed_paragraphs_and_list_items_become_siblings() {
    let dom = parse("<body><ul><li>one<li>two<li>three</ul><p>a<p>b<p>c</body>");
    let ul = find(&dom, "ul")[0];
    assert_eq!(child_tags(&dom, ul), ["li", "li", "li"]);
    let body = find(&dom, "body")[0];
    assert_eq!(child_tags(&dom, body), ["ul", "p", "p", "p"]);
}

#[test]
fn a_stray_div_in_a_table_keeps_its_text_where_it_is() {
    let html = "<body><table><tr><td>cell</td></tr><div>stray</div></table></body>";
    // The standard moves it before the table (foster parenting), as html5ever's builder does;
    // ours never moves a node and leaves it in the table, its text intact.
    let standard = dom::parse_with_html5ever_tree_builder(html, 4096);
    let body = find(&standard, "body")[0];
    assert_eq!(child_tags(&standard, body), ["div", "table"]);

    let dom = parse(html);
    let body = find(&dom, "body")[0];
    assert_eq!(child_tags(&dom, body), ["table"]);
    let div = find(&dom, "div")[0];
    assert_eq!(dom.path(div), "html>body>table>tbody>div");
    let visible: Vec<&str> = (0..dom.len()).filter_map(|i| dom.visible_text(i)).collect();
    assert_eq!(visible, ["cell", "stray"]);
    let td = find(&dom, "td")[0];
    assert_eq!(dom.path(td), "html>body>table>tbody>tr>td");
}

#[test]
fn hidden_template_and_head_text_is_not_visible() {
    let dom = parse(
        "<html><head><title>The  Title</title><style>p{}</style></head><body>\
         <div hidden>h1</div><div style='display: NONE'>h2</div><template><p>h3</p></template>\
         <noscript>h4</noscript><p>seen</p></body></html>",
    );
    assert_eq!(dom.title(), Some("The  Title"));
    let visible: Vec<&str> = (0..dom.len()).filter_map(|i| dom.visible_text(i)).collect();
    assert_eq!(visible, ["seen"]);
    assert!(
        (0..dom.len()).all(|i| dom.text(i) != Some("h3")),
        "template contents are not children"
    );
}

#[test]
fn hidden_tab_panels_are_visible_but_not_what_hides_them() {
    let dom = parse(
        "<body><div role=tablist><button>Python</button><button>Ruby</button></div>\
         <div role=tabpanel><pre>print(1)</pre></div>\
         <div role=' TabPanel ' hidden style='display:none'><pre>puts 1</pre></div>\
         <div hidden><div role=tabpanel>menu panel</div></div>\
         <div role=dialog hidden>sign in</div><script role=tabpanel>code()</script></body>",
    );
    let visible: Vec<&str> = (0..dom.len()).filter_map(|i| dom.visible_text(i)).collect();
    assert_eq!(visible, ["Python", "Ruby", "print(1)", "puts 1"]);
}

#[test]
fn hidden_accordion_panels_are_visible_but_not_labelled_menus_or_dialogs() {
    let dom = parse(
        "<body><h3><button id=q1 aria-controls=a1 aria-expanded=false>Shipping</button></h3>\
         <div id=a1 role=region aria-labelledby=q1 hidden>Ships in two days.</div>\
         <dd aria-labelledby=q2 style='display: none'>Returns within a month.</dd>\
         <div role=menu aria-labelledby=m hidden>Account menu</div>\
         <div role=dialog aria-labelledby=d hidden>Sign in</div>\
         <div aria-modal=true aria-labelledby=c style='display:none'>Cookie choices</div>\
         <div role=region hidden>Unlabelled region</div><div aria-labelledby=' ' hidden>Empty \
         label</div><div hidden>Plain hidden</div></body>",
    );
    let visible: Vec<&str> = (0..dom.len()).filter_map(|i| dom.visible_text(i)).collect();
    assert_eq!(
        visible,
        ["Shipping", "Ships in two days.", "Returns within a month."]
    );
}

#[test]
fn inside_subtrees_marks_each_root_and_what_is_below_it_only() {
    let dom = parse(
        "<body><nav><a href=/>home</a></nav><main><p>text</p></main><footer>f</footer></body>",
    );
    let nav = find(&dom, "nav")[0];
    let footer = find(&dom, "footer")[0];
    // A root inside another, and one past the end of the arena, change nothing.
    let inside = dom.inside_subtrees(&[
        nav as u32,
        find(&dom, "a")[0] as u32,
        footer as u32,
        u32::MAX,
    ]);
    for (i, &is_inside) in inside.iter().enumerate() {
        let expected = dom.subtree(nav).contains(&i) || dom.subtree(footer).contains(&i);
        assert_eq!(is_inside, expected, "node {i} ({:?})", dom.tag(i));
    }
    assert!(!inside[find(&dom, "p")[0]]);
    assert_eq!(inside, dom.inside_marked(|i| i == nav || i == footer));
}

#[test]
fn attributes_and_paths() {
    let dom = parse(
        "<body><div id=header class='top  nav'><a href=' /home ' data-x=1>Home</a>\
         <img src=logo.png alt='Logo'></div></body>",
    );
    let div = find(&dom, "div")[0];
    assert_eq!(dom.id(div), Some("header"));
    assert_eq!(dom.classes(div).collect::<Vec<_>>(), ["top", "nav"]);
    assert_eq!(dom.path(div), "html>body>div#header.top");
    let a = find(&dom, "a")[0];
    assert_eq!(dom.href(a), Some("/home"));
    assert_eq!(
        dom.other_attributes(a)
            .iter()
            .map(|n| n.to_string())
            .collect::<Vec<_>>(),
        ["data-x"]
    );
    let img = find(&dom, "img")[0];
    assert_eq!(
        (dom.src(img), dom.alt(img)),
        (Some("logo.png"), Some("Logo"))
    );
    // Pre-order: every subtree is a contiguous range, parents before children.
    for i in 1..dom.len() {
        let parent = dom.parent(i).unwrap();
        assert!(parent < i && dom.subtree(parent).contains(&i));
    }
}

const HEADER: &str = r#"<div id="header" class="site-header">
    <a href="/"><img src="/logo.png" alt="Daily News"></a>
    <ul class="nav"><li><a href="/world">World</a></li><li><a href="/sport">Sport</a></li>
      <li><a href="/opinion">Opinion</a></li></ul>
    <span class="date">Friday, 20 November 2026</span>
  </div>"#;

fn page(header: &str, article: &str) -> String {
    format!(
        "<!DOCTYPE html><html><head><title>{article}</title><script>var pageId = {};</script></head>\
         <body>{header}<article><h1>{article}</h1><p>{article} {article}</p></article></body></html>",
        article.len()
    )
}

fn header_hash(html: &str) -> Subtree {
    let dom = parse(html);
    let sums = summarize(&dom, "news.example");
    let header = (0..dom.len())
        .find(|&i| dom.id(i) == Some("header"))
        .expect("header");
    sums[header]
}

#[test]
fn the_same_header_on_two_pages_has_the_same_hash() {
    let one = header_hash(&page(HEADER, "Storm hits the coast"));
    // Different article, different indentation.
    let reformatted = HEADER.replace("\n    ", "");
    let two = header_hash(&page(&reformatted, "Election results are in"));
    assert_eq!(one.content_hash, two.content_hash);
    // Numbers are content (an ISBN, a price): another date is another header block.
    let redated = header_hash(&page(&HEADER.replace("20 November", "21 November"), "x"));
    assert_ne!(one.content_hash, redated.content_hash);
    assert_eq!(one.structure_hash, two.structure_hash);
    assert_eq!(one.links, 4);
    assert_eq!(one.intra_host_links, 4);
    assert_eq!(one.images, 1);

    let changed = header_hash(&page(
        &HEADER.replace("Sport", "Sports"),
        "Storm hits the coast",
    ));
    assert_ne!(
        one.content_hash, changed.content_hash,
        "a one-word change is another block"
    );
    assert_eq!(
        one.structure_hash, changed.structure_hash,
        "but built the same way"
    );

    let whole = |html: &str| summarize(&parse(html), "")[0].content_hash;
    assert_ne!(
        whole(&page(HEADER, "Storm hits the coast")),
        whole(&page(HEADER, "Election results are in")),
        "the pages themselves differ"
    );
}

#[test]
fn all_paths_at_once_match_one_by_one_and_stay_short_when_deep() {
    let dom = parse(
        "<html><body><div id=h class='top bar'><ul class=nav><li>a</li></ul></div><p>t</p></body></html>",
    );
    let paths = dom.paths();
    for (i, path) in paths.iter().enumerate() {
        assert_eq!(*path, dom.path(i), "node {i}");
    }
    assert!(paths.contains(&"html>body>div#h.top>ul.nav>li".to_string()));
    // Only the wanted paths and their ancestors', the same as when all are built.
    let li = find(&dom, "li")[0];
    let some = dom.paths_where(|i| i == li);
    for (i, path) in some.iter().enumerate() {
        let built = dom.subtree(i).contains(&li);
        assert_eq!(
            *path,
            if built { dom.path(i) } else { String::new() },
            "node {i}"
        );
    }

    let deep = stencil_operators::dom::parse(&"<div class=level>".repeat(2000), 4096);
    let longest = deep.paths().into_iter().max_by_key(|p| p.len()).unwrap();
    assert!(longest.len() <= stencil_operators::dom::MAX_PATH_BYTES + "…>".len());
    assert!(longest.starts_with("…>div.level>") && longest.ends_with(">div.level"));

    // Multi-byte ids and classes: the cut must fall between characters.
    for id in ["é", "日本", "x€"] {
        let html = format!("<div id={id} class=ü>").repeat(700);
        let deep = stencil_operators::dom::parse(&html, 4096);
        assert!(deep
            .paths()
            .iter()
            .all(|p| p.len() <= stencil_operators::dom::MAX_PATH_BYTES + 8));
    }
}
