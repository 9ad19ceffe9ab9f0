package builtin

import (
	"fmt"
	"io"
	"net/url"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// htmlToMarkdown renders an HTML page as Markdown for a model to read:
// headings, paragraphs, links (made absolute against base), lists, code,
// quotes and tables as text; scripts, styles, navigation chrome and forms
// left out. It is a reading aid, not a faithful converter.
func htmlToMarkdown(r io.Reader, base *url.URL) (title, md string, err error) {
	doc, err := html.Parse(r)
	if err != nil {
		return "", "", fmt.Errorf("parse the page's HTML: %w", err)
	}
	c := &mdWriter{base: base}
	c.node(doc)
	return strings.TrimSpace(c.title), tidy(c.b.String()), nil
}

type mdWriter struct {
	b     strings.Builder
	base  *url.URL
	title string
	pre   int // inside <pre>
	lists []listState
}

type listState struct {
	ordered bool
	n       int
}

// skipped elements hold nothing a reader of the page's text needs.
var skipped = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true, atom.Svg: true,
	atom.Nav: true, atom.Footer: true, atom.Form: true, atom.Button: true, atom.Iframe: true,
	atom.Select: true, atom.Input: true, atom.Textarea: true, atom.Head: true,
}

func (c *mdWriter) text(s string) {
	if c.pre > 0 {
		c.b.WriteString(s)
		return
	}
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return
	}
	// Keep a space between inline pieces, none at a line's start.
	if c.b.Len() > 0 {
		last := c.b.String()[c.b.Len()-1]
		if last != '\n' && last != ' ' && last != '(' && last != '[' && !strings.ContainsRune(".,;:!?)]", rune(s[0])) {
			c.b.WriteByte(' ')
		}
	}
	c.b.WriteString(s)
}

func (c *mdWriter) block(prefix string) {
	c.b.WriteString("\n\n" + prefix)
}

func (c *mdWriter) children(n *html.Node) {
	for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
		c.node(ch)
	}
}

func (c *mdWriter) node(n *html.Node) {
	switch n.Type {
	case html.TextNode:
		c.text(n.Data)
		return
	case html.DocumentNode:
		c.children(n)
		return
	case html.ElementNode:
	default:
		return
	}
	if n.DataAtom == atom.Title && c.title == "" {
		c.title = textOf(n)
		return
	}
	if n.DataAtom == atom.Head {
		for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
			if ch.DataAtom == atom.Title {
				c.title = textOf(ch)
			}
		}
		return
	}
	if skipped[n.DataAtom] || attr(n, "hidden") != "" || attr(n, "aria-hidden") == "true" {
		return
	}
	switch n.DataAtom {
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		c.block(strings.Repeat("#", int(n.Data[1]-'0')) + " ")
		c.text(textOf(n))
		c.b.WriteString("\n\n")
	case atom.P, atom.Div, atom.Section, atom.Article, atom.Main, atom.Header, atom.Aside, atom.Figure, atom.Dl:
		c.block("")
		c.children(n)
		c.b.WriteString("\n\n")
	case atom.Br:
		c.b.WriteString("\n")
	case atom.Hr:
		c.block("---\n\n")
	case atom.Pre:
		c.block("```\n")
		c.pre++
		c.b.WriteString(strings.Trim(textOf(n), "\n"))
		c.pre--
		c.b.WriteString("\n```\n\n")
	case atom.Code:
		if c.pre > 0 {
			c.children(n)
			return
		}
		c.text("`" + strings.TrimSpace(textOf(n)) + "`")
	case atom.Strong, atom.B:
		if t := strings.TrimSpace(textOf(n)); t != "" {
			c.text("**" + t + "**")
		}
	case atom.Em, atom.I:
		if t := strings.TrimSpace(textOf(n)); t != "" {
			c.text("*" + t + "*")
		}
	case atom.A:
		t := strings.Join(strings.Fields(textOf(n)), " ")
		href := c.resolve(attr(n, "href"))
		switch {
		case t == "":
		case href == "" || strings.HasPrefix(href, "javascript:"):
			c.text(t)
		default:
			c.text("[" + t + "](" + href + ")")
		}
	case atom.Img:
		if alt := strings.TrimSpace(attr(n, "alt")); alt != "" {
			c.text("![" + alt + "]")
		}
	case atom.Ul, atom.Ol:
		c.lists = append(c.lists, listState{ordered: n.DataAtom == atom.Ol})
		c.b.WriteString("\n")
		c.children(n)
		c.lists = c.lists[:len(c.lists)-1]
		c.b.WriteString("\n")
	case atom.Li:
		depth := len(c.lists)
		marker := "- "
		if depth > 0 {
			l := &c.lists[depth-1]
			l.n++
			if l.ordered {
				marker = fmt.Sprintf("%d. ", l.n)
			}
		} else {
			depth = 1
		}
		c.b.WriteString("\n" + strings.Repeat("  ", depth-1) + marker)
		c.children(n)
	case atom.Blockquote:
		inner := &mdWriter{base: c.base}
		inner.children(n)
		c.block("")
		for _, line := range strings.Split(tidy(inner.b.String()), "\n") {
			c.b.WriteString("> " + line + "\n")
		}
		c.b.WriteString("\n")
	case atom.Tr:
		c.b.WriteString("\n|")
		for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
			if ch.DataAtom == atom.Td || ch.DataAtom == atom.Th {
				c.b.WriteString(" " + strings.Join(strings.Fields(textOf(ch)), " ") + " |")
			}
		}
	case atom.Table:
		c.block("")
		c.children(n)
		c.b.WriteString("\n\n")
	case atom.Dt:
		c.b.WriteString("\n")
		c.text("**" + strings.TrimSpace(textOf(n)) + "**")
	case atom.Dd:
		c.b.WriteString("\n: ")
		c.children(n)
	default:
		c.children(n)
	}
}

func (c *mdWriter) resolve(href string) string {
	href = strings.TrimSpace(href)
	if href == "" || c.base == nil {
		return href
	}
	u, err := c.base.Parse(href)
	if err != nil {
		return href
	}
	return u.String()
}

// textOf is the text under n, skipped elements left out.
func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
			return
		}
		if n.Type == html.ElementNode && (skipped[n.DataAtom] && n.DataAtom != atom.Head) {
			return
		}
		if n.Type == html.ElementNode && n.DataAtom == atom.Br {
			b.WriteString("\n")
		}
		for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
			walk(ch)
		}
	}
	walk(n)
	return b.String()
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// tidy trims each line's end and collapses runs of blank lines.
func tidy(s string) string {
	lines := strings.Split(s, "\n")
	var out []string
	blank := 0
	for _, l := range lines {
		l = strings.TrimRight(l, " \t")
		if l == "" {
			blank++
			if blank > 1 {
				continue
			}
		} else {
			blank = 0
		}
		out = append(out, l)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}
