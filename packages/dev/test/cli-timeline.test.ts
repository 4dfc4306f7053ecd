// `rebuno-dev --version`, and the one-line-per-step timeline it prints (off with `--quiet`), run as
// a real process with a real SDK agent serving its webhooks on loopback.
import { readFileSync } from "node:fs";
import { Client } from "@rebuno/client";
import { Agent, type ServeHandle, step, Toolbox, tool } from "@rebuno/sdk";
import { ProcessGroup, spawnRebunoDev } from "@rebuno/test-kit";
import { afterEach, describe, expect, test } from "vitest";

const VERSION = (
  JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }
).version;
const SECRET = "timeline-secret-0123456789";
const children = new ProcessGroup();
const servers: ServeHandle[] = [];

afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  await children.killAll();
});

class Kitchen extends Toolbox {
  @tool("boil", {
    input: { type: "object", properties: { litres: { type: "number" } }, required: ["litres"] },
  })
  async boil(args: { litres: number }) {
    return { boiled: args.litres };
  }
}

function startProcess(args: string[]) {
  const p = spawnRebunoDev(["--listen", "127.0.0.1:0", ...args], { group: children });
  return {
    child: p.child,
    waitFor: (pattern: RegExp) => p.waitForOutput(pattern),
    out: () => p.stdout(),
    err: () => p.stderr(),
  };
}

async function runOneExecution(url: string): Promise<string> {
  const kitchen = new Kitchen();
  const agent = new Agent(
    "cook",
    async () => {
      const pot = await kitchen.boil({ litres: 2 });
      const dish = await step("choose_dish", () => "pasta");
      return { pot, dish };
    },
    { secret: SECRET, baseUrl: url, logger: { warn: () => {}, error: () => {} } },
  );
  const server = await agent.serve({ host: "127.0.0.1", port: 0 });
  servers.push(server);
  const client = new Client({ baseUrl: url });
  await client.registerAgent({ id: "cook", webhookUrl: server.url, secret: SECRET });
  const created = await client.create("cook", {});
  const done = await client.waitForTerminal(created.id, { timeoutMs: 20_000, pollMs: 20 });
  expect(done.status).toBe("completed");
  return created.id;
}

describe("rebuno-dev", () => {
  test("--version prints the package version and exits 0", async () => {
    const p = startProcess(["--version"]);
    const code = await new Promise<number | null>((resolve) => p.child.once("exit", resolve));
    expect(code).toBe(0);
    expect(p.out()).toBe(`${VERSION}\n`);
  }, 30_000);

  test("prints one line per step of every execution as it runs", async () => {
    const p = startProcess([]);
    const url = (await p.waitFor(/rebuno-dev listening on (http:\/\/\S+)/))[1]!;
    const id = await runOneExecution(url);
    const short = id.slice(-8);
    await p.waitFor(new RegExp(`${short}  cook  execution completed`));
    const lines = p
      .out()
      .split("\n")
      .filter((l) => l.includes(short));
    expect(lines.map((l) => l.replace(/^\S+\s+/, ""))).toEqual([
      `${short}  cook  execution created  id ${id}`,
      expect.stringMatching(
        new RegExp(`^${short}  cook  tool_call boil  succeeded  \\d+ms  \\{"boiled":2\\}$`),
      ),
      expect.stringMatching(new RegExp(`^${short}  cook  local choose_dish  succeeded  \\d+ms  "pasta"$`)),
      `${short}  cook  execution completed  {"pot":{"boiled":2},"dish":"pasta"}`,
    ]);
    p.child.kill("SIGTERM");
  }, 60_000);

  test("a failed webhook delivery gets a line too", async () => {
    const p = startProcess([]);
    const url = (await p.waitFor(/rebuno-dev listening on (http:\/\/\S+)/))[1]!;
    const client = new Client({ baseUrl: url });
    await client.registerAgent({ id: "ghost", webhookUrl: "http://127.0.0.1:9/webhook", secret: SECRET });
    const created = await client.create("ghost", {});
    await p.waitFor(new RegExp(`${created.id.slice(-8)}  ghost  dispatch failed  attempt 1`));
    p.child.kill("SIGTERM");
  }, 60_000);

  // SIGTERM right after the execution completed used to exit 1 now and then under load: the
  // terminal notice's flush wrote to the SSE response close() had just ended (stream-bus.test.ts
  // pins that order). The message carries stderr.
  test("--quiet prints no timeline", { timeout: 60_000 }, async () => {
    const p = startProcess(["--quiet"]);
    const url = (await p.waitFor(/rebuno-dev listening on (http:\/\/\S+)/))[1]!;
    await runOneExecution(url);
    const exited = new Promise<number | null>((resolve) => p.child.once("exit", resolve));
    p.child.kill("SIGTERM");
    expect(await exited, `stderr: ${p.err()}`).toBe(0);
    expect(p.out()).not.toContain("cook");
    expect(p.out()).toContain("shutting down");
  });
});
