import {
  ConfigurationError,
  InternalError,
  KernelError,
  NetworkError,
  TimeoutError,
  ValidationError,
} from "@rebuno/protocol";
import { describe, expect, it } from "vitest";
import {
  DEFAULT_RETRY,
  escapePathSegment,
  isRetryableFailure,
  isUnsentFailure,
  parseBaseUrl,
  queryString,
  resolveRetryOptions,
  retryCall,
  retryDelayMs,
} from "../src/index.js";

const refused = () =>
  new NetworkError("fetch failed", {
    cause: new TypeError("fetch failed", {
      cause: Object.assign(new Error("connect"), { code: "ECONNREFUSED" }),
    }),
  });
const reset = () =>
  new NetworkError("socket hang up", { cause: Object.assign(new Error("x"), { code: "ECONNRESET" }) });
const http = (status: number) => new KernelError(`HTTP ${status}`, { status, code: "x" });

describe("retry rules", () => {
  it.each([
    ["idempotent", reset(), true],
    ["idempotent", new TimeoutError(), true],
    ["idempotent", http(502), true],
    ["idempotent", http(503), true],
    ["idempotent", http(504), true],
    ["idempotent", new InternalError(), false],
    ["idempotent", http(400), false],
    ["idempotent", http(409), false],
    ["idempotent", http(429), false],
    ["idempotent", new Error("plain"), false],
    ["unsent-only", refused(), true],
    ["unsent-only", reset(), false],
    ["unsent-only", new TimeoutError(), false],
    ["unsent-only", http(503), false],
    ["never", refused(), false],
  ] as const)("%s: %s → %s", (mode, err, expected) => {
    expect(isRetryableFailure(err, mode)).toBe(expected);
  });

  it("recognizes never-sent failures through causes and AggregateErrors only", () => {
    expect(isUnsentFailure(refused())).toBe(true);
    const happyEyeballs = new AggregateError(
      [
        Object.assign(new Error("a"), { code: "ECONNREFUSED" }),
        Object.assign(new Error("b"), { code: "ENETUNREACH" }),
      ],
      "connect",
    );
    expect(isUnsentFailure(new NetworkError("x", { cause: happyEyeballs }))).toBe(true);
    expect(isUnsentFailure(new NetworkError("no cause"))).toBe(false);
    expect(
      isUnsentFailure(
        new NetworkError("x", { cause: Object.assign(new Error("s"), { code: "UND_ERR_SOCKET" }) }),
      ),
    ).toBe(false);
  });

  it("backs off exponentially with equal jitter, capped", () => {
    const o = { attempts: 5, baseMs: 100, maxMs: 1000 };
    expect(retryDelayMs(1, o, () => 0)).toBe(50);
    expect(retryDelayMs(1, o, () => 0.999)).toBeCloseTo(99.95);
    expect(retryDelayMs(3, o, () => 0)).toBe(200);
    expect(retryDelayMs(10, o, () => 1)).toBe(1000);
    expect(resolveRetryOptions()).toEqual(DEFAULT_RETRY);
    expect(resolveRetryOptions({ attempts: 2 }, { baseMs: 1 })).toEqual({
      ...DEFAULT_RETRY,
      attempts: 2,
      baseMs: 1,
    });
    expect(() => resolveRetryOptions({ attempts: 0 })).toThrow(RangeError);
  });

  it("retryCall re-runs with the attempt number and rethrows the last error", async () => {
    const seen: number[] = [];
    const err = await retryCall(
      async (attempt) => {
        seen.push(attempt);
        throw http(503);
      },
      { mode: "idempotent", retry: { attempts: 3, baseMs: 1, maxMs: 2 } },
    ).catch((e: unknown) => e);
    expect(seen).toEqual([1, 2, 3]);
    expect(err).toMatchObject({ status: 503 });
  });

  it("retryCall stops at the time budget and honours Retry-After", async () => {
    let calls = 0;
    const delays: number[] = [];
    // A clock that moves exactly by each backoff: the budget arithmetic, not the machine's timer
    // lateness, decides the count. Retries start at 0, 30, 60, 90 ms; one more would end at 120 > 100.
    let clock = 0;
    await expect(
      retryCall(
        async () => {
          calls++;
          throw http(503);
        },
        {
          mode: "idempotent",
          retry: { attempts: 10, baseMs: 1, maxMs: 40 },
          budgetMs: 100,
          retryAfterMs: () => 30,
          now: () => clock,
          onRetry: (e) => {
            delays.push(e.delayMs);
            clock += e.delayMs;
          },
        },
      ),
    ).rejects.toMatchObject({ status: 503 });
    expect(delays).toEqual([30, 30, 30]);
    expect(calls).toBe(4);
  });

  it("an abort during the backoff ends retryCall with the abort reason", async () => {
    const controller = new AbortController();
    const reason = new Error("lease lost");
    setTimeout(() => controller.abort(reason), 20);
    const started = Date.now();
    await expect(
      retryCall(
        async () => {
          throw http(503);
        },
        {
          mode: "idempotent",
          retry: { attempts: 5, baseMs: 5_000, maxMs: 5_000 },
          signal: controller.signal,
        },
      ),
    ).rejects.toBe(reason);
    // The backoff is at least 2.5 s (5 s with equal jitter): ending sooner proves the abort cut it.
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});

describe("URLs", () => {
  it("parses base URLs and keeps the escaped prefix", () => {
    expect(parseBaseUrl("http://127.0.0.1:8080")).toEqual({
      href: "http://127.0.0.1:8080",
      origin: "http://127.0.0.1:8080",
      protocol: "http:",
      pathPrefix: "",
    });
    expect(parseBaseUrl("https://gw.example.com/a b/rebuno//").pathPrefix).toBe("/a%20b/rebuno");
    expect(() => parseBaseUrl("gw.example.com")).toThrow(ConfigurationError);
    expect(() => parseBaseUrl("http://h/#x")).toThrow(ConfigurationError);
  });

  it("escapes one segment strictly", () => {
    expect(escapePathSegment("alpha/beta")).toBe("alpha%2Fbeta");
    expect(escapePathSegment("a b")).toBe("a%20b");
    expect(escapePathSegment("it's (x)!*")).toBe("it%27s%20%28x%29%21%2A");
    expect(escapePathSegment("héllo🙂")).toBe("h%C3%A9llo%F0%9F%99%82");
    expect(escapePathSegment("key.with-dots_1~")).toBe("key.with-dots_1~");
    expect(() => escapePathSegment("..")).toThrow(ValidationError);
    expect(() => escapePathSegment("\uD800")).toThrow(ValidationError);
  });

  it("builds queries and skips undefined values", () => {
    expect(queryString({ status: "terminal", after: undefined, limit: 10 })).toBe(
      "?status=terminal&limit=10",
    );
    expect(queryString({ a: undefined })).toBe("");
    expect(queryString({ "k y": "a&b=c" })).toBe("?k%20y=a%26b%3Dc");
  });
});
