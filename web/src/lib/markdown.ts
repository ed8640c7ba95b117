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
  const html = marked.parse(text, { async: false });
  return DOMPurify.sanitize(html, {
    FORBID_TAGS: ["img", "style", "form", "input", "button", "iframe", "object", "embed", "svg", "math"],
    FORBID_ATTR: ["style"],
  });
}
