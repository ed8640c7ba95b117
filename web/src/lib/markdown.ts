/**
 * Model text → safe HTML. marked renders Markdown (GFM tables); raw HTML in the text is shown
 * as text, never parsed, and DOMPurify then strips anything executable that is left (event
 * handlers, javascript: links, forms, images that could call out). Links open in a new tab.
 */
import DOMPurify from "dompurify";
import { Marked } from "marked";

const escapeHtml = (s: string): string =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

const marked = new Marked({
  gfm: true,
  breaks: true,
  renderer: {
    html: (token) => escapeHtml(token.text),
  },
});

/**
 * GFM keeps appending lines to a table until a blank line, so a sentence written right under a
 * table (as models often do) would become a row: end the table before a line without a pipe.
 */
export function closeTables(text: string): string {
  const out: string[] = [];
  for (const line of text.split("\n")) {
    const prev = out[out.length - 1];
    if (prev !== undefined && prev.trim().startsWith("|") && line.trim() && !line.includes("|")) out.push("");
    out.push(line);
  }
  return out.join("\n");
}

const LIST_ITEM = /^\s*(?:[-*+]|\d+[.)])\s/;

/**
 * Markdown also keeps a line that follows a list item in that item (a "lazy continuation"), so a
 * note or source line written right under a list, as the analyst does, read as part of its last
 * bullet: end the list before a line that is neither indented nor a new item.
 */
export function closeLists(text: string): string {
  const out: string[] = [];
  let inList = false;
  let inFence = false;
  for (const line of text.split("\n")) {
    if (line.trimStart().startsWith("```")) inFence = !inFence;
    if (inFence) {
      out.push(line);
      continue;
    }
    if (!line.trim()) inList = false;
    else if (LIST_ITEM.test(line)) inList = true;
    else if (inList && !/^\s/.test(line)) {
      out.push("");
      inList = false;
    }
    out.push(line);
  }
  return out.join("\n");
}

let hooked = false;

export function renderMarkdown(text: string): string {
  if (!hooked) {
    DOMPurify.addHook("afterSanitizeAttributes", (node) => {
      if (node.tagName === "A") {
        node.setAttribute("target", "_blank");
        node.setAttribute("rel", "noopener noreferrer");
      }
    });
    hooked = true;
  }
  const html = marked.parse(closeLists(closeTables(text)), { async: false });
  return DOMPurify.sanitize(html, {
    FORBID_TAGS: ["img", "style", "form", "input", "button", "iframe", "object", "embed", "svg", "math"],
    FORBID_ATTR: ["style"],
  });
}
