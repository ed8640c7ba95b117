// @vitest-environment jsdom
import { describe, expect, it } from "vitest";
import { renderMarkdown } from "./markdown";

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
