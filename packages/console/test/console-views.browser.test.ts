/**
 * The console's pictures in headless Chromium, against a real dev kernel and real agents: the
 * waterfall of the tour's crash-and-redeliver case (an agent process SIGKILLed mid-tool; the lease
 * expires and the kernel redelivers), the subagent tree and session, fork, the policy backtest and
 * edit with its diff, and the metrics page; keyboard use and a 420 px window. Screenshots go to
 * docs/images/console-*.png (shown in docs/console.md).
 */
import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { Client } from "@rebuno/client";
import { type DevKernel, startDevKernel } from "@rebuno/dev-kernel";
import { Agent, type ServeHandle, subagent, Toolbox, tool } from "@rebuno/sdk";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildConsole } from "../scripts/build.mjs";
import { consoleAssetsDir } from "../src/index.js";
import { FAST_LEASE, runCrashAndRedeliver } from "./crash-scenario.js";

const CHROMIUM = process.env.REBUNO_CHROMIUM ?? "/usr/bin/chromium";
const IMAGES = fileURLToPath(new URL("../../../docs/images/", import.meta.url));
const SECRET = randomBytes(16).toString("hex");
const WAIT = { timeout: 25_000 };
const ALLOW_ALL = "default_action: allow\nrules: []\n";
const REFUNDS_NEED_A_PERSON = `default_action: allow
rules:
  - id: refunds-need-a-person
    when: { target: refund }
    then: { decision: require_approval }
`;

const TOPIC = {
  type: "object",
  properties: { topic: { type: "string" }, session: { type: "string" } },
  required: ["topic", "session"],
} as const;
const ORDER = { type: "object", properties: { order: { type: "string" } }, required: ["order"] } as const;

class Desk extends Toolbox {
  @tool("research", { input: TOPIC })
  async research(args: { topic: string; session: string }) {
    return subagent("researcher", { topic: args.topic }, { session: args.session, client });
  }
  @tool("refund", { input: ORDER })
  async refund(args: { order: string }) {
    return { refunded: args.order };
  }
}

let kernel: DevKernel;
let url: string;
let client: Client;
let browser: Browser;
let page: Page;
let crashedId: string;
const servers: ServeHandle[] = [];
const children: ChildProcess[] = [];

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium not found at ${CHROMIUM} (apt-get install chromium)`);
  await buildConsole({ fromSource: true });
  kernel = await startDevKernel({
    staticAssets: consoleAssetsDir(),
    dispatch: FAST_LEASE,
    onError: () => {},
  });
  url = await kernel.listen({ host: "127.0.0.1", port: 0 });
  client = new Client({ baseUrl: url });
  const options = { secret: SECRET, baseUrl: url, logger: { warn: () => {}, error: () => {} } };
  const desk = new Desk();
  const editor = new Agent<{ title: string }, unknown>(
    "editor",
    async (input, ctx) => {
      const session = `researcher:${ctx.id}`;
      const first = await desk.research({ topic: `why ${input.title}`, session });
      const second = await desk.research({ topic: `how ${input.title}`, session });
      return { first, second };
    },
    options,
  );
  const researcher = new Agent<{ topic: string }, unknown>(
    "researcher",
    async (input) => ({ notes: [input.topic] }),
    options,
  );
  const support = new Agent<{ order: string }, unknown>(
    "support",
    async (input) => desk.refund(input),
    options,
  );
  for (const [id, agent, policy] of [
    ["editor", editor, undefined],
    ["researcher", researcher, undefined],
    ["support", support, ALLOW_ALL],
  ] as const) {
    const server = await agent.serve({ host: "127.0.0.1", port: 0 });
    servers.push(server);
    kernel.registerAgent({
      id,
      webhookUrl: server.url,
      secret: SECRET,
      ...(policy === undefined ? {} : { policy }),
    });
  }
  // A delivery the agent refuses (wrong secret), for the metrics page's failures by cause.
  kernel.registerAgent({ id: "misconfigured", webhookUrl: servers[0]!.url, secret: "not-the-agent-secret" });
  const crash = await runCrashAndRedeliver(kernel, url, client, SECRET);
  children.push(...crash.children);
  expect(crash.execution.status).toBe("completed");
  crashedId = crash.execution.id;
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-sync",
    ],
  });
  page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
}, 90_000);

afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
  await browser?.close();
  for (const s of servers) await s.close();
  await client?.close();
  await kernel?.close();
});

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: `${IMAGES}console-${name}.png`, fullPage: true });
}

const row = (target: string) => `#steps [data-target="${target}"]`;

describe("the console's pictures (headless Chromium, real kernel and agents)", () => {
  it("the crash-and-redeliver case: two attempts, the first ended by the lease; print_label twice; charge_card indeterminate; find_charge after", async () => {
    await page.goto(`${url}/#/exec/${crashedId}`);
    await page.waitForSelector('#attempts [data-attempt="2"][data-end="completed"]', WAIT);
    expect(await page.textContent('#attempts [data-attempt="1"]')).toContain("lease expired");
    expect(await page.getAttribute('#attempts [data-attempt="1"]', "data-end")).toBe("lease_expired");
    // print_label: a body cut short in attempt 1, run again in attempt 2.
    await page.waitForSelector(`${row("print_label")}[data-outcome="succeeded"]`, WAIT);
    expect(await page.locator(`${row("print_label")} [data-body="cut"][data-attempt="1"]`).count()).toBe(1);
    expect(await page.locator(`${row("print_label")} [data-body="again"][data-attempt="2"]`).count()).toBe(1);
    expect(await page.textContent(`${row("print_label")} .summary`)).toContain("body ran 2 times");
    // charge_card: at_most_once, left indeterminate; its body never ran again.
    expect(await page.getAttribute(row("charge_card"), "data-outcome")).toBe("indeterminate");
    expect(await page.locator(`${row("charge_card")} [data-body]`).count()).toBe(1);
    expect(await page.textContent(`${row("charge_card")} .summary`)).toContain("outcome unknown");
    // find_charge comes after it, run in attempt 2.
    const order = await page.$$eval("#steps [data-target]", (rows) =>
      rows.map((r) => r.getAttribute("data-target")),
    );
    expect(order).toEqual(["print_label", "charge_card", "find_charge"]);
    expect(await page.locator(`${row("find_charge")} [data-body="ran"][data-attempt="2"]`).count()).toBe(1);
    // All of it without opening the raw events, which stay folded.
    expect(await page.getAttribute("#raw-events", "open")).toBeNull();
    await shot("waterfall");

    // Keyboard: Tab reaches the rows; Enter opens the step's arguments and result.
    await page.focus(row("find_charge"));
    await page.keyboard.press("Enter");
    await page.waitForSelector(`${row("find_charge")} .detail`, { ...WAIT, state: "visible" });
    expect(await page.textContent(`${row("find_charge")} .detail`)).toContain('"order": "A-1001"');
    await page.keyboard.press("Enter");
    await page.waitForSelector(`${row("find_charge")} .detail`, { ...WAIT, state: "hidden" });
    await page.click(row("charge_card"));
    await page.waitForSelector(`${row("charge_card")} .detail`, { ...WAIT, state: "visible" });
    expect(await page.textContent(`${row("charge_card")} .detail pre.error`)).toContain("outcome unknown");

    // A narrow window: no sideways scrolling of the page.
    await page.setViewportSize({ width: 420, height: 860 });
    const pageWidth = () =>
      page.evaluate(
        () =>
          (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document
            .documentElement.scrollWidth,
      );
    await page.waitForSelector(`${row("print_label")} .timeline`, WAIT);
    expect(await pageWidth()).toBeLessThanOrEqual(420);
    await shot("waterfall-narrow");
    await page.setViewportSize({ width: 1280, height: 860 });
  });

  it("the subagent tree links parent and children; a child shows its session's turns", async () => {
    const e = await client.create("editor", { title: "durable agents" });
    const done = await client.waitForTerminal(e.id);
    expect(done.status, done.failureReason).toBe("completed");
    await page.goto(`${url}/#/exec/${e.id}`);
    await page.waitForSelector("#subagents [data-child]:nth-child(2)", WAIT);
    const kids = await page.$$eval("#subagents [data-child]", (els) =>
      els.map((el) => el.getAttribute("data-child")!),
    );
    expect(kids).toHaveLength(2);
    for (const kid of kids) {
      expect(await page.textContent(`#subagents [data-child="${kid}"]`)).toContain("completed");
      expect(await page.textContent(`#subagents [data-child="${kid}"]`)).toContain("from step research");
    }
    await shot("subagents");
    await page.click(`#subagents [data-child="${kids[0]}"] a`);
    await page.waitForSelector(`#parent-link a[href="#/exec/${e.id}"]`, WAIT);
    await page.waitForSelector("#session-turns li:nth-child(2)", WAIT);
    expect(await page.textContent("#session-turns")).toContain("this execution");
  });

  it("fork: shows what will replay and what will run live, then forks with another policy and session", async () => {
    await page.goto(`${url}/#/exec/${crashedId}`);
    await page.waitForSelector("#fork-seq", WAIT);
    const events = await client.events(crashedId);
    const chargeSettled = events.find(
      (ev) => ev.type === "step.failed" && ev.payload.target === "charge_card",
    )!;
    await page.selectOption("#fork-seq", String(chargeSettled.eventSeq));
    await page.waitForSelector('#fork-plan [data-target="charge_card"][data-plan="replay"]', WAIT);
    expect(await page.getAttribute('#fork-plan [data-target="find_charge"]', "data-plan")).toBe("live");
    await page.fill("#fork-session", "fork-check");
    await page.fill("#fork-policy", ALLOW_ALL);
    await page.locator("#fork").scrollIntoViewIfNeeded();
    await shot("fork");
    await page.click("#fork-submit");
    await page.waitForSelector(`#forked-from a[href="#/exec/${crashedId}"]`, WAIT);
    const forkId = decodeURIComponent(new URL(page.url()).hash.slice("#/exec/".length));
    const forked = await client.get(forkId);
    expect(forked.forkedFrom).toBe(crashedId);
    expect(forked.forkSeq).toBe(chargeSettled.eventSeq);
    expect(forked.session).toBe("fork-check");
  });

  it("policy: the backtest lists each recorded step whose decision would change; the diff is shown before saving", async () => {
    const e = await client.create("support", { order: "o-1" });
    expect((await client.waitForTerminal(e.id)).status).toBe("completed");
    await page.goto(`${url}/#/agents`);
    await page.click('#agents tr[data-agent="support"] a.policy-link');
    await page.waitForSelector("#policy-editor", WAIT);
    expect(await page.inputValue("#policy-editor")).toBe(ALLOW_ALL);
    await page.fill("#policy-editor", REFUNDS_NEED_A_PERSON);
    await page.click("#policy-test");
    await page.waitForSelector(`#backtest tr[data-changed="refund"] a[href="#/exec/${e.id}"]`, WAIT);
    expect(await page.textContent('#backtest tr[data-changed="refund"]')).toContain("require_approval");
    await shot("backtest");
    await page.click("#policy-review");
    await page.waitForSelector('#policy-diff [data-op="add"]', WAIT);
    const added = await page.$$eval('#policy-diff [data-op="add"]', (els) => els.map((el) => el.textContent));
    expect(added).toContain("+   - id: refunds-need-a-person");
    expect(
      await page.$$eval('#policy-diff [data-op="remove"]', (els) => els.map((el) => el.textContent)),
    ).toEqual(["- rules: []"]);
    await shot("policy-diff");
    // Nothing is stored before Save.
    expect((await client.getAgent("support")).policyBundle).toBe(ALLOW_ALL);
    await page.click("#policy-save");
    await page.waitForSelector("#policy-saved", WAIT);
    expect((await client.getAgent("support")).policyBundle).toBe(REFUNDS_NEED_A_PERSON);
  });

  it("metrics: executions by status, steps by decision, delivery failures by cause, step durations by tool; refreshed live", async () => {
    const refused = await client.create("misconfigured", {});
    for await (const ev of client.followEvents(refused.id, { pollMs: 20 }))
      if (ev.type === "dispatch.failed") break;
    // On the execution itself, the refused delivery sits on the attempts' axis with its cause.
    await page.goto(`${url}/#/exec/${refused.id}`);
    await page.waitForSelector('#attempts [data-delivery-failure="1"]', WAIT);
    expect(await page.textContent('#attempts [data-delivery-failure="1"]')).toContain("HTTP 401");
    await page.goto(`${url}/#/metrics`);
    await page.waitForSelector('#m-failures [data-key="http_401"]', WAIT);
    await page.waitForSelector('#m-executions [data-key="completed"]', WAIT);
    await page.waitForSelector('#m-decisions [data-key="proceed"]', WAIT);
    await page.waitForSelector('#m-durations tr[data-tool="print_label"]', WAIT);
    const before = Number(await page.getAttribute('#m-executions [data-key="created"]', "data-value"));
    await shot("metrics");
    // Live: a new execution shows up without a reload.
    await client.create("researcher", { topic: "live" });
    await page.waitForSelector(`#m-executions [data-key="created"][data-value="${before + 1}"]`, WAIT);
  });
});

describe("features the kernel lacks are hidden, with a note saying why", () => {
  let legacyLike: Server;
  let legacyUrl: string;

  beforeAll(async () => {
    // In front of the dev kernel: the fork and policy-test routes answer as the legacy Go kernel's
    // router does for a route it does not have (404 "404 page not found"); everything else passes.
    legacyLike = createServer((req, res) => {
      const path = (req.url ?? "").split("?")[0]!;
      if (/\/fork(-points)?$|^\/v0\/policies\/[^/]+\/test$/.test(path)) {
        res.writeHead(404, { "content-type": "text/plain; charset=utf-8" }).end("404 page not found\n");
        return;
      }
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const headers = Object.fromEntries(
          Object.entries(req.headers).filter(([k]) => k !== "host" && k !== "connection"),
        ) as Record<string, string>;
        fetch(`${url}${req.url}`, {
          method: req.method ?? "GET",
          headers,
          ...(chunks.length === 0 ? {} : { body: Buffer.concat(chunks) }),
        })
          .then(async (answer) => {
            res.writeHead(answer.status, {
              "content-type": answer.headers.get("content-type") ?? "text/plain",
            });
            res.end(Buffer.from(await answer.arrayBuffer()));
          })
          .catch(() => res.writeHead(502).end());
      });
    });
    await new Promise<void>((r) => legacyLike.listen(0, "127.0.0.1", r));
    legacyUrl = `http://127.0.0.1:${(legacyLike.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    legacyLike.closeAllConnections();
    await new Promise<void>((r) => legacyLike.close(() => r()));
  });

  it("no fork route: the fork panel is replaced by a note; no policy-test route: the backtest says so", async () => {
    await page.goto(`${legacyUrl}/#/exec/${crashedId}`);
    await page.waitForSelector("#fork-unsupported", WAIT);
    expect(await page.textContent("#fork-unsupported")).toContain("has no forks");
    expect(await page.locator("#fork-submit").count()).toBe(0);
    // The waterfall itself needs nothing new.
    await page.waitForSelector('#attempts [data-attempt="1"][data-end="lease_expired"]', WAIT);

    await page.goto(`${legacyUrl}/#/policy/support`);
    await page.waitForSelector("#policy-editor", WAIT);
    await page.click("#policy-test");
    await page.waitForSelector("#backtest-unsupported", WAIT);
    expect(await page.textContent("#backtest-unsupported")).toContain("no policy-test route");
    expect(await page.locator("#backtest").count()).toBe(0);
  });
});
