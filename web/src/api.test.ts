import { describe, expect, it } from "vitest";
import type { Thread } from "@langchain/langgraph-sdk";
import { describeError, errorCode, errorText, httpStatus, isCancellation, isUnreachable, LIST_QUERY, threadTitle, titleFollowsQuestion } from "./api";
import { DICTS } from "./i18n";

// The shape of the SDK's HTTPError: message "HTTP <status>: <body>", with status and text.
const httpError = (status: number, text: string) => Object.assign(new Error(`HTTP ${status}: ${text}`), { status, text });

describe("errorText", () => {
  it("shows the server's message, not its JSON body", () => {
    const err = httpError(404, JSON.stringify({ detail: "thread t not found", error: "not_found", message: "thread t not found" }));
    expect(httpStatus(err)).toBe(404);
    expect(errorText(err)).toBe("thread t not found (HTTP 404)");
  });

  it("keeps anything else as it was", () => {
    expect(errorText(httpError(502, "Bad Gateway"))).toBe("HTTP 502: Bad Gateway");
    expect(errorText(new TypeError("Failed to fetch"))).toBe("Failed to fetch");
    expect(httpStatus(new TypeError("Failed to fetch"))).toBeNull();
  });
});

describe("isUnreachable", () => {
  it("is a request that never reached the server, not an answer from it", () => {
    const sdk = new Error("Unable to connect to LangGraph server. Please ensure the server is running and accessible. Original error: Failed to fetch");
    expect(isUnreachable(sdk)).toBe(true);
    expect(isUnreachable(new TypeError("Failed to fetch"))).toBe(true);
    expect(isUnreachable(httpError(503, "Failed to fetch upstream"))).toBe(false);
    expect(isUnreachable(new Error("thread t not found"))).toBe(false);
  });
});

describe("isCancellation", () => {
  it("is the error a stopped run leaves on its step, as the SDK reads it back", () => {
    expect(isCancellation("'CancelledError()'")).toBe(true);
    expect(isCancellation("CancelledError()")).toBe(true);
    expect(isCancellation(new Error("RuntimeError('the test made this run fail')"))).toBe(false);
    expect(isCancellation("ValueError('CancelledError() in a message')")).toBe(false);
  });
});

describe("errorCode", () => {
  it("is the server's error code, when the error is the server's", () => {
    expect(errorCode(httpError(413, JSON.stringify({ error: "too_large", message: "request body is larger than 10 bytes" })))).toBe("too_large");
    expect(errorCode(httpError(502, "Bad Gateway"))).toBeNull();
    expect(errorCode(new Error("too_large"))).toBeNull();
  });
});

describe("describeError", () => {
  const zh = (key: "unreachable" | "databaseUnavailable" | "serverError") => DICTS.zh[key];
  it("says in the page's language what the page knows: the server unreachable, its database down", () => {
    expect(describeError(new TypeError("Failed to fetch"), zh)).toBe(DICTS.zh.unreachable);
    const outage = httpError(503, JSON.stringify({ error: "database_unavailable", message: "database unavailable: connection refused" }));
    expect(describeError(outage, zh)).toBe(DICTS.zh.databaseUnavailable);
    const timeout = httpError(503, JSON.stringify({ error: "database_timeout", message: "statement timeout" }));
    expect(describeError(timeout, zh)).toBe(DICTS.zh.databaseUnavailable);
  });

  it("introduces a server failure in the page's language and keeps the server's words", () => {
    const crash = httpError(500, JSON.stringify({ error: "internal", message: "boom" }));
    expect(describeError(crash, zh)).toBe("服务器出错: boom (HTTP 500)");
    expect(describeError(httpError(502, "Bad Gateway"), zh)).toBe("服务器出错: HTTP 502: Bad Gateway");
    const missing = httpError(404, JSON.stringify({ error: "not_found", message: "thread t not found" }));
    expect(describeError(missing, zh)).toBe("thread t not found (HTTP 404)");
  });
});

describe("thread titles", () => {
  const thread = (title: unknown, first: string) =>
    ({ thread_id: "t", metadata: title === undefined ? {} : { title }, values: { messages: [{ type: "human", content: first }] } }) as unknown as Thread;

  it("is the metadata title, else the head's first question as a new conversation is titled", () => {
    expect(threadTitle(thread("My ore notes", "铁矿石现在多少钱？"))).toBe("My ore notes");
    expect(threadTitle(thread(undefined, "铁矿石\n现在多少钱？"))).toBe("铁矿石 现在多少钱？");
  });

  it("follows the first question until the user renames it", () => {
    expect(titleFollowsQuestion(thread("铁矿石现在多少钱？", "铁矿石现在多少钱？"))).toBe(true);
    expect(titleFollowsQuestion(thread(undefined, "铁矿石现在多少钱？"))).toBe(true);
    expect(titleFollowsQuestion(thread("My ore notes", "铁矿石现在多少钱？"))).toBe(false);
  });

  it("reads the first question from what the list's look extracted, the values not being asked for", () => {
    const listed = (extracted: Record<string, unknown>) => ({ thread_id: "t", metadata: {}, extracted }) as unknown as Thread;
    expect(threadTitle(listed({ first_type: "human", first_content: [{ type: "text", text: "铁矿石\n走势" }] }))).toBe("铁矿石 走势");
    expect(threadTitle(listed({ first_type: "ai", first_content: "not a question" }))).toBe("");
    expect(titleFollowsQuestion({ ...listed({ first_type: "human", first_content: "q" }), metadata: { title: "q" } } as Thread)).toBe(true);
    expect(LIST_QUERY.select).not.toContain("values");
  });
});
