/**
 * The console against a kernel that requires a token, in headless Chromium: it asks for a token on
 * 401, says when a token is wrong (401) or lacks a scope (403), works with the right one (events
 * stream and approval grants included), keeps it for the tab only, never takes one from the
 * address, and does the same for a kernel on another origin (`?kernel=URL`).
 */
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { Client } from "@rebuno/client";
import { type DevKernel, startDevKernel } from "@rebuno/dev-kernel";
import { Agent, type ServeHandle, Toolbox, tool } from "@rebuno/sdk";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { buildConsole } from "../scripts/build.mjs";
import { consoleAssetsDir } from "../src/index.js";

const CHROMIUM = process.env.REBUNO_CHROMIUM ?? "/usr/bin/chromium";
const IMAGES = fileURLToPath(new URL("../../../docs/images/", import.meta.url));
const WAIT = { timeout: 25_000 };
const SECRET = randomBytes(16).toString("hex");
const ROOT = `root-${randomBytes(12).toString("hex")}`;
const AGENTS_ONLY = `agents-${randomBytes(12).toString("hex")}`;
const READER = `reader-${randomBytes(12).toString("hex")}`;

const POLICY = `default_action: allow
rules:
  - id: refunds-need-a-person
    when: { target: refund }
    then:
      decision: require_approval
      approval_config: { message: "refund requested" }
`;

class Till extends Toolbox {
  @tool("refund", {
    input: { type: "object", properties: { cents: { type: "number" } }, required: ["cents"] },
    idempotency: "at_most_once",
  })
  async refund(args: { cents: number }) {
    return { refunded: args.cents };
  }
}

let kernel: DevKernel;
let url: string;
let agentServer: ServeHandle;
let root: Client;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let otherOrigin: Server;
let otherUrl: string;
/** Every console message and request URL of the page, to prove a token never lands in them. */
let seen: string[] = [];

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium not found at ${CHROMIUM} (apt-get install chromium)`);
  await buildConsole({ fromSource: true });
  kernel = await startDevKernel({
    devMode: false,
    bootstrapToken: ROOT,
    apiKeys: [
      { name: "agents-only", token: AGENTS_ONLY, scopes: ["agents:read"] },
      { name: "reader", token: READER, scopes: ["executions:read", "approvals:read"] },
    ],
    cors: "*",
    staticAssets: consoleAssetsDir(),
    dispatch: { pollMs: 20 },
    onError: () => {},
  });
  url = await kernel.listen({ host: "127.0.0.1", port: 0 });
  const till = new Till();
  const agent = new Agent<{ cents: number }, unknown>("till", async (input) => till.refund(input), {
    secret: SECRET,
    baseUrl: url,
    logger: { warn: () => {}, error: () => {} },
  });
  agentServer = await agent.serve({ host: "127.0.0.1", port: 0 });
  kernel.registerAgent({ id: "till", webhookUrl: agentServer.url, secret: SECRET, policy: POLICY });
  root = new Client({ baseUrl: url, apiKey: ROOT });
  // The console's files from another origin, as a static server would serve them.
  const assets = consoleAssetsDir();
  otherOrigin = createServer((req, res) => {
    const name =
      (req.url ?? "/").split("?")[0] === "/" ? "index.html" : (req.url ?? "").slice(1).split("?")[0]!;
    const type = name.endsWith(".js") ? "text/javascript" : name.endsWith(".css") ? "text/css" : "text/html";
    if (!["index.html", "console.js", "console.css"].includes(name)) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": type }).end(readFileSync(`${assets}${name}`));
  });
  await new Promise<void>((resolve) => otherOrigin.listen(0, "127.0.0.1", resolve));
  otherUrl = `http://127.0.0.1:${(otherOrigin.address() as AddressInfo).port}`;
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--no-first-run",
      "--disable-background-networking",
    ],
  });
}, 60_000);

async function newTab(): Promise<Page> {
  const tab = await context.newPage();
  tab.on("console", (m) => seen.push(m.text()));
  tab.on("request", (r) => seen.push(r.url()));
  return tab;
}

async function freshTab(): Promise<void> {
  await context?.close();
  context = await browser.newContext({ viewport: { width: 1100, height: 700 } });
  seen = [];
  page = await newTab();
}

afterEach(async () => {
  await context?.close();
  context = undefined as never;
});

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => otherOrigin?.close(resolve));
  await agentServer?.close();
  await root?.close();
  await kernel?.close();
});

// Strings, evaluated in the page (no DOM types in the test's own compilation).
const tabStorage = (): Promise<string> => page.evaluate("JSON.stringify({ ...sessionStorage })");

async function signIn(token: string): Promise<void> {
  await page.waitForSelector("#sign-in", WAIT);
  await page.fill("#token", token);
  await page.click("#sign-in button");
}

describe("console sign-in (headless Chromium, kernel with --auth required)", () => {
  it("asks for a token on 401; a wrong token is refused (401) and not kept", async () => {
    await freshTab();
    await page.goto(`${url}/`);
    await page.waitForSelector("#sign-in", WAIT);
    expect(await page.textContent("main")).toContain("This kernel requires a token");
    await signIn("not-a-token");
    await page.waitForSelector("#sign-in-error", WAIT);
    expect(await page.textContent("#sign-in-error")).toContain("did not accept this token (401");
    await page.screenshot({ path: `${IMAGES}console-sign-in.png` });
    expect(await tabStorage()).toBe("{}");
    expect(await page.$("#executions")).toBeNull();
  });

  it("a genuine token without the scope is told which scope it lacks (403)", async () => {
    await freshTab();
    await page.goto(`${url}/`);
    await signIn(AGENTS_ONLY);
    // Signed in (agents:read only): the executions list says what is missing instead of showing nothing.
    await page.waitForSelector("main .alert", WAIT);
    const alert = await page.textContent("main .alert");
    expect(alert).toContain("403");
    expect(alert).toContain("executions:read");
    await page.goto(`${url}/#/agents`);
    await page.waitForSelector('#agents tr[data-agent="till"]', WAIT);
    // Sign-out forgets it: the kernel asks again.
    await page.click("#sign-out");
    await page.waitForSelector("#sign-in", WAIT);
    expect(await tabStorage()).toBe("{}");
  });

  it("the right token: live timeline, a grant refused for a read-only key (403), granted with the bootstrap token", async () => {
    const e = await root.create("till", { cents: 2599 });
    await freshTab();
    await page.goto(`${url}/#/exec/${e.id}`);
    await signIn(READER);
    const grant = "#approvals [data-approval] button.grant";
    await page.waitForSelector(grant, WAIT);
    await page.click(grant);
    await page.waitForSelector("#approvals [data-approval] .alert", WAIT);
    const refused = await page.textContent("#approvals [data-approval] .alert");
    expect(refused).toContain("403");
    expect(refused).toContain("approvals:write");
    expect((await root.get(e.id)).status).toBe("blocked");

    await page.click("#sign-out");
    await signIn(ROOT);
    await page.waitForSelector(grant, WAIT);
    await page.click(grant);
    await page.waitForSelector('h2 [data-status="completed"]', WAIT);
    await page.click("#raw-events summary"); // the raw event log is folded under the waterfall
    await page.waitForSelector('#events tr[data-event="approval.granted"]', WAIT);
    expect((await root.get(e.id)).status).toBe("completed");
    // Kept for this tab: a reload stays signed in; another tab is asked again.
    expect(await tabStorage()).toContain(ROOT);
    await page.reload();
    await page.waitForSelector('h2 [data-status="completed"]', WAIT);
    const other = await newTab();
    await other.goto(`${url}/`);
    await other.waitForSelector("#sign-in", WAIT);
    expect(seen.some((s) => s.includes(ROOT))).toBe(false);
  });

  it("a token in the address is not used, kept, shown or logged, and is removed from the address", async () => {
    await freshTab();
    const withCredentials = new URL(url);
    withCredentials.username = "admin";
    withCredentials.password = ROOT;
    for (const address of [
      `${url}/?token=${ROOT}`,
      `${url}/?api_key=${ROOT}#/agents`,
      `${url}/?kernel=${encodeURIComponent(withCredentials.href)}`,
    ]) {
      await page.goto(address);
      await page.waitForSelector("#url-token", WAIT);
      await page.waitForSelector("#sign-in", WAIT);
      expect(page.url(), address).not.toContain(ROOT);
      expect(await page.content(), address).not.toContain(ROOT);
      expect(await page.evaluate("location.href")).not.toContain(ROOT);
      expect(await tabStorage(), address).toBe("{}");
    }
    expect(await page.textContent("header .kernel")).toBe(url);
    // The page itself sent the token nowhere and logged it nowhere; only the address typed held it.
    const afterLoad = seen.filter((s) => !s.startsWith(`${url}/?`));
    expect(afterLoad.some((s) => s.includes(ROOT))).toBe(false);
  });

  it("?kernel=URL on another origin: asks, accepts the token, follows executions", async () => {
    const e = await root.create("till", { cents: 100 });
    await freshTab();
    await page.goto(`${otherUrl}/?kernel=${encodeURIComponent(url)}`);
    await signIn("wrong");
    await page.waitForSelector("#sign-in-error", WAIT);
    expect(await page.textContent("#sign-in-error")).toContain("401");
    await page.fill("#token", ROOT);
    await page.click("#sign-in button");
    await page.waitForSelector(`#executions tr[data-execution="${e.id}"]`, WAIT);
    expect(await page.textContent("header .kernel")).toBe(url);
    // Stored under the kernel's origin, not the page's.
    expect(JSON.parse(await tabStorage())).toEqual({ [`rebuno-console-token:${new URL(url).origin}`]: ROOT });
  });
});
