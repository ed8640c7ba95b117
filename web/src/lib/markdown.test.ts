// @vitest-environment jsdom
import { describe, expect, it } from "vitest";
import { closeLists, renderMarkdown } from "./markdown";

describe("model text to HTML", () => {
  it("renders Markdown and GFM tables", () => {
    const html = renderMarkdown("**bold**\n\n| a | b |\n|---|---|\n| 1 | 2 |");
    expect(html).toContain("<strong>bold</strong>");
    expect(html).toMatch(/<table>[\s\S]*<td>2<\/td>/);
  });

  it("never lets raw HTML or script URLs through", () => {
    const html = renderMarkdown('<img src=x onerror="alert(1)">\n\n<script>alert(2)</script>\n\n[x](javascript:alert(3)) <b onclick="x()">b</b>');
    const box = document.createElement("div");
    box.innerHTML = html;
    expect(box.querySelectorAll("img, script, b, [onerror], [onclick]").length).toBe(0);
    expect(box.querySelector('a[href^="javascript"]')).toBeNull();
    expect(box.textContent).toContain("<img src=x");
  });

  it("opens links in a new tab without an opener", () => {
    const html = renderMarkdown("[WB](https://www.worldbank.org)");
    expect(html).toContain('target="_blank"');
    expect(html).toContain('rel="noopener noreferrer"');
  });
});

describe("a line under a list", () => {
  it("is its own paragraph, not part of the last item", () => {
    const text = "**Price** latest: 707.00\n- vs previous: +1.00\n- vs a year: -68.50\nNote: the series ends on 2026-08-21.\nSource: DCE";
    const html = renderMarkdown(text);
    expect(html).toContain("<li>vs a year: -68.50</li>");
    expect(html).toMatch(/<\/ul>\s*<p>Note: the series ends on 2026-08-21.<br>Source: DCE<\/p>/);
  });

  it("leaves indented continuations, nested items and code alone", () => {
    expect(closeLists("- a\n  more of a\n  - nested\n- b")).toBe("- a\n  more of a\n  - nested\n- b");
    expect(closeLists("```\n- a\nb\n```")).toBe("```\n- a\nb\n```");
    expect(closeLists("1. one\nafter")).toBe("1. one\n\nafter");
  });
});
