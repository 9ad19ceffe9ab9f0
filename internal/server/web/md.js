// A small Markdown renderer for the web view. It builds DOM nodes and
// sets every piece of text as text: nothing a model, a repository or a
// tool wrote is ever parsed as HTML, so <img onerror=…> shows as the
// characters it is. Links keep only absolute http, https and mailto
// addresses; images are not loaded (a model's answer must not make the
// browser fetch anything), they show as links.
"use strict";

const md = (() => {
  // Only absolute addresses: a relative one would point into this
  // server (its API, with the user's cookie).
  const safeHref = (url) => {
    if (!/^(https?:\/\/|mailto:)/i.test(url)) return null;
    try {
      const u = new URL(url);
      return ["http:", "https:", "mailto:"].includes(u.protocol) ? u.href : null;
    } catch (_) { return null; }
  };

  function el(tag, cls, ...kids) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    for (const k of kids) e.append(k instanceof Node ? k : document.createTextNode(String(k)));
    return e;
  }

  // Inline spans, earliest match first; ties go to the pattern listed
  // first (code before emphasis, so `**` in code stays as typed).
  const spans = [
    { re: /`([^`\n]+)`/, make: (m) => el("code", "", m[1]) },
    { re: /!\[([^\]\n]*)\]\(([^)\s]+)(?:\s+"[^"\n]*")?\)/, make: (m) => link(m[2], "image: " + (m[1] || m[2])) },
    { re: /\[([^\]\n]+)\]\(([^)\s]+)(?:\s+"[^"\n]*")?\)/, make: (m) => link(m[2], m[1], true) },
    { re: /<(https?:\/\/[^\s>]+)>/, make: (m) => link(m[1], m[1]) },
    { re: /\bhttps?:\/\/[^\s<>()\]]*[^\s<>()\].,;:!?'"]/, make: (m) => link(m[0], m[0]) },
    { re: /\*\*(?=\S)([^\n]*?\S)\*\*|__(?=\S)([^\n]*?\S)__/, make: (m) => el("strong", "", ...inline(m[1] || m[2])) },
    { re: /~~(?=\S)([^\n]*?\S)~~/, make: (m) => el("del", "", ...inline(m[1])) },
    { re: /\*(?=[^\s*])([^*\n]*?[^\s*])\*|(?<![\w])_(?=[^\s_])([^_\n]*?[^\s_])_(?![\w])/, make: (m) => el("em", "", ...inline(m[1] || m[2])) },
  ];

  function link(url, label, rich) {
    const href = safeHref(url);
    const kids = rich ? inline(label) : [label];
    if (!href) return el("span", "md-badlink", ...kids); // javascript:, data: … : text only
    const a = el("a", "", ...kids);
    a.href = href;
    a.target = "_blank";
    a.rel = "noopener noreferrer nofollow";
    return a;
  }

  function inline(text) {
    const out = [];
    let rest = text;
    while (rest) {
      let best = null;
      for (const s of spans) {
        const m = s.re.exec(rest);
        if (m && (!best || m.index < best.m.index)) best = { m, s };
      }
      if (!best) { out.push(rest); break; }
      if (best.m.index) out.push(rest.slice(0, best.m.index));
      out.push(best.s.make(best.m));
      rest = rest.slice(best.m.index + best.m[0].length);
    }
    return out;
  }

  // Lines with soft breaks kept: a chat answer's line breaks mean
  // something.
  function para(lines) {
    const p = el("p");
    lines.forEach((l, i) => {
      if (i) p.append(el("br"));
      p.append(...inline(l.trim()));
    });
    return p;
  }

  const fence = /^\s{0,3}(```+|~~~+)\s*([\w+-]*)\s*$/;
  const heading = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
  const rule = /^\s{0,3}([-*_])(\s*\1){2,}\s*$/;
  const item = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
  const quote = /^\s{0,3}>\s?(.*)$/;
  const tableSep = /^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/;
  const cells = (l) => l.trim().replace(/^\||\|$/g, "").split("|").map((c) => c.trim());

  function blocks(lines) {
    const out = [];
    let i = 0;
    const starts = (l, next) => fence.test(l) || heading.test(l) || rule.test(l) || item.test(l) || quote.test(l) ||
      (l.includes("|") && next !== undefined && tableSep.test(next));
    while (i < lines.length) {
      const l = lines[i];
      let m;
      if (!l.trim()) { i++; continue; }
      if ((m = fence.exec(l))) {
        const body = [];
        i++;
        while (i < lines.length && !lines[i].trim().startsWith(m[1])) body.push(lines[i++]);
        i++;
        const code = el("code", "", body.join("\n"));
        if (m[2]) code.dataset.lang = m[2];
        out.push(el("pre", "md-code", code));
        continue;
      }
      if ((m = heading.exec(l))) { out.push(el("h" + m[1].length, "", ...inline(m[2]))); i++; continue; }
      if (rule.test(l)) { out.push(el("hr")); i++; continue; }
      if (quote.test(l)) {
        const body = [];
        while (i < lines.length && (m = quote.exec(lines[i]))) { body.push(m[1]); i++; }
        out.push(el("blockquote", "", ...blocks(body)));
        continue;
      }
      if (l.includes("|") && i + 1 < lines.length && tableSep.test(lines[i + 1])) {
        const head = cells(l);
        i += 2;
        const table = el("table", "md-table", el("thead", "", el("tr", "", ...head.map((c) => el("th", "", ...inline(c))))));
        const body = el("tbody");
        while (i < lines.length && lines[i].includes("|") && lines[i].trim()) {
          body.append(el("tr", "", ...cells(lines[i]).map((c) => el("td", "", ...inline(c)))));
          i++;
        }
        table.append(body);
        out.push(table);
        continue;
      }
      if ((m = item.exec(l))) {
        const indent = m[1].length;
        const ordered = /\d/.test(m[2]);
        const list = el(ordered ? "ol" : "ul");
        if (ordered && parseInt(m[2], 10) !== 1) list.start = parseInt(m[2], 10);
        while (i < lines.length) {
          const mi = item.exec(lines[i]);
          if (!mi || mi[1].length !== indent || /\d/.test(mi[2]) !== ordered) break;
          const body = [mi[3]];
          i++;
          // The item's own lines: indented deeper, or a lazy
          // continuation; a blank line followed by an indented one.
          while (i < lines.length) {
            const n = lines[i];
            const deeper = n.match(/^(\s*)/)[1].length > indent;
            if (n.trim() && (deeper || (!item.test(n) && !starts(n, lines[i + 1])))) { body.push(deeper ? n.slice(indent + 2) : n); i++; continue; }
            if (!n.trim() && i + 1 < lines.length && lines[i + 1].trim() && lines[i + 1].match(/^(\s*)/)[1].length > indent) { body.push(""); i++; continue; }
            break;
          }
          const kids = blocks(body);
          const li = el("li");
          // A tight item is its text, not a paragraph.
          if (kids.length && kids[0].tagName === "P") li.append(...kids.shift().childNodes);
          li.append(...kids);
          list.append(li);
        }
        out.push(list);
        continue;
      }
      const body = [];
      while (i < lines.length && lines[i].trim() && !(body.length && starts(lines[i], lines[i + 1]))) body.push(lines[i++]);
      out.push(para(body));
    }
    return out;
  }

  // render returns a div.md holding text rendered as Markdown.
  return function render(text) {
    return el("div", "md", ...blocks(String(text || "").replace(/\r\n?/g, "\n").split("\n")));
  };
})();
