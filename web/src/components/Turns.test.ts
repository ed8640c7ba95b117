// @vitest-environment jsdom
import { act, createElement } from "react";
import { createRoot, type Root } from "react-dom/client";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { I18nContext, type T } from "../i18n";
import { HumanTurn } from "./Turns";

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

const t: T = (key) => key;
const question = { id: "h1", type: "human", content: "铁矿石价格？" };
const branch = { branch: undefined, options: undefined };

let box: HTMLDivElement;
let root: Root;

function show(busy: boolean, onEdit: (text: string) => void) {
  act(() => {
    root.render(
      createElement(
        I18nContext.Provider,
        { value: { lang: "zh", t } },
        createElement(HumanTurn, { message: question, branch, busy, onEdit, onBranch: () => undefined }),
      ),
    );
  });
}

function press(key: string, init: KeyboardEventInit = {}) {
  const input = box.querySelector<HTMLTextAreaElement>('[data-testid="edit-input"]');
  expect(input).not.toBeNull();
  act(() => {
    input!.dispatchEvent(new KeyboardEvent("keydown", { key, bubbles: true, cancelable: true, ...init }));
  });
}

function editing(): boolean {
  return box.querySelector('[data-testid="edit-input"]') !== null;
}

beforeEach(() => {
  box = document.createElement("div");
  document.body.append(box);
  root = createRoot(box);
});

afterEach(() => {
  act(() => root.unmount());
  box.remove();
});

describe("editing a question", () => {
  it("sends with Enter when no answer streams", () => {
    const onEdit = vi.fn();
    show(false, onEdit);
    act(() => box.querySelector<HTMLButtonElement>('[data-testid="edit-button"]')!.click());
    press("Enter");
    expect(onEdit).toHaveBeenCalledWith("铁矿石价格？");
    expect(editing()).toBe(false);
  });

  it("does not send with Enter while an answer streams, as the composer does: the edit stays open", () => {
    const onEdit = vi.fn();
    show(false, onEdit);
    act(() => box.querySelector<HTMLButtonElement>('[data-testid="edit-button"]')!.click());
    show(true, onEdit); // a run started while the box was open
    press("Enter");
    expect(onEdit).not.toHaveBeenCalled();
    expect(editing()).toBe(true);
    expect(box.querySelector<HTMLButtonElement>('[data-testid="edit-submit"]')!.disabled).toBe(true);

    show(false, onEdit); // the answer is done: Enter sends the edit kept in the box
    press("Enter");
    expect(onEdit).toHaveBeenCalledExactlyOnceWith("铁矿石价格？");
  });

  it("leaves Shift+Enter to the text", () => {
    const onEdit = vi.fn();
    show(false, onEdit);
    act(() => box.querySelector<HTMLButtonElement>('[data-testid="edit-button"]')!.click());
    press("Enter", { shiftKey: true });
    expect(onEdit).not.toHaveBeenCalled();
    expect(editing()).toBe(true);
  });
});
