/**
 * `@rebuno/client` in headless Chromium against a real dev kernel: the browser bundle (esbuild,
 * `platform: "browser"`, resolved through the packages' own export/import conditions) is loaded by
 * a page on another origin, so every call goes through the fetch engine, real CORS preflights and
 * the kernel's `cors` option.
 */
import { existsSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { CLIENT_VERSION } from "@rebuno/client";
import { type DevKernel, startDevKernel } from "@rebuno/dev-kernel";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bundleClient } from "../../runtimes/bundle.mjs";

const scenario = readFileSync(new URL("../../runtimes/browser-scenario.mjs", import.meta.url), "utf8");

interface ScenarioResult {
  readonly version: string;
  readonly createdStatus: string;
  readonly readId: boolean;
  readonly agentIds: string[];
  readonly seen: string[];
  readonly finalStatus: string;
  readonly listed: boolean;
  readonly notFound: { name: string; status: unknown } | undefined;
  readonly unauthorized: string | undefined;
  readonly hasProcess: boolean;
}

const CHROMIUM = process.env.REBUNO_CHROMIUM ?? "/usr/bin/chromium";
const TOKEN = "browser-test-token";

describe("@rebuno/client browser bundle", () => {
  let kernel: DevKernel;
  let kernelUrl: string;
  let page: Server;
  let pageUrl: string;
  let browser: Browser;
  let bundle: Awaited<ReturnType<typeof bundleClient>>;

  beforeAll(async () => {
    if (!existsSync(CHROMIUM))
      throw new Error(`Chromium not found at ${CHROMIUM} (apt-get install chromium)`);
    bundle = await bundleClient({ fromSource: true });
    kernel = await startDevKernel({
      cors: "*",
      bootstrapToken: TOKEN,
      devMode: false,
      // The webhook is never reached in time: executions stay pending until the page cancels them.
      agents: [{ id: "browser-agent", webhookUrl: "http://127.0.0.1:9/unreachable", secret: "s3cret" }],
      dispatch: { backoffBaseMs: 60_000, backoffMaxMs: 60_000 },
    });
    kernelUrl = await kernel.listen({ host: "127.0.0.1", port: 0 });
    // The page's own origin (another port): the kernel is cross-origin, as for a web console.
    page = createServer((req, res) => {
      if (req.url === "/client.js") {
        res.writeHead(200, { "content-type": "text/javascript" }).end(bundle.code);
      } else if (req.url === "/scenario.js") {
        res.writeHead(200, { "content-type": "text/javascript" }).end(scenario);
      } else {
        res.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><title>rebuno</title>");
      }
    });
    await new Promise<void>((resolve) => page.listen(0, "127.0.0.1", resolve));
    pageUrl = `http://127.0.0.1:${(page.address() as AddressInfo).port}`;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => page?.close(resolve));
    await kernel?.close();
  });

  it("has no node:* builtins, no undici and no zod, and stays under 30 kB gzipped", () => {
    expect(bundle.inputs.some((p) => p.includes("engine-web"))).toBe(true);
    expect(bundle.inputs.some((p) => p.includes("engine-node") || p.includes("undici"))).toBe(false);
    expect(bundle.gzipBytes).toBeLessThan(30 * 1024);
  });

  it("leaves the optional OpenTelemetry API out: the page loads no tracing and the create still works", () => {
    expect(bundle.inputs.some((p) => p.includes("@opentelemetry"))).toBe(false);
    // The client's tracing loads it at run time; in the page that import fails quietly (the
    // scenario's create and wait below run through it).
    expect(bundle.code).toContain("@opentelemetry/api");
  });

  it("creates, reads, follows, cancels and lists executions from a page on another origin", async () => {
    const tab = await browser.newPage();
    try {
      await tab.goto(pageUrl);
      // A string, so the test runner's transform leaves the page's own `import()` alone.
      const result = (await tab.evaluate(
        `import("/scenario.js").then((m) => m.run(${JSON.stringify(kernelUrl)}, ${JSON.stringify(TOKEN)}, "browser-agent"))`,
      )) as ScenarioResult;
      expect(result.hasProcess).toBe(false);
      expect(result.version).toBe(CLIENT_VERSION);
      expect(["pending", "running"]).toContain(result.createdStatus);
      expect(result.readId).toBe(true);
      expect(result.agentIds).toContain("browser-agent");
      expect(result.finalStatus).toBe("cancelled");
      expect(result.seen).toContain("execution.cancelled");
      expect(result.listed).toBe(true);
      expect(result.notFound).toEqual({ name: "NotFoundError", status: 404 });
      expect(result.unauthorized).toBe("UnauthorizedError");
    } finally {
      await tab.close();
    }
  });
});
