//! A run's notes: the Markdown sidecar of a profile (`api-2026-11-20.md` beside
//! `api-2026-11-20.pb.gz`), rendered to HTML that is safe to put in the run's page.
//!
//! The notes are untrusted text, typically pasted in during an incident, so [`render`] is two
//! stages: pulldown-cmark turns the Markdown into HTML (with tables, strikethrough, task
//! lists and footnotes), then ammonia, an allow-list sanitiser that parses the HTML as a
//! browser would, keeps only the elements, attributes and URL schemes listed below. Raw HTML in the Markdown is passed through to that sanitiser and to nothing
//! else, so `<b>` survives and `<script>` never does.
//!
//! What the sanitiser lets through:
//!
//! - Text structure: paragraphs, `<h2>`–`<h6>`, lists, blockquotes, `<hr>`, `<pre>`/`<code>`,
//!   emphasis, strikethrough, tables (cell alignment kept as a `text-align` style, the only
//!   CSS property allowed), `<details>`, footnotes.
//! - Links with `http:`, `https:` and `mailto:` URLs, or relative ones; every link gets
//!   `rel="noopener noreferrer nofollow"`. Any other scheme (`javascript:`, `data:`,
//!   `vbscript:`, …) loses its `href`, however it was spelt or entity-encoded.
//! - `id` attributes, always prefixed with `notes-` so that the notes cannot take the name
//!   of an element or a global of the page; fragment links (`#x`) are rewritten to match
//!   (`#notes-x`), which keeps footnote references working.
//!
//! What it removes: `<script>`, `<style>`, `<iframe>`, `<svg>`, `<math>`, `<object>`,
//! `<embed>`, `<template>`, forms and their controls (with everything inside them), event
//! handler attributes (`onclick`, `onerror`, …) and every attribute not listed, HTML comments,
//! and `<h1>` (the page has its own; the tag goes, its text stays).
//!
//! Images: none. A page of the archive fetches nothing from outside its own origin, and an
//! image in the notes could point anywhere (a tracker of who reads the page, for a start);
//! relative image URLs would not help either, since the site does not copy files that sit
//! beside the profiles. So a Markdown image `![alt](url)` becomes a link to `url` with the
//! alt text as its label (or just the alt text inside another link), and an HTML `<img>` is
//! dropped. A task list's checkbox becomes the character ☐ or ☑ rather than an `<input>`.
//!
//! The output is a function of the input alone: the same Markdown gives the same bytes.

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::LazyLock;

use ammonia::{Builder, UrlRelative};
use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};

/// The prefix given to every `id` in the notes, and to every fragment link that points at one.
const ID_PREFIX: &str = "notes-";

/// Renders the Markdown notes of a run to sanitised HTML, ready to be inserted in a page
/// without further escaping.
///
/// Headings are shifted one level down (`#` gives `<h2>`, `######` stays `<h6>`) because
/// the page already has its `<h1>`. See the [module documentation](self) for what is kept.
pub fn render(markdown: &str) -> String {
    let html = to_html(markdown);
    if opens_deeper_than(&html, MAX_HTML_DEPTH) {
        // The sanitiser's HTML parser takes time in the square of the nesting: tens of
        // thousands of nested `<div>`s took seconds, a megabyte of them would take minutes
        // (docs/BENCHMARKS.md, "Figures behind the code"). Notes nested that deep are not prose; they are
        // shown as their text.
        return format!(
            "<p>These notes nest HTML more than {MAX_HTML_DEPTH} levels deep, so they are shown as written:</p>\n<pre>{}</pre>\n",
            escape(markdown)
        );
    }
    SANITISER.clean(&html).to_string()
}

/// Markdown containers (block quotes, lists) nested deeper than this are flattened: their
/// content stays, their boxes go (`>` repeated tens of thousands of times took seconds to
/// render: docs/BENCHMARKS.md, "Figures behind the code").
const MAX_NESTING: usize = 32;

/// HTML whose elements may nest deeper than this is not given to the sanitiser.
const MAX_HTML_DEPTH: usize = 1000;

/// Whether `html` opens more than `limit` elements that it has not closed at some point: an
/// upper bound of its nesting (an element a browser closes by itself, such as `<p>` or `<li>`,
/// counts as open), read in one pass without parsing.
fn opens_deeper_than(html: &str, limit: usize) -> bool {
    const VOID: &[&str] = &["area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"];
    let bytes = html.as_bytes();
    let mut depth = 0usize;
    let mut i = 0;
    while let Some(at) = memchr::memchr(b'<', &bytes[i..]) {
        i += at + 1;
        let closing = bytes.get(i) == Some(&b'/');
        let start = if closing { i + 1 } else { i };
        let end = bytes[start..].iter().position(|b| !b.is_ascii_alphanumeric()).map_or(bytes.len(), |n| start + n);
        // A tag's name starts with a letter; anything else after `<` is text.
        if end == start || !bytes[start].is_ascii_alphabetic() {
            continue;
        }
        let name = html[start..end].to_ascii_lowercase();
        let self_closing = bytes[end..].iter().position(|&b| b == b'>').is_some_and(|n| n > 0 && bytes[end + n - 1] == b'/');
        if closing {
            depth = depth.saturating_sub(1);
        } else if !VOID.contains(&name.as_str()) && !self_closing {
            depth += 1;
            if depth > limit {
                return true;
            }
        }
    }
    false
}

/// `text` escaped for HTML text content.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// The Markdown as HTML, before sanitising.
fn to_html(markdown: &str) -> String {
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_FOOTNOTES;
    let events = flatten_deep(rewrite(Parser::new_ext(markdown, options)));
    let mut html = String::with_capacity(markdown.len() + markdown.len() / 2);
    pulldown_cmark::html::push_html(&mut html, events.into_iter());
    html
}

static SANITISER: LazyLock<Builder<'static>> = LazyLock::new(sanitiser);

/// The heading level one below `level`; `<h6>` has none below it and stays.
fn shift(level: HeadingLevel) -> HeadingLevel {
    match level {
        HeadingLevel::H1 => HeadingLevel::H2,
        HeadingLevel::H2 => HeadingLevel::H3,
        HeadingLevel::H3 => HeadingLevel::H4,
        HeadingLevel::H4 => HeadingLevel::H5,
        HeadingLevel::H5 | HeadingLevel::H6 => HeadingLevel::H6,
    }
}

/// `events` with the block quotes and lists nested deeper than [`MAX_NESTING`] left out (their
/// content kept), so that the HTML stays shallow.
fn flatten_deep(events: Vec<Event<'_>>) -> Vec<Event<'_>> {
    let mut out = Vec::with_capacity(events.len());
    // For each open tag: whether it was kept.
    let mut open: Vec<bool> = Vec::new();
    let mut kept = 0usize;
    for event in events {
        match &event {
            Event::Start(tag) => {
                let container = matches!(tag, Tag::BlockQuote(_) | Tag::List(_) | Tag::Item);
                let keep = !container || kept < MAX_NESTING;
                open.push(keep);
                if keep {
                    kept += 1;
                    out.push(event);
                }
            }
            Event::End(_) => {
                if open.pop().unwrap_or(true) {
                    kept = kept.saturating_sub(1);
                    out.push(event);
                }
            }
            _ => out.push(event),
        }
    }
    out
}

/// The Markdown-level changes, made on the parser's events before they become HTML: headings
/// shifted, images turned into links, task-list checkboxes into characters.
fn rewrite<'a>(parser: Parser<'a>) -> Vec<Event<'a>> {
    let mut out = Vec::new();
    // Links open around the current event: an image inside one becomes its alt text only,
    // as a link inside a link is not HTML.
    let mut links = 0usize;
    // For each open image: whether it was turned into a link.
    let mut images: Vec<bool> = Vec::new();
    let mut events = parser.peekable();
    while let Some(event) = events.next() {
        match event {
            Event::Start(Tag::Heading {
                level,
                id,
                classes,
                attrs,
            }) => out.push(Event::Start(Tag::Heading {
                level: shift(level),
                id,
                classes,
                attrs,
            })),
            Event::End(TagEnd::Heading(level)) => {
                out.push(Event::End(TagEnd::Heading(shift(level))))
            }
            Event::Start(Tag::Link { .. }) => {
                links += 1;
                out.push(event);
            }
            Event::End(TagEnd::Link) => {
                links -= 1;
                out.push(event);
            }
            Event::Start(Tag::Image {
                link_type,
                dest_url,
                title,
                id,
            }) => {
                let as_link = links == 0;
                images.push(as_link);
                if as_link {
                    links += 1;
                    let label = matches!(events.peek(), Some(Event::End(TagEnd::Image)))
                        .then(|| dest_url.clone());
                    out.push(Event::Start(Tag::Link {
                        link_type,
                        dest_url,
                        title,
                        id,
                    }));
                    // An image without alt text would give an empty, invisible link.
                    if let Some(label) = label {
                        out.push(Event::Text(label));
                    }
                }
            }
            Event::End(TagEnd::Image) => {
                if images.pop() == Some(true) {
                    links -= 1;
                    out.push(Event::End(TagEnd::Link));
                }
            }
            Event::TaskListMarker(done) => {
                out.push(Event::Text(if done { "☑ " } else { "☐ " }.into()))
            }
            other => out.push(other),
        }
    }
    out
}

/// The elements kept: text structure, tables, code, footnotes. No `<h1>`, no `<img>`.
#[rustfmt::skip]
const TAGS: &[&str] = &[
    "a", "abbr", "b", "bdi", "bdo", "blockquote", "br", "caption", "cite", "code", "col",
    "colgroup", "dd", "del", "details", "dfn", "div", "dl", "dt", "em", "h2", "h3", "h4", "h5",
    "h6", "hr", "i", "ins", "kbd", "li", "mark", "ol", "p", "pre", "q", "rp", "rt", "ruby", "s",
    "samp", "small", "span", "strike", "strong", "sub", "summary", "sup", "table", "tbody", "td",
    "tfoot", "th", "thead", "time", "tr", "tt", "u", "ul", "var", "wbr",
];

/// The elements removed with everything inside them, rather than leaving their content as
/// text (other elements not in [`TAGS`] lose their tags only).
#[rustfmt::skip]
const CLEAN_CONTENT_TAGS: &[&str] = &[
    "script", "style", "iframe", "frame", "frameset", "object", "embed", "applet", "noscript",
    "noembed", "noframes", "template", "svg", "math", "form", "textarea", "select", "button",
    "title", "xmp",
];

/// The ammonia configuration used by [`render`], an allow-list described in the module
/// documentation.
fn sanitiser() -> Builder<'static> {
    let mut b = Builder::empty();
    b.tags(TAGS.iter().copied().collect())
        .clean_content_tags(CLEAN_CONTENT_TAGS.iter().copied().collect())
        .generic_attributes(HashSet::from(["id", "lang", "title"]))
        .tag_attributes(
            [
                ("a", &["href", "hreflang"][..]),
                ("bdo", &["dir"]),
                ("col", &["span"]),
                ("colgroup", &["span"]),
                ("details", &["open"]),
                ("ol", &["start"]),
                ("td", &["colspan", "rowspan", "style"]),
                ("th", &["colspan", "rowspan", "scope", "style"]),
                ("time", &["datetime"]),
            ]
            .into_iter()
            .map(|(tag, attrs)| (tag, attrs.iter().copied().collect()))
            .collect(),
        )
        // Table alignment, as pulldown-cmark writes it; nothing else of CSS.
        .filter_style_properties(HashSet::from(["text-align"]))
        // The classes pulldown-cmark gives footnotes, so the theme can style them.
        .allowed_classes(
            [
                (
                    "sup",
                    &["footnote-reference", "footnote-definition-label"][..],
                ),
                ("div", &["footnote-definition"]),
            ]
            .into_iter()
            .map(|(tag, classes)| (tag, classes.iter().copied().collect()))
            .collect(),
        )
        .url_schemes(HashSet::from(["http", "https", "mailto"]))
        .url_relative(UrlRelative::PassThrough)
        .link_rel(Some("noopener noreferrer nofollow"))
        .strip_comments(true)
        .id_prefix(Some(ID_PREFIX))
        .attribute_filter(|_element, attribute, value| match value.strip_prefix('#') {
            Some(fragment)
                if attribute == "href"
                    && !fragment.is_empty()
                    && !fragment.starts_with(ID_PREFIX) =>
            {
                Some(Cow::Owned(format!("#{ID_PREFIX}{fragment}")))
            }
            _ => Some(Cow::Borrowed(value)),
        });
    b
}

#[cfg(test)]
mod tests {
    #[test]
    fn nesting_is_bounded_before_the_sanitiser_sees_it() {
        // Elements a browser closes itself count as open: an upper bound.
        assert!(!opens_deeper_than("<div><p>a</p><br><img src=x><hr/></div>", 2));
        assert!(opens_deeper_than("<div><p>a</p></div>", 1));
        assert!(opens_deeper_than("<div><div>", 1));
        assert!(!opens_deeper_than(&"<b>x</b>".repeat(5000), 1));
        assert!(!opens_deeper_than("a < b and c <3 d", 0), "a < that opens no tag is text");
        // Markdown containers past 32 levels are flattened, their text kept.
        let html = to_html(&format!("{}x", "> ".repeat(100)));
        assert_eq!(html.matches("<blockquote>").count(), 32);
        assert_eq!(html.matches("</blockquote>").count(), 32);
        assert!(html.contains('x'));
        let html = to_html(&format!("{}y", "- ".repeat(100)));
        assert!(html.matches("<ul>").count() <= 32 && html.contains('y'), "{html}");
    }

    use super::*;

    /// The output lowercased, for checks that must not depend on how the input was spelt.
    fn lower(markdown: &str) -> String {
        render(markdown).to_lowercase()
    }

    #[test]
    fn script_is_removed_with_its_content() {
        let out = lower("before\n\n<script>alert(1)</script>\n\nafter <script>alert(2)</script>");
        assert!(!out.contains("<script"), "{out}");
        assert!(!out.contains("alert"), "{out}");
        assert!(out.contains("before") && out.contains("after"), "{out}");
    }

    #[test]
    fn javascript_links_lose_their_href() {
        for md in [
            "[x](javascript:alert(1))",
            "[x](JaVaScRiPt:alert(1))",
            "[x](&#106;avascript:alert(1))",
            "[x](&#x6A;avascript&colon;alert(1))",
            "[x]( javascript:alert(1) )",
            "[x][r]\n\n[r]: javascript:alert(1)",
            "<a href=\"javascript:alert(1)\">x</a>",
            "<a href=\"JAVASCRIPT:alert(1)\">x</a>",
            "<a href=\"java&#10;script:alert(1)\">x</a>",
            "<a href=\"&#x6a;avascript:alert(1)\">x</a>",
            "<a href=\" javascript:alert(1)\">x</a>",
        ] {
            let out = lower(md);
            assert!(!out.contains("javascript"), "{md:?} gave {out}");
            assert!(!out.contains("href"), "{md:?} gave {out}");
            assert!(out.contains(">x</a>"), "{md:?} lost its text: {out}");
        }
    }

    #[test]
    fn data_and_vbscript_links_lose_their_href() {
        for md in [
            "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
            "[x](vbscript:msgbox(1))",
            "<a href=\"data:text/html,<script>alert(1)</script>\">x</a>",
            "<a href=\"VBScript:msgbox(1)\">x</a>",
        ] {
            let out = lower(md);
            assert!(!out.contains("href"), "{md:?} gave {out}");
            assert!(
                !out.contains("data:") && !out.contains("vbscript:"),
                "{md:?} gave {out}"
            );
            assert!(!out.contains("<script"), "{md:?} gave {out}");
        }
    }

    #[test]
    fn images_are_never_fetched() {
        let out = lower("<img src=x onerror=alert(1)>");
        assert!(!out.contains("<img"), "{out}");
        assert!(!out.contains("onerror"), "{out}");
        assert!(!out.contains("alert"), "{out}");

        let out = render("![graph of the spike](https://cdn.example.com/spike.png)");
        assert!(!out.contains("<img"), "{out}");
        assert!(
            out.contains(r#"<a href="https://cdn.example.com/spike.png" rel="noopener noreferrer nofollow">graph of the spike</a>"#),
            "{out}"
        );

        // No alt text: the URL is the label, so the link is not invisible.
        let out = render("![](/a.png)");
        assert!(
            out.contains(r#"<a href="/a.png" rel="noopener noreferrer nofollow">/a.png</a>"#),
            "{out}"
        );

        // An image in a link (a badge) is its alt text, not a link inside a link.
        let out = render("[![build](https://ci.example.com/b.svg)](https://ci.example.com/)");
        assert!(!out.contains("<img"), "{out}");
        assert_eq!(out.matches("<a ").count(), 1, "{out}");
        assert!(out.contains(r#"href="https://ci.example.com/""#), "{out}");
        assert!(out.contains(">build</a>"), "{out}");

        // A javascript: image is a link without href.
        let out = lower("![x](javascript:alert(1))");
        assert!(
            !out.contains("javascript") && !out.contains("href"),
            "{out}"
        );

        for md in [
            "<picture><source srcset=x.png></picture>",
            "<video src=x.mp4 poster=y.png></video>",
            "<audio src=x.mp3></audio>",
            "<link rel=stylesheet href=https://x.example/s.css>",
            "<table background=x.png><tr><td>1</td></tr></table>",
        ] {
            let out = lower(md);
            assert!(
                !out.contains("src") && !out.contains(".png") && !out.contains("<link"),
                "{md:?} gave {out}"
            );
        }
    }

    #[test]
    fn svg_iframe_and_event_handlers_are_removed() {
        for md in [
            "<svg onload=alert(1)><circle r=1 /></svg>",
            "<svg><script>alert(1)</script></svg>",
            "<iframe src=\"https://evil.example.com/\"></iframe>",
            "<iframe srcdoc=\"<script>alert(1)</script>\"></iframe>",
            "<math><mtext><script>alert(1)</script></mtext></math>",
            "<object data=x.swf></object><embed src=x.swf>",
        ] {
            let out = lower(md);
            for bad in [
                "<svg", "<iframe", "<math", "<object", "<embed", "onload", "alert", "src",
            ] {
                assert!(!out.contains(bad), "{md:?} gave {out}");
            }
        }

        let out = lower(
            "<div onclick=\"alert(1)\" onmouseover='alert(2)' style=\"position:fixed\">hi</div>",
        );
        assert!(out.contains("<div>hi</div>"), "{out}");
        assert!(
            !out.contains("onclick") && !out.contains("onmouseover") && !out.contains("style"),
            "{out}"
        );
        assert!(!out.contains("alert"), "{out}");

        let out = lower("<p><b onmouseover=alert(1)>bold</b> <details open ontoggle=alert(1)><summary>s</summary>x</details></p>");
        assert!(out.contains("<b>bold</b>"), "{out}");
        assert!(
            !out.contains("onmouseover") && !out.contains("ontoggle"),
            "{out}"
        );
    }

    #[test]
    fn style_forms_and_comments_are_removed() {
        let out = lower("<style>body{display:none}</style>\n\ntext");
        assert!(!out.contains("<style") && !out.contains("display"), "{out}");
        assert!(out.contains("text"), "{out}");

        let out = lower("<form action=https://evil.example.com/><input name=p type=password><button>go</button></form>ok");
        for bad in ["<form", "<input", "<button", "action", "password", "evil"] {
            assert!(!out.contains(bad), "{out}");
        }
        assert!(out.contains("ok"), "{out}");

        let out = lower("a <!-- <script>alert(1)</script> --> b");
        assert!(!out.contains("<!--") && !out.contains("alert"), "{out}");

        let out = lower("<meta http-equiv=refresh content=\"0;url=https://evil.example.com/\"><base href=https://evil.example.com/>x");
        assert!(
            !out.contains("<meta") && !out.contains("<base") && !out.contains("evil"),
            "{out}"
        );
    }

    #[test]
    fn inline_raw_html_is_sanitised_not_dropped() {
        let out = render(
            "a <b>bold</b> and <kbd>Ctrl</kbd>+<kbd>C</kbd>, <span style=\"color:red\">red</span>",
        );
        assert!(out.contains("<b>bold</b>"), "{out}");
        assert!(out.contains("<kbd>Ctrl</kbd>"), "{out}");
        assert!(out.contains("<span>red</span>"), "{out}");
    }

    #[test]
    fn autolinks() {
        let out = render("see <https://status.example.com/incidents/42>");
        assert!(
            out.contains(r#"<a href="https://status.example.com/incidents/42" rel="noopener noreferrer nofollow">https://status.example.com/incidents/42</a>"#),
            "{out}"
        );
        let out = render("mail <oncall@example.com>");
        assert!(out.contains(r#"href="mailto:oncall@example.com""#), "{out}");

        // `<javascript:…>` is an autolink in CommonMark: its text stays, as text.
        let out = lower("<javascript:alert(1)>");
        assert!(!out.contains("href"), "{out}");
        assert!(!out.contains("<script"), "{out}");
    }

    #[test]
    fn incident_link_keeps_its_href() {
        let out = render("Caused by [INC-123](https://tracker.example.com/INC-123).");
        assert!(
            out.contains(r#"<a href="https://tracker.example.com/INC-123" rel="noopener noreferrer nofollow">INC-123</a>"#),
            "{out}"
        );
        let out = render("[runbook](../runbooks/api.html) and [query](?q=1)");
        assert!(out.contains(r#"href="../runbooks/api.html""#), "{out}");
        assert!(out.contains(r#"href="?q=1""#), "{out}");
        let out = render("[ops](mailto:ops@example.com) <a href=\"https://x.example/\" target=_blank rel=opener>x</a>");
        assert!(out.contains(r#"href="mailto:ops@example.com""#), "{out}");
        assert!(
            !out.contains("target") && !out.contains("\"opener\""),
            "{out}"
        );
        assert_eq!(
            out.matches(r#"rel="noopener noreferrer nofollow""#).count(),
            2,
            "{out}"
        );
    }

    #[test]
    fn styles_that_could_draw_over_the_page_are_removed_and_alignment_kept() {
        let overlay = "position:fixed;top:0;left:0;z-index:9999;width:100%;height:100%;color:red";
        // Where a style is allowed (table cells), only `text-align` of it stays.
        let out = lower(&format!(
            "<table><tr><td style=\"{overlay};text-align:right\">x</td><th style=\"text-align:center;{overlay}\">y</th></tr></table>"
        ));
        assert!(out.contains("<td style=\"text-align:right\">x</td>"), "{out}");
        assert!(out.contains("<th style=\"text-align:center\">y</th>"), "{out}");
        for bad in ["position", "fixed", "z-index", "9999", "width", "height", "top", "left", "color"] {
            assert!(!out.contains(bad), "{bad} in {out}");
        }
        // Anywhere else the style attribute goes whole.
        let out = lower(&format!("<span style=\"{overlay}\">over</span> <div style=\"{overlay}\">all</div>"));
        assert!(out.contains("<span>over</span>") && out.contains("<div>all</div>"), "{out}");
        assert!(!out.contains("style") && !out.contains("position"), "{out}");
    }

    #[test]
    fn tables_survive() {
        let out = render(
            "| fn | self |\n|:---|-----:|\n| `parse` | 41% |\n| a<script>x</script> | b |\n",
        );
        assert!(out.contains("<table>"), "{out}");
        assert!(out.contains("<thead>") && out.contains("<tbody>"), "{out}");
        assert!(
            out.contains(r#"<th style="text-align:left">fn</th>"#),
            "{out}"
        );
        assert!(
            out.contains(r#"<td style="text-align:right">41%</td>"#),
            "{out}"
        );
        assert!(
            out.contains(r#"<td style="text-align:left"><code>parse</code></td>"#),
            "{out}"
        );
        assert!(!out.contains("<script"), "{out}");
    }

    #[test]
    fn fenced_code_survives_escaped() {
        let out =
            render("```rust\nfn main() { if a < b && c > d { println!(\"<script>\"); } }\n```\n");
        assert!(out.starts_with("<pre><code>"), "{out}");
        assert!(out.contains("if a &lt; b &amp;&amp; c &gt; d"), "{out}");
        assert!(out.contains("&lt;script&gt;"), "{out}");
        assert!(!out.contains("<script"), "{out}");
        assert!(out.contains("</code></pre>"), "{out}");
    }

    #[test]
    fn headings_shift_down_one_level() {
        let out =
            render("# One\n## Two\n### Three\n#### Four\n##### Five\n###### Six\n\nSetext\n===\n");
        for (tag, text) in [
            ("h2", "One"),
            ("h3", "Two"),
            ("h4", "Three"),
            ("h5", "Four"),
            ("h6", "Five"),
            ("h6", "Six"),
            ("h2", "Setext"),
        ] {
            assert!(
                out.contains(&format!("<{tag}>{text}</{tag}>")),
                "{tag} {text}: {out}"
            );
        }
        assert!(!out.contains("<h1"), "{out}");
        // Raw <h1> loses its tag, not its text.
        let out = render("<h1>Title</h1>");
        assert!(!out.contains("<h1") && out.contains("Title"), "{out}");
    }

    #[test]
    fn lists_quotes_emphasis_and_rules() {
        let out = render("> quoted *em* **strong** ~~gone~~\n\n---\n\n1. one\n2. two\n\n- [x] done\n- [ ] todo\n");
        for want in [
            "<blockquote>",
            "<em>em</em>",
            "<strong>strong</strong>",
            "<del>gone</del>",
            "<hr>",
            "<ol>",
            "<li>one</li>",
            "<ul>",
            "<li>☑ done</li>",
            "<li>☐ todo</li>",
        ] {
            assert!(out.contains(want), "{want}: {out}");
        }
        assert!(!out.contains("<input"), "{out}");
    }

    #[test]
    fn footnotes_link_to_prefixed_ids() {
        let out = render("Latency rose[^pool].\n\n[^pool]: The connection pool was exhausted.\n");
        assert!(out.contains(r##"<sup class="footnote-reference"><a href="#notes-pool" rel="noopener noreferrer nofollow">1</a></sup>"##), "{out}");
        assert!(out.contains(r#"<div class="footnote-definition" id="notes-pool"><sup class="footnote-definition-label">1</sup>"#), "{out}");

        // Ids written by hand are prefixed too, and so are links to them.
        let out = render("<span id=\"top\" class=\"evil\">t</span> [up](#top) [page](#)");
        assert!(out.contains(r#"<span id="notes-top">t</span>"#), "{out}");
        assert!(out.contains(r##"href="#notes-top""##), "{out}");
        assert!(out.contains(r##"href="#""##), "{out}");
    }

    #[test]
    fn deterministic() {
        let md = "# Incident\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n[x](https://e.example/) [^n]\n\n[^n]: note\n\n<div onclick=x id=d title=t lang=en>y</div>";
        let first = render(md);
        for _ in 0..5 {
            assert_eq!(render(md), first);
        }
        // The same configuration built again (fresh hash sets, fresh seeds) gives the same bytes.
        assert_eq!(sanitiser().clean(&to_html(md)).to_string(), first);
    }

    #[test]
    fn empty_and_deeply_nested_input() {
        assert_eq!(render(""), "");
        let out = render(&">".repeat(5_000));
        assert!(out.contains("<blockquote>"));
        // A script at the bottom of 5,000 nested elements: too deep for the sanitiser, the
        // notes are shown as their text, escaped, the text beside it kept.
        let out = render(&format!("{}<script>alert('deep')</script>kept", "<div>".repeat(5_000)));
        assert!(!out.contains("<script") && !out.contains("<div"), "{}", &out[out.len().saturating_sub(200)..]);
        assert!(out.contains("&lt;script&gt;alert('deep')&lt;/script&gt;kept"), "{}", &out[out.len().saturating_sub(200)..]);
        // At 500 levels it is sanitised as usual: the script goes with its content.
        let out = render(&format!("{}<script>alert('deep')</script>kept", "<div>".repeat(500)));
        assert!(!out.contains("<script") && !out.contains("alert(") && out.contains("kept"), "{}", &out[out.len().saturating_sub(200)..]);
    }
}
