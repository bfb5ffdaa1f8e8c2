//! The words of id and class names that the page-level models read: the template model's
//! roles (`nav`, `footer`, `related`, …; [`super::features`]), the content model's cues
//! (`article`, `comment`, `caption`, …; [`super::content::features`]) and the comment words
//! of the comments rule ([`super::content::rules::comments`]). [`super::names`] matches every
//! name of a page against all of them at once.

pub(crate) const ROLE_NAV: u16 = 1;
pub(crate) const ROLE_HEADER: u16 = 1 << 1;
pub(crate) const ROLE_FOOTER: u16 = 1 << 2;
pub(crate) const ROLE_SIDEBAR: u16 = 1 << 3;
pub(crate) const ROLE_AD: u16 = 1 << 4;
pub(crate) const ROLE_SOCIAL: u16 = 1 << 5;
pub(crate) const ROLE_COMMENT: u16 = 1 << 6;
pub(crate) const ROLE_RELATED: u16 = 1 << 7;
pub(crate) const ROLE_COOKIE: u16 = 1 << 8;
pub(crate) const ROLE_BREADCRUMB: u16 = 1 << 9;
pub(crate) const ROLE_CONTENT: u16 = 1 << 10;

/// Class/id pieces that hint at a role: a piece (class or id split at every non-alphanumeric
/// character, lower-cased) matches when it equals a word or starts with a prefix. Short or
/// ambiguous words (`ad`, `main`) must match whole, or `shadow` and `domain` would match.
pub(crate) const ROLE_WORDS: &[(u16, &[&str], &[&str])] = &[
    (
        ROLE_NAV,
        &["nav", "menu", "navbar", "topnav"],
        &["navig", "menu"],
    ),
    (
        ROLE_HEADER,
        &["header", "masthead", "logo", "branding", "topbar"],
        &["header", "masthead"],
    ),
    (
        ROLE_FOOTER,
        &["footer", "copyright", "colophon"],
        &["footer"],
    ),
    (
        ROLE_SIDEBAR,
        &["sidebar", "aside", "rail", "widget", "widgets"],
        &["sidebar", "widget"],
    ),
    (
        ROLE_AD,
        &[
            "ad",
            "ads",
            "adsbygoogle",
            "advert",
            "dfp",
            "promo",
            "banner",
            "sponsor",
            "sponsored",
        ],
        &["advert", "sponsor"],
    ),
    (
        ROLE_SOCIAL,
        &[
            "share",
            "social",
            "facebook",
            "twitter",
            "addthis",
            "sharethis",
        ],
        &["share", "social"],
    ),
    (
        ROLE_COMMENT,
        &["comment", "comments", "disqus", "respond", "reply"],
        &["comment"],
    ),
    (
        ROLE_RELATED,
        &[
            "related",
            "recommended",
            "popular",
            "trending",
            "outbrain",
            "taboola",
            "recirc",
        ],
        &["related", "recommend"],
    ),
    (
        ROLE_COOKIE,
        &["cookie", "cookies", "consent", "gdpr", "cmp"],
        &["cookie", "consent"],
    ),
    (
        ROLE_BREADCRUMB,
        &["breadcrumb", "breadcrumbs", "crumbs"],
        &["breadcrumb"],
    ),
    (
        ROLE_CONTENT,
        &[
            "article", "content", "main", "post", "entry", "story", "prose",
        ],
        &["article", "content", "entry", "story"],
    ),
];

pub(crate) const CUE_MAIN: u32 = 1;
pub(crate) const CUE_ARTICLE: u32 = 1 << 1;
pub(crate) const CUE_NAV: u32 = 1 << 2;
pub(crate) const CUE_HEADER: u32 = 1 << 3;
pub(crate) const CUE_FOOTER: u32 = 1 << 4;
pub(crate) const CUE_ASIDE: u32 = 1 << 5;
pub(crate) const CUE_RELATED: u32 = 1 << 6;
pub(crate) const CUE_COMMENT: u32 = 1 << 7;
pub(crate) const CUE_SHARE: u32 = 1 << 8;
pub(crate) const CUE_CAPTION: u32 = 1 << 9;
pub(crate) const CUE_META: u32 = 1 << 10;
pub(crate) const CUE_AD: u32 = 1 << 11;
pub(crate) const CUE_BREADCRUMB: u32 = 1 << 12;
pub(crate) const CUE_OVERLAY: u32 = 1 << 13;
pub(crate) const CUE_FORM: u32 = 1 << 14;
pub(crate) const CUE_ITEM: u32 = 1 << 15;
pub(crate) const CUE_ITEMPROP: u32 = 1 << 16;

/// Class/id pieces that are cues to the content model, matched as [`ROLE_WORDS`] are: a piece
/// (class or id split at every non-alphanumeric character, lower-cased) matches when it equals
/// a word or starts with a prefix; short or ambiguous words match whole only (`ad` must not
/// match `shadow`).
pub(crate) const CUE_WORDS: &[(u32, &[&str], &[&str])] = &[
    (
        CUE_MAIN,
        &["main", "content", "maincontent"],
        &["maincontent"],
    ),
    (
        CUE_ARTICLE,
        &[
            "article", "post", "entry", "story", "body", "text", "prose", "blog",
        ],
        &["article", "entry", "story", "postbody", "richtext"],
    ),
    (
        CUE_NAV,
        &["nav", "menu", "navbar", "topnav", "pagination", "pager"],
        &["navig", "menu"],
    ),
    (
        CUE_HEADER,
        &["header", "masthead", "logo", "branding", "topbar"],
        &["header", "masthead"],
    ),
    (
        CUE_FOOTER,
        &["footer", "copyright", "colophon", "legal"],
        &["footer"],
    ),
    (
        CUE_ASIDE,
        &["sidebar", "aside", "rail", "widget", "widgets", "sidebox"],
        &["sidebar", "widget"],
    ),
    (
        CUE_RELATED,
        &[
            "related",
            "recommended",
            "popular",
            "trending",
            "outbrain",
            "taboola",
            "recirc",
            "teaser",
            "teasers",
            "more",
            "also",
            "promo",
            "latest",
            "headlines",
        ],
        &["related", "recommend", "teaser", "popular"],
    ),
    (
        CUE_COMMENT,
        &[
            "comment",
            "comments",
            "disqus",
            "respond",
            "reply",
            "replies",
            "discussion",
        ],
        &["comment"],
    ),
    (
        CUE_SHARE,
        &[
            "share",
            "social",
            "facebook",
            "twitter",
            "addthis",
            "sharethis",
            "print",
            "email",
            "follow",
        ],
        &["share", "social", "sharing"],
    ),
    (
        CUE_CAPTION,
        &[
            "caption",
            "credit",
            "credits",
            "photo",
            "figure",
            "wp-caption",
        ],
        &["caption", "credit"],
    ),
    (
        CUE_META,
        &[
            "byline",
            "author",
            "meta",
            "date",
            "time",
            "dateline",
            "tags",
            "tag",
            "category",
            "published",
            "posted",
            "timestamp",
        ],
        &["byline", "author", "dateline", "timestamp"],
    ),
    (
        CUE_AD,
        &[
            "ad",
            "ads",
            "adsbygoogle",
            "advert",
            "dfp",
            "banner",
            "sponsor",
            "sponsored",
        ],
        &["advert", "sponsor"],
    ),
    (
        CUE_BREADCRUMB,
        &["breadcrumb", "breadcrumbs", "crumbs"],
        &["breadcrumb"],
    ),
    (
        CUE_OVERLAY,
        &[
            "cookie",
            "cookies",
            "consent",
            "gdpr",
            "newsletter",
            "subscribe",
            "signup",
            "modal",
            "popup",
            "paywall",
        ],
        &["cookie", "consent", "newsletter", "subscri", "popup"],
    ),
    (
        CUE_ITEM,
        &[
            "item", "items", "card", "cards", "product", "products", "result", "results",
            "listing", "tile", "teaser",
        ],
        &["product", "listing"],
    ),
];

/// The bit of [`super::names::NameWords::cues`] that says a name has a comment word
/// ([`is_comment_word`]). Not one of the content model's features: only the comments rule
/// ([`super::content::rules::comments`]) reads it.
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
