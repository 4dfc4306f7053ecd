/**
 * The web console in headless Chromium (Debian's `chromium`, driven by playwright-core), served by
 * a real dev kernel at `/` exactly as `rebuno-dev` serves it, with a real agent answering webhooks.
 * Each view's screenshot is written to docs/images/console-*.png.
 */
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { Client } from "@rebuno/client";
import { type DevKernel, startDevKernel } from "@rebuno/dev-kernel";
import { Agent, type ServeHandle, Toolbox, ToolError, tool } from "@rebuno/sdk";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildConsole } from "../scripts/build.mjs";
import { consoleAssetsDir } from "../src/index.js";

const CHROMIUM = process.env.REBUNO_CHROMIUM ?? "/usr/bin/chromium";
const IMAGES = fileURLToPath(new URL("../../../docs/images/", import.meta.url));
const SECRET = randomBytes(16).toString("hex");
const WAIT = { timeout: 25_000 };

const POLICY = `default_action: allow
rules:
  - id: refunds-need-a-person
    when: { target: refund }
    then:
      decision: require_approval
      approval_config: { message: "refund requested by the assistant" }
  - id: never-delete-accounts
    when: { target: delete_account }
    then: { decision: deny, reason: "accounts are closed by the support team, not by the assistant" }
`;

const object = (properties: Record<string, { type: string }>) => ({
  type: "object",
  properties,
  required: Object.keys(properties),
});

/** Released by the test: lets it watch a step that is still running. */
let releaseSlow: () => void = () => {};
let slowStarted: () => void = () => {};

class Desk extends Toolbox {
  @tool("lookup_order", { input: object({ order: { type: "string" } }) })
  async lookupOrder(args: { order: string }) {
    return { order: args.order, status: "delivered", paidCents: 2599 };
  }
  @tool("check_carrier", { input: object({ order: { type: "string" } }) })
  async checkCarrier(args: { order: string }) {
    slowStarted();
    await new Promise<void>((resolve) => {
      releaseSlow = resolve;
    });
    return { order: args.order, carrier: "delivered at 10:42" };
  }
  @tool("refund", {
    input: object({ order: { type: "string" }, cents: { type: "number" } }),
    idempotency: "at_most_once",
  })
  async refund(args: { order: string; cents: number }) {
    return { refunded: args.cents, order: args.order };
  }
  @tool("delete_account", { input: object({ customer: { type: "string" } }) })
  async deleteAccount(args: { customer: string }) {
    return { deleted: args.customer };
  }
}

type DeskInput = { ask: "track" | "refund" | "close"; order: string };

let kernel: DevKernel;
let url: string;
let server: ServeHandle;
let client: Client;
let browser: Browser;
let page: Page;

async function closedPortUrl(): Promise<string> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return `http://127.0.0.1:${port}/`;
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium not found at ${CHROMIUM} (apt-get install chromium)`);
  await buildConsole({ fromSource: true });
  kernel = await startDevKernel({
    staticAssets: consoleAssetsDir(),
    dispatch: { pollMs: 20, backoffBaseMs: 60_000, backoffMaxMs: 60_000, maxAttempts: 3 },
    onError: () => {},
  });
  url = await kernel.listen({ host: "127.0.0.1", port: 0 });
  const desk = new Desk();
  const agent = new Agent<DeskInput, unknown>(
    "support",
    async (input) => {
      const order = await desk.lookupOrder({ order: input.order });
      if (input.ask === "track") return desk.checkCarrier({ order: order.order });
      if (input.ask === "refund") return desk.refund({ order: order.order, cents: order.paidCents });
      try {
        return await desk.deleteAccount({ customer: "c-17" });
      } catch (error) {
        if (ToolError.isInstance(error) && error.reason === "denied") return { refused: error.policyReason };
        throw error;
      }
    },
    { secret: SECRET, baseUrl: url, logger: { warn: () => {}, error: () => {} } },
  );
  server = await agent.serve({ host: "127.0.0.1", port: 0 });
  kernel.registerAgent({ id: "support", webhookUrl: server.url, secret: SECRET, policy: POLICY });
  // Same agent server, wrong secret: it answers 401. And an agent nobody started.
  kernel.registerAgent({ id: "misconfigured", webhookUrl: server.url, secret: "not-the-agent-secret" });
  kernel.registerAgent({ id: "offline", webhookUrl: await closedPortUrl(), secret: SECRET });
  client = new Client({ baseUrl: url });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
}, 60_000);

afterAll(async () => {
  releaseSlow();
  await browser?.close();
  await server?.close();
  await client?.close();
  await kernel?.close();
});

const statusOf = (selector: string, status: string) => `${selector} [data-status="${status}"]`;

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: `${IMAGES}console-${name}.png`, fullPage: true });
}

describe("web console (headless Chromium)", () => {
  it("lists a running execution, then follows its timeline live until it completes", async () => {
    const started = new Promise<void>((r) => {
      slowStarted = r;
    });
    const e = await client.create("support", { ask: "track", order: "ord-7" });
    await started;
    await page.goto(`${url}/`);
    const row = `#executions tr[data-execution="${e.id}"]`;
    await page.waitForSelector(statusOf(row, "running"), WAIT);
    await shot("executions");
    // The status filter asks the kernel for that status only.
    await page.selectOption("#status-filter", "completed");
    await page.waitForSelector(row, { ...WAIT, state: "detached" });
    await page.selectOption("#status-filter", "running");
    await page.waitForSelector(statusOf(row, "running"), WAIT);

    await page.click(`${row} a`);
    const slow = `#steps [data-target="check_carrier"]`;
    await page.waitForSelector(statusOf(slow, "executing"), WAIT);
    await page.waitForSelector(statusOf(`#steps [data-target="lookup_order"]`, "succeeded"), WAIT);
    expect(await page.textContent(`#steps [data-target="lookup_order"]`)).toContain('"order": "ord-7"');
    // A body still executing grows on screen: its bar widens without any new event.
    const runningBar = `${slow} [data-body="ran"] .seg`;
    await page.waitForSelector(runningBar, WAIT);
    const width = await page.$eval(runningBar, (el) =>
      Number.parseFloat((el as unknown as { style: { width: string } }).style.width),
    );
    await page.waitForFunction(
      ({ selector, before }) => {
        const el = (
          globalThis as unknown as {
            document: { querySelector(s: string): { style: { width: string } } | null };
          }
        ).document.querySelector(selector);
        return el !== null && Number.parseFloat(el.style.width) > before;
      },
      { selector: runningBar, before: width },
      WAIT,
    );
    await shot("timeline-live");
    // Nothing reloads the page: the step and the execution settle on screen as the kernel records them.
    releaseSlow();
    await page.waitForSelector(statusOf(slow, "succeeded"), WAIT);
    await page.waitForSelector('h2 [data-status="completed"]', WAIT);
    expect(await page.textContent(slow)).toContain("delivered at 10:42");
    // The raw event log is folded under the waterfall; open it.
    await page.click("#raw-events summary");
    await page.waitForSelector('#events tr[data-event="execution.completed"]', WAIT);
    await shot("timeline");
  });

  it("an approval granted from the page resumes the execution", async () => {
    const e = await client.create("support", { ask: "refund", order: "ord-8" });
    await page.goto(`${url}/#/exec/${e.id}`);
    await page.waitForSelector("#approvals [data-approval] button.grant", WAIT);
    await page.fill("#approvals [data-approval] input", "customer called, refund ok");
    await shot("approval");
    await page.click("#approvals [data-approval] button.grant");
    await page.waitForSelector('h2 [data-status="completed"]', WAIT);
    await page.waitForSelector(statusOf('#steps [data-target="refund"]', "succeeded"), WAIT);
    expect((await client.get(e.id)).status).toBe("completed");
  });

  it("an approval denied from the page shows its reason on the step", async () => {
    const e = await client.create("support", { ask: "refund", order: "ord-9" });
    await page.goto(`${url}/#/approvals`);
    await page.waitForSelector(`#approvals [data-approval] a[href="#/exec/${e.id}"]`, WAIT);
    await page.fill("#approvals [data-approval] input", "refund window closed");
    await page.click("#approvals [data-approval] button.deny");
    await page.goto(`${url}/#/exec/${e.id}`);
    const refund = '#steps [data-target="refund"]';
    await page.waitForSelector(statusOf(refund, "denied"), WAIT);
    expect(await page.textContent(refund)).toContain("refund window closed");
  });

  it("a step denied by policy shows the policy's reason", async () => {
    const e = await client.create("support", { ask: "close", order: "ord-10" });
    await page.goto(`${url}/#/exec/${e.id}`);
    const step = '#steps [data-target="delete_account"]';
    await page.waitForSelector(statusOf(step, "denied"), WAIT);
    expect(await page.textContent(step)).toContain("accounts are closed by the support team");
    await page.waitForSelector('h2 [data-status="completed"]', WAIT);
    await shot("denied");
  });

  it("a failed webhook delivery shows its cause: wrong secret (401) vs agent down", async () => {
    const wrong = await client.create("misconfigured", {});
    await page.goto(`${url}/#/exec/${wrong.id}`);
    await page.waitForSelector("#delivery-failure", WAIT);
    const text401 = await page.textContent("#delivery-failure");
    expect(text401).toContain("HTTP 401");
    expect(text401).toContain("secret");
    expect(text401).toContain("attempt 1 of 3");
    expect(text401).toContain("next retry at");
    await shot("delivery-failure");

    const down = await client.create("offline", {});
    await page.goto(`${url}/#/exec/${down.id}`);
    await page.waitForSelector("#delivery-failure", WAIT);
    const textDown = await page.textContent("#delivery-failure");
    expect(textDown).toContain("connection_refused");
    expect(textDown).not.toContain("HTTP");
  });

  it("lists agents with their policies", async () => {
    await page.goto(`${url}/#/agents`);
    await page.waitForSelector('#agents tr[data-agent="support"]', WAIT);
    expect(await page.textContent('#agents tr[data-agent="support"]')).toContain("refunds-need-a-person");
    await shot("agents");
  });
});
