// A chunk's Markdown shown as readable text: headings, paragraphs, lists, tables, quotes, code,
// bold, italic, inline code and links. Built with createElement and text nodes only (never
// innerHTML), so a chunk's text can never become markup on this page: HTML in a chunk shows as
// text, and links are shown as their words with the address in a tooltip, not followed.
"use strict";

const Markdown = (() => {
  const FENCE = /^\s{0,3}(`{3,}|~{3,})/;
  const HEADING = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
  const ITEM = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
  const QUOTE = /^\s{0,3}>\s?(.*)$/;
  // `:::tip Titel` ... `:::` (Docusaurus admonitions; outer ones may use more colons).
  const ADMONITION = /^\s{0,3}(:{3,})\s*([A-Za-z][\w-]*)?\s*(.*?)\s*$/;
  const KINDS = new Set(["note", "tip", "info", "warning", "caution", "danger", "important"]);
  const TABLE_RULE = /^\s*\|?\s*:?-{1,}:?\s*(\|\s*:?-{1,}:?\s*)*\|?\s*$/;
  const INLINE = /(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)|\*\*([^*]+)\*\*|__([^_]+)__|\*([^*\s][^*]*)\*|(?<![\w])_([^_\s][^_]*)_(?![\w])|(!?)\[([^\]]*)\]\(([^)\s]*)[^)]*\)/g;

  function node(tag, className, ...children) {
    const element = document.createElement(tag);
    if (className) element.className = className;
    for (const child of children) element.append(child);
    return element;
  }

  // Inline Markdown as text nodes and elements.
  function inline(text) {
    const parts = [];
    let last = 0;
    for (const match of text.matchAll(INLINE)) {
      if (match.index > last) parts.push(text.slice(last, match.index));
      if (match[1]) parts.push(node("code", "", match[2]));
      else if (match[3] || match[4]) parts.push(node("strong", "", ...inline(match[3] || match[4])));
      else if (match[5] || match[6]) parts.push(node("em", "", ...inline(match[5] || match[6])));
      else if (match[7] === "!") parts.push(node("span", "md-image", `[${match[8] || "image"}]`));
      else {
        const link = node("span", "md-link", ...inline(match[8]));
        link.title = match[9];
        parts.push(link);
      }
      last = match.index + match[0].length;
    }
    if (last < text.length) parts.push(text.slice(last));
    return parts;
  }

  function cells(line) {
    let row = line.trim();
    if (row.startsWith("|")) row = row.slice(1);
    if (row.endsWith("|") && !row.endsWith("\\|")) row = row.slice(0, -1);
    return row.split(/(?<!\\)\|/).map((cell) => cell.trim().replace(/\\\|/g, "|"));
  }

  function table(lines) {
    const head = node("thead", "", node("tr", "", ...cells(lines[0]).map((c) => node("th", "", ...inline(c)))));
    const body = node("tbody", "", ...lines.slice(2).map((line) =>
      node("tr", "", ...cells(line).map((c) => node("td", "", ...inline(c))))));
    return node("div", "md-table", node("table", "", head, body));
  }

  // Consecutive list items (and their indented continuation lines) as one list; deeper items
  // go into a list inside the item before them.
  function list(lines) {
    const root = { indent: -1, element: null, items: [] };
    const stack = [];
    for (const line of lines) {
      const match = ITEM.exec(line);
      if (!match) {
        const open = stack[stack.length - 1];
        if (open && open.lastItem) open.lastItem.append(" ", ...inline(line.trim()));
        continue;
      }
      const indent = match[1].length;
      while (stack.length && stack[stack.length - 1].indent > indent) stack.pop();
      let open = stack[stack.length - 1];
      if (!open || open.indent < indent) {
        const ordered = /\d/.test(match[2]);
        const element = node(ordered ? "ol" : "ul", "");
        if (ordered && parseInt(match[2], 10) !== 1) element.start = parseInt(match[2], 10);
        if (open && open.lastItem) open.lastItem.append(element);
        else root.items.push(element);
        open = { indent, element, lastItem: null };
        stack.push(open);
      }
      const item = node("li", "", ...inline(match[3].replace(/^\[( |x|X)\]\s+/, (box, mark) =>
        (mark === " " ? "\u2610 " : "\u2611 "))));
      open.element.append(item);
      open.lastItem = item;
    }
    return root.items;
  }

  // Markdown text -> an array of block elements.
  function render(text) {
    const lines = String(text || "").replace(/\r\n?/g, "\n").split("\n");
    const blocks = [];
    let paragraph = [];
    const flush = () => {
      if (paragraph.length) blocks.push(node("p", "", ...inline(paragraph.join(" "))));
      paragraph = [];
    };
    for (let i = 0; i < lines.length; i += 1) {
      const line = lines[i];
      const fence = FENCE.exec(line);
      if (fence) {
        flush();
        const code = [];
        let j = i + 1;
        while (j < lines.length && !lines[j].trim().startsWith(fence[1])) code.push(lines[(j += 1) - 1]);
        blocks.push(node("pre", "md-code", node("code", "", code.join("\n"))));
        i = j;
        continue;
      }
      const admonition = ADMONITION.exec(line);
      if (admonition && admonition[2]) {
        flush();
        const colons = admonition[1].length;
        const inner = [];
        let j = i + 1;
        let depth = 0;
        for (; j < lines.length; j += 1) {
          const mark = ADMONITION.exec(lines[j]);
          if (mark && mark[2]) depth += 1;
          else if (mark && !mark[2] && mark[1].length >= colons && depth === 0) break;
          else if (mark && !mark[2]) depth -= 1;
          inner.push(lines[j]);
        }
        const kind = admonition[2].toLowerCase();
        const box = node("aside", `md-admonition md-${KINDS.has(kind) ? kind : "note"}`);
        const label = I18n.t(`admonition.${KINDS.has(kind) ? kind : "note"}`);
        box.append(node("p", "md-admonition-title", admonition[3] ? `${label}: ${admonition[3]}` : label));
        box.append(...render(inner.join("\n")));
        blocks.push(box);
        i = j;
        continue;
      }
      const heading = HEADING.exec(line);
      if (heading) {
        flush();
        const level = Math.min(heading[1].length + 3, 6);
        blocks.push(node(`h${level}`, `md-heading md-h${heading[1].length}`, ...inline(heading[2])));
        continue;
      }
      if (line.includes("|") && i + 1 < lines.length && TABLE_RULE.test(lines[i + 1]) && lines[i + 1].includes("-")) {
        flush();
        const rows = [line, lines[i + 1]];
        let j = i + 2;
        while (j < lines.length && lines[j].includes("|") && lines[j].trim()) rows.push(lines[(j += 1) - 1]);
        blocks.push(table(rows));
        i = j - 1;
        continue;
      }
      if (ITEM.test(line)) {
        flush();
        const items = [line];
        let j = i + 1;
        while (j < lines.length && (ITEM.test(lines[j]) || (/^\s{2,}\S/.test(lines[j])))) items.push(lines[(j += 1) - 1]);
        blocks.push(...list(items));
        i = j - 1;
        continue;
      }
      if (QUOTE.test(line)) {
        flush();
        const quoted = [];
        let j = i;
        while (j < lines.length && QUOTE.test(lines[j])) quoted.push(QUOTE.exec(lines[(j += 1) - 1])[1]);
        blocks.push(node("blockquote", "", ...render(quoted.join("\n"))));
        i = j - 1;
        continue;
      }
      if (!line.trim()) {
        flush();
        continue;
      }
      paragraph.push(line.trim());
    }
    flush();
    return blocks;
  }

  return { render };
})();
