// The web console against the real Go kernel in server mode (`rebuno server --bearer-token`), in
// headless Chromium with `?kernel=URL`: it asks for the token on 401, says when it is wrong, and
// lists the kernel's executions once signed in. The Go kernel sends no CORS headers, so the page's
// calls go through a small proxy that adds them (what a deployment's reverse proxy would do).
import { existsSync, readFileSync } from "node:fs";
import http from "node:http";
import { Client } from "@rebuno/client";
import { chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { buildConsole } from "../../packages/console/scripts/build.mjs";
import { startGoServer, startPostgres } from "./lib/go-kernel.mjs";

const CHROMIUM = process.env.REBUNO_CHROMIUM ?? "/usr/bin/chromium";
const TOKEN = "console-real-kernel-token-5d1e";
const WAIT = { timeout: 30_000 };
const cleanups = [];
let go;
let pageUrl;
let corsUrl;
let browser;

async function listen(server) {
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(
    () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(resolve);
      }),
  );
  return `http://127.0.0.1:${server.address().port}`;
}

/** Forwards every request to `target` (streams included) and answers CORS for `origin`. */
function corsProxy(target, origin) {
  const cors = {
    "access-control-allow-origin": origin,
    "access-control-allow-headers": "Authorization, Content-Type",
    "access-control-allow-methods": "GET, POST, PUT, DELETE",
  };
  return http.createServer((req, res) => {
    if (req.method === "OPTIONS") {
      res.writeHead(204, cors).end();
      return;
    }
    const upstream = http.request(
      new URL(req.url, target),
      { method: req.method, headers: { ...req.headers, host: new URL(target).host } },
      (answer) => {
        res.writeHead(answer.statusCode, { ...answer.headers, ...cors });
        answer.pipe(res);
      },
    );
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium not found at ${CHROMIUM} (apt-get install chromium)`);
  const { outdir } = await buildConsole({ fromSource: true });
  const pg = await startPostgres();
  cleanups.push(pg.stop);
  go = await startGoServer({
    dbUrl: pg.url,
    token: TOKEN,
    // Nobody listens here: its executions stay pending, which is all the list needs.
    agents: [{ id: "console-idle", webhookUrl: "http://127.0.0.1:9/webhook", secret: "console-idle-secret" }],
  });
  cleanups.push(go.stop);
  const files = { "/": "index.html", "/console.js": "console.js", "/console.css": "console.css" };
  pageUrl = await listen(
    http.createServer((req, res) => {
      const name = files[(req.url ?? "/").split("?")[0]];
      if (name === undefined) return res.writeHead(404).end();
      const type = name.endsWith(".js")
        ? "text/javascript"
        : name.endsWith(".css")
          ? "text/css"
          : "text/html";
      res.writeHead(200, { "content-type": type }).end(readFileSync(`${outdir}/${name}`));
    }),
  );
  corsUrl = await listen(corsProxy(go.url, pageUrl));
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--headless", "--no-sandbox"] });
  cleanups.push(() => browser.close());
});

afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

describe("console against the real kernel (rebuno server, bearer token)", () => {
  test("asks for the token on 401, refuses a wrong one, lists executions with the right one", async () => {
    const client = new Client({ baseUrl: go.url, apiKey: TOKEN, protocol: "legacy" });
    const e = await client.create("console-idle", { n: 1 });
    await client.close();
    // The real kernel itself refuses anonymous reads.
    expect((await fetch(`${go.url}/v0/executions`)).status).toBe(401);

    const page = await browser.newPage();
    await page.goto(`${pageUrl}/?kernel=${encodeURIComponent(corsUrl)}`);
    await page.waitForSelector("#sign-in", WAIT);
    await page.fill("#token", "not-the-token");
    await page.click("#sign-in button");
    await page.waitForSelector("#sign-in-error", WAIT);
    expect(await page.textContent("#sign-in-error")).toContain("did not accept this token (401");

    await page.fill("#token", TOKEN);
    await page.click("#sign-in button");
    await page.waitForSelector(`#executions tr[data-execution="${e.id}"]`, WAIT);
    expect(await page.textContent(`#executions tr[data-execution="${e.id}"]`)).toContain("console-idle");
    await page.click(`#executions tr[data-execution="${e.id}"] a`);
    // The raw event log is folded under the waterfall; open it.
    await page.click("#raw-events summary", WAIT);
    await page.waitForSelector('#events tr[data-event="execution.created"]', WAIT);
    await page.close();
  });
});
