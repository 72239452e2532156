//! Atom feeds (RFC 4287) of new runs, so that a feed reader can follow an archive.
//!
//! [`atom`] writes the document directly: the format is small and fixed, and every piece of
//! text in it (run titles made of function and file names, notes, URLs) is untrusted, so all
//! of it goes through one escaping function. That function escapes `& < > " '` and drops the
//! characters XML 1.0 does not allow in a document at all (the C0 controls other than tab,
//! line feed and carriage return, and U+FFFE, U+FFFF), since a feed with one of them is not
//! XML and a reader would reject the whole feed. Carriage returns, and tabs and line feeds in
//! attributes, are written as character references, which a parser would otherwise normalise
//! away.
//!
//! The output is UTF-8 and a function of the [`Feed`] alone: the same feed gives the same
//! bytes. Elements come in a fixed order, and entries in the order given.

use std::fmt::Write as _;

/// The Atom namespace, the `xmlns` of the root element.
pub const ATOM_NS: &str = "http://www.w3.org/2005/Atom";

/// A feed: its metadata and its entries, newest first by convention.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Feed {
    /// The feed's title, plain text (`<title>`).
    pub title: String,
    /// A permanent, unique IRI naming the feed (`<id>`), e.g. the absolute URL of the feed.
    pub id: String,
    /// When the feed last changed, RFC 3339 (`<updated>`), e.g. `2026-11-20T14:03:00Z`;
    /// written as given.
    pub updated: String,
    /// The feed's own absolute URL (`<link rel="self">`).
    pub self_href: String,
    /// The URL of the HTML page the feed follows (`<link rel="alternate" type="text/html">`).
    pub alternate_href: String,
    /// The feed's author's name (`<author><name>`), which Atom requires of a feed whose
    /// entries have none.
    pub author: String,
    /// The entries, written in this order.
    pub entries: Vec<Entry>,
}

/// One entry of a feed: typically one new run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Entry {
    /// A permanent, unique IRI naming the entry (`<id>`); it must not change when the
    /// entry's other fields do.
    pub id: String,
    /// The entry's title, plain text (`<title>`).
    pub title: String,
    /// When the entry last changed, RFC 3339 (`<updated>`); written as given.
    pub updated: String,
    /// The URL of the run's page (`<link rel="alternate" type="text/html">`).
    pub href: String,
    /// A plain-text summary (`<summary>`), always written, even when empty.
    pub summary: String,
    /// The content as HTML that is already sanitised, e.g. by [`crate::ingest::notes::render`];
    /// written escaped, as `<content type="html">`, and left out when `None`.
    pub content_html: Option<String>,
    /// Category terms (`<category term="…"/>`), in this order.
    pub categories: Vec<String>,
}

/// Writes `feed` as an Atom document, with its XML declaration.
pub fn atom(feed: &Feed) -> String {
    let mut x = Xml(String::with_capacity(1024 + feed.entries.len() * 512));
    x.raw("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n");
    x.raw("<feed xmlns=\"");
    x.attr(ATOM_NS);
    x.raw("\">\n");
    x.element("  ", "title", "", &feed.title);
    x.element("  ", "id", "", &feed.id);
    x.element("  ", "updated", "", &feed.updated);
    x.link("  ", "self", "application/atom+xml", &feed.self_href);
    x.link("  ", "alternate", "text/html", &feed.alternate_href);
    x.raw("  <author>\n");
    x.element("    ", "name", "", &feed.author);
    x.raw("  </author>\n");
    for entry in &feed.entries {
        x.raw("  <entry>\n");
        x.element("    ", "id", "", &entry.id);
        x.element("    ", "title", "", &entry.title);
        x.element("    ", "updated", "", &entry.updated);
        x.link("    ", "alternate", "text/html", &entry.href);
        x.element("    ", "summary", "", &entry.summary);
        if let Some(html) = &entry.content_html {
            // Relative links in the notes (footnotes, `../runbook`) are relative to the run's
            // page, not to the feed: xml:base says so to feed readers.
            x.raw("    <content type=\"html\" xml:base=\"");
            x.attr(&entry.href);
            x.raw("\">");
            x.text(html);
            x.raw("</content>\n");
        }
        for term in &entry.categories {
            x.raw("    <category term=\"");
            x.attr(term);
            x.raw("\"/>\n");
        }
        x.raw("  </entry>\n");
    }
    x.raw("</feed>\n");
    x.0
}

/// The document being written.
struct Xml(String);

impl Xml {
    /// Appends markup as it is: only ever literals of this module.
    fn raw(&mut self, markup: &str) {
        self.0.push_str(markup);
    }

    /// Appends `text` escaped as character data.
    fn text(&mut self, text: &str) {
        escape(&mut self.0, text, false);
    }

    /// Appends `value` escaped as the value of a double-quoted attribute.
    fn attr(&mut self, value: &str) {
        escape(&mut self.0, value, true);
    }

    /// `<name attrs>text</name>` on a line of its own; `attrs` is a literal.
    fn element(&mut self, indent: &str, name: &str, attrs: &str, text: &str) {
        let _ = write!(self.0, "{indent}<{name}{attrs}>");
        self.text(text);
        let _ = writeln!(self.0, "</{name}>");
    }

    /// `<link rel="…" type="…" href="…"/>` on a line of its own.
    fn link(&mut self, indent: &str, rel: &str, media_type: &str, href: &str) {
        let _ = write!(
            self.0,
            "{indent}<link rel=\"{rel}\" type=\"{media_type}\" href=\""
        );
        self.attr(href);
        self.raw("\"/>\n");
    }
}

/// Whether XML 1.0 allows `c` in a document (its production `Char`). Surrogates are not
/// `char`s, so only the C0 controls and the two non-characters at the end of the BMP remain.
fn allowed(c: char) -> bool {
    match c {
        '\t' | '\n' | '\r' => true,
        '\u{0}'..='\u{1F}' | '\u{FFFE}' | '\u{FFFF}' => false,
        _ => true,
    }
}

/// Appends `s` to `out`, escaped for character data or, with `in_attr`, for an attribute
/// value, without the characters XML forbids.
fn escape(out: &mut String, s: &str, in_attr: bool) {
    let mut rest = s;
    while let Some(i) = rest.find(|c: char| {
        matches!(c, '&' | '<' | '>' | '"' | '\'' | '\r')
            || (in_attr && matches!(c, '\t' | '\n'))
            || !allowed(c)
    }) {
        out.push_str(&rest[..i]);
        let c = rest[i..]
            .chars()
            .next()
            .expect("find returned a char boundary");
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // A parser turns a literal CR (or CR LF) into LF, and a tab or LF in an
            // attribute into a space: references keep them.
            '\r' => out.push_str("&#13;"),
            '\t' => out.push_str("&#9;"),
            '\n' => out.push_str("&#10;"),
            _ => {} // Not allowed in XML: dropped.
        }
        rest = &rest[i + c.len_utf8()..];
    }
    out.push_str(rest);
}

#[cfg(test)]
mod tests {
    use super::*;
    use roxmltree::{Document, Node};

    fn entry(n: usize) -> Entry {
        Entry {
            id: format!("https://perf.example.com/api/run-{n}/"),
            title: format!("api run {n}"),
            updated: format!("2026-11-2{n}T10:00:00Z"),
            href: format!("https://perf.example.com/api/run-{n}/index.html"),
            summary: format!("{n} samples, 12 threads"),
            content_html: None,
            categories: vec!["api".into(), format!("host-{n}")],
        }
    }

    fn feed(entries: Vec<Entry>) -> Feed {
        Feed {
            title: "perf archive".into(),
            id: "https://perf.example.com/feed.xml".into(),
            updated: "2026-11-22T10:00:00Z".into(),
            self_href: "https://perf.example.com/feed.xml".into(),
            alternate_href: "https://perf.example.com/".into(),
            author: "flamesite".into(),
            entries,
        }
    }

    /// The only child element of `node` named `name` in the Atom namespace.
    fn child<'a, 'i>(node: Node<'a, 'i>, name: &str) -> Node<'a, 'i> {
        let mut found = node.children().filter(|c| c.has_tag_name((ATOM_NS, name)));
        let first = found.next().unwrap_or_else(|| panic!("no <{name}>"));
        assert!(found.next().is_none(), "more than one <{name}>");
        first
    }

    fn text<'a>(node: Node<'a, '_>, name: &str) -> &'a str {
        child(node, name).text().unwrap_or("")
    }

    /// The `href` of the `<link>` child of `node` with that `rel`, checking its `type`.
    fn link<'a>(node: Node<'a, '_>, rel: &str, media_type: &str) -> &'a str {
        let links: Vec<_> = node
            .children()
            .filter(|c| c.has_tag_name((ATOM_NS, "link")) && c.attribute("rel") == Some(rel))
            .collect();
        assert_eq!(links.len(), 1, "one <link rel={rel}>");
        assert_eq!(links[0].attribute("type"), Some(media_type));
        links[0].attribute("href").expect("href")
    }

    #[test]
    fn feed_metadata_and_entries_parse_back() {
        let mut entries = vec![entry(1), entry(2)];
        entries[1].content_html = Some("<p>Pool <b>exhausted</b> &amp; retried</p>".into());
        let f = feed(entries);
        let xml = atom(&f);
        assert!(xml.starts_with("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<feed xmlns=\"http://www.w3.org/2005/Atom\">"), "{xml}");

        let doc = Document::parse(&xml).expect("well-formed XML");
        let root = doc.root_element();
        assert!(root.has_tag_name((ATOM_NS, "feed")));
        assert_eq!(text(root, "title"), "perf archive");
        assert_eq!(text(root, "id"), f.id);
        assert_eq!(text(root, "updated"), f.updated);
        assert_eq!(link(root, "self", "application/atom+xml"), f.self_href);
        assert_eq!(link(root, "alternate", "text/html"), f.alternate_href);
        assert_eq!(text(child(root, "author"), "name"), "flamesite");

        let got: Vec<_> = root
            .children()
            .filter(|c| c.has_tag_name((ATOM_NS, "entry")))
            .collect();
        assert_eq!(got.len(), 2);
        for (node, want) in got.iter().zip(&f.entries) {
            assert_eq!(text(*node, "id"), want.id);
            assert_eq!(text(*node, "title"), want.title);
            assert_eq!(text(*node, "updated"), want.updated);
            assert_eq!(link(*node, "alternate", "text/html"), want.href);
            assert_eq!(text(*node, "summary"), want.summary);
            let terms: Vec<_> = node
                .children()
                .filter(|c| c.has_tag_name((ATOM_NS, "category")))
                .map(|c| c.attribute("term").unwrap())
                .collect();
            assert_eq!(terms, want.categories);
        }
        assert!(!got[0]
            .children()
            .any(|c| c.has_tag_name((ATOM_NS, "content"))));

        // The HTML is text to the XML parser, marked as HTML for the reader.
        let content = child(got[1], "content");
        assert_eq!(content.attribute("type"), Some("html"));
        assert_eq!(content.text(), f.entries[1].content_html.as_deref());
        assert!(content.children().all(|c| c.is_text()));
    }

    #[test]
    fn hostile_text_round_trips_without_forbidden_chars() {
        let hostile = "</title><script>alert(1)</script> & \"q\" \u{1}";
        let expected = "</title><script>alert(1)</script> & \"q\" ";
        let mut e = entry(1);
        e.title = hostile.into();
        e.summary = format!(
            "{hostile} 'single' ]]> <![CDATA[x]]> \u{0}\u{8}\u{B}\u{C}\u{1F}\u{FFFE}\u{FFFF}end"
        );
        e.href = "https://perf.example.com/?a=1&b=\"2\"<x>'\u{7}".into();
        e.categories = vec![hostile.into(), "tab\tline\nfeed\r\ncr".into()];
        e.content_html = Some(format!("<p>{hostile}</p>\r\n"));
        let mut f = feed(vec![e]);
        f.title = hostile.into();
        f.author = format!("{hostile}\u{1B}[31m");
        let xml = atom(&f);
        assert!(!xml.contains("<script>"), "{xml}");
        assert!(!xml.chars().any(|c| !allowed(c)), "{xml:?}");

        let doc = Document::parse(&xml).expect("well-formed XML");
        let root = doc.root_element();
        assert_eq!(text(root, "title"), expected);
        assert_eq!(
            text(child(root, "author"), "name"),
            format!("{expected}[31m")
        );
        let e = child(root, "entry");
        assert_eq!(text(e, "title"), expected);
        assert_eq!(
            text(e, "summary"),
            format!("{expected} 'single' ]]> <![CDATA[x]]> end")
        );
        assert_eq!(
            link(e, "alternate", "text/html"),
            "https://perf.example.com/?a=1&b=\"2\"<x>'"
        );
        let terms: Vec<_> = e
            .children()
            .filter(|c| c.has_tag_name((ATOM_NS, "category")))
            .map(|c| c.attribute("term").unwrap())
            .collect();
        // Whitespace in attributes survives normalisation as character references.
        assert_eq!(terms, [expected, "tab\tline\nfeed\r\ncr"]);
        let content = child(e, "content");
        assert_eq!(content.attribute("type"), Some("html"));
        assert_eq!(
            content.text(),
            Some(format!("<p>{expected}</p>\r\n").as_str())
        );
        // Exactly one of each element: the hostile text opened and closed nothing.
        assert_eq!(e.children().filter(|c| c.is_element()).count(), 8);
    }

    #[test]
    fn empty_feed_is_valid() {
        let f = feed(Vec::new());
        let xml = atom(&f);
        let doc = Document::parse(&xml).expect("well-formed XML");
        let root = doc.root_element();
        assert!(root.has_tag_name((ATOM_NS, "feed")));
        assert_eq!(text(root, "title"), "perf archive");
        assert_eq!(text(root, "id"), f.id);
        assert_eq!(text(root, "updated"), f.updated);
        assert!(!root.children().any(|c| c.has_tag_name((ATOM_NS, "entry"))));

        // Every field empty still parses.
        let xml = atom(&Feed::default());
        let doc = Document::parse(&xml).expect("well-formed XML");
        assert_eq!(text(doc.root_element(), "title"), "");
    }

    #[test]
    fn unicode_passes_through_and_output_is_deterministic() {
        let mut e = entry(3);
        e.title = "Größe::berechnen → 関数 🔥 \u{85}\u{FFFD}\u{10FFFF}".into();
        let f = feed(vec![e.clone(), entry(4)]);
        let xml = atom(&f);
        assert_eq!(atom(&f.clone()), xml);
        let doc = Document::parse(&xml).expect("well-formed XML");
        let got = doc
            .root_element()
            .children()
            .find(|c| c.has_tag_name((ATOM_NS, "entry")))
            .expect("an entry");
        assert_eq!(text(got, "title"), e.title);
    }

    #[test]
    fn escape_rules() {
        let esc = |s: &str, attr: bool| {
            let mut out = String::new();
            escape(&mut out, s, attr);
            out
        };
        assert_eq!(
            esc("a&b<c>d\"e'f", false),
            "a&amp;b&lt;c&gt;d&quot;e&apos;f"
        );
        assert_eq!(esc("\u{0}x\u{1}\u{1F}y\u{FFFE}\u{FFFF}", false), "xy");
        assert_eq!(esc("t\tl\nc\r", false), "t\tl\nc&#13;");
        assert_eq!(esc("t\tl\nc\r", true), "t&#9;l&#10;c&#13;");
        assert_eq!(esc("plain ünïcødé", true), "plain ünïcødé");
    }
}
