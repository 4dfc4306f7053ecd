// The `cors` option: off by default, preflights answered for allowed origins, answers carry
// Access-Control-Allow-Origin, other origins untouched. Over a real socket and in process.
import { ConfigurationError } from "@rebuno/protocol";
import { afterEach, describe, expect, test } from "vitest";
import { type DevKernel, startDevKernel } from "../src/index.js";

const PAGE = "http://localhost:5173";

describe("cors option", () => {
  let kernel: DevKernel | undefined;
  afterEach(async () => {
    await kernel?.close();
    kernel = undefined;
  });

  const preflight = (base: string, origin: string) =>
    fetch(`${base}/v0/executions`, {
      method: "OPTIONS",
      headers: {
        origin,
        "access-control-request-method": "POST",
        "access-control-request-headers": "authorization, content-type",
      },
    });

  test("off by default: no CORS headers, OPTIONS is not a route", async () => {
    kernel = await startDevKernel({ onError: () => {} });
    const base = await kernel.listen();
    const pre = await preflight(base, PAGE);
    expect(pre.status).toBe(405);
    expect(pre.headers.get("access-control-allow-origin")).toBeNull();
    expect(((await pre.json()) as { code: unknown }).code).toBeTypeOf("string");
    const get = await fetch(`${base}/v0/health`, { headers: { origin: PAGE } });
    expect(get.headers.get("access-control-allow-origin")).toBeNull();
  });

  test("listed origin: preflight 204 with methods and headers, answers carry the origin", async () => {
    kernel = await startDevKernel({ cors: [PAGE], onError: () => {} });
    const base = await kernel.listen();
    const pre = await preflight(base, PAGE);
    expect(pre.status).toBe(204);
    expect(pre.headers.get("access-control-allow-origin")).toBe(PAGE);
    expect(pre.headers.get("access-control-allow-methods")).toContain("POST");
    expect(pre.headers.get("access-control-allow-headers")).toBe("Authorization, Content-Type");
    expect(pre.headers.get("vary")).toBe("Origin");

    const created = await fetch(`${base}/v0/executions`, {
      method: "POST",
      headers: { origin: PAGE, "content-type": "application/json" },
      body: JSON.stringify({ agent_id: "nobody", input: {} }),
    });
    expect(created.headers.get("access-control-allow-origin")).toBe(PAGE);
    // Error answers carry it too, so the page can read the envelope.
    const missing = await fetch(`${base}/v0/executions/not-a-uuid`, { headers: { origin: PAGE } });
    expect(missing.status).toBe(400);
    expect(missing.headers.get("access-control-allow-origin")).toBe(PAGE);
    expect(((await missing.json()) as { code: unknown }).code).toBe("validation_error");
  });

  test("unlisted origin: no CORS headers, preflight falls through to the router", async () => {
    kernel = await startDevKernel({ cors: [PAGE], onError: () => {} });
    const base = await kernel.listen();
    const pre = await preflight(base, "http://evil.test");
    expect(pre.status).toBe(405);
    expect(pre.headers.get("access-control-allow-origin")).toBeNull();
    const get = await fetch(`${base}/v0/health`, { headers: { origin: "http://evil.test" } });
    expect(get.headers.get("access-control-allow-origin")).toBeNull();
  });

  test('"*" allows any origin, in process (fetch) as over a socket', async () => {
    kernel = await startDevKernel({ cors: "*", onError: () => {} });
    const pre = await kernel.fetch(
      new Request("http://kernel.test/v0/agents", {
        method: "OPTIONS",
        headers: { origin: "http://any.test", "access-control-request-method": "GET" },
      }),
    );
    expect(pre.status).toBe(204);
    expect(pre.headers.get("access-control-allow-origin")).toBe("*");
    expect(pre.headers.get("vary")).toBeNull();
    const get = await kernel.fetch(
      new Request("http://kernel.test/v0/health", { headers: { origin: "http://any.test" } }),
    );
    expect(get.headers.get("access-control-allow-origin")).toBe("*");
  });

  test("a malformed origin is refused at start with a ConfigurationError", async () => {
    await expect(startDevKernel({ cors: ["http://localhost:5173/"] })).rejects.toThrow(ConfigurationError);
    await expect(startDevKernel({ cors: [] })).rejects.toThrow(ConfigurationError);
  });
});
