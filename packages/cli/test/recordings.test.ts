/**
 * `rebuno exec export|fork|fork-points` and `rebuno policy test --executions|--execution`, run as
 * a child process against a real dev kernel on loopback with real agents serving webhooks: what
 * they print, the files they write, their exit codes, and that bad input changes nothing.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@rebuno/client";
import { type DevKernel, startDevKernel } from "@rebuno/dev-kernel";
import { parseRecording } from "@rebuno/protocol";
import { Agent, type ServeHandle, subagent, Toolbox, tool } from "@rebuno/sdk";
import { type Bundle, type BundleRun, bundleCli, runBundle } from "@rebuno/test-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXIT } from "../src/exit-codes.js";

const SECRET = randomBytes(16).toString("hex");
const TOKEN = "cli-recordings-token";
const UNKNOWN = "00000000-0000-7000-8000-000000000000";

const POLICY = `default_action: allow
rules:
  - id: no-nukes
    when: { target: nuke }
    then: { decision: deny, reason: nukes are off limits }
`;
// The backtest candidate: echo is now denied too.
const STRICTER = `default_action: allow
rules:
  - id: no-echo
    when: { target: echo }
    then: { decision: deny, reason: echo is retired }
  - id: no-nukes
    when: { target: nuke }
    then: { decision: deny, reason: nukes are off limits }
`;

const text = { type: "object", properties: { text: { type: "string" } }, required: ["text"] };

class Ops extends Toolbox {
  @tool("echo", { input: text }) async echo(args: { text: string }) {
    return { echoed: args.text };
  }
  @tool("shout", { input: text }) async shout(args: { text: string }) {
    return { shouted: args.text.toUpperCase() };
  }
  @tool("delegate", { input: text }) async delegate(args: { text: string }) {
    return subagent("helper", { text: args.text });
  }
}

let kernel: DevKernel;
let url: string;
const servers: ServeHandle[] = [];
let client: Client;
let dir: string;
let cli: Bundle;

beforeAll(async () => {
  cli = await bundleCli();
  kernel = await startDevKernel({ bootstrapToken: TOKEN, dispatch: { pollMs: 20 } });
  url = await kernel.listen({ host: "127.0.0.1", port: 0 });
  client = new Client({ baseUrl: url, apiKey: TOKEN });
  const ops = new Ops();
  const options = { secret: SECRET, baseUrl: url, client, logger: { warn: () => {}, error: () => {} } };
  const worker = new Agent<{ text: string; delegate?: boolean }, unknown>(
    "recorder",
    async (input) => {
      const first = await ops.echo({ text: input.text });
      const second = await ops.shout({ text: input.text });
      const child = input.delegate === true ? await ops.delegate({ text: input.text }) : undefined;
      return { first, second, child };
    },
    options,
  );
  const helper = new Agent<{ text: string }, unknown>("helper", async (input) => ops.echo(input), options);
  for (const [agent, id] of [
    [worker, "recorder"],
    [helper, "helper"],
  ] as const) {
    const server = await agent.serve({ host: "127.0.0.1", port: 0 });
    servers.push(server);
    kernel.registerAgent({ id, webhookUrl: server.url, secret: SECRET, policy: POLICY });
  }
  dir = mkdtempSync(join(tmpdir(), "rebuno-cli-recordings-"));
});

afterAll(async () => {
  for (const s of servers) await s.close();
  await kernel?.close();
  rmSync(dir, { recursive: true, force: true });
  cli?.dispose();
});

function rebuno(args: readonly string[], env: Record<string, string> = {}): Promise<BundleRun> {
  return runBundle(cli, args, { env: { REBUNO_URL: url, REBUNO_API_KEY: TOKEN, NO_COLOR: "", ...env } });
}

function file(name: string, body: string): string {
  const path = join(dir, name);
  writeFileSync(path, body);
  return path;
}

async function finished(input: unknown): Promise<string> {
  const e = await client.create("recorder", input);
  const done = await client.waitForTerminal(e.id, { timeoutMs: 20_000, pollMs: 20 });
  expect(done.status).toBe("completed");
  return e.id;
}

describe("rebuno exec export", () => {
  it("writes a recording (stdout or -o) with steps and results; --children adds the subagent's", async () => {
    const id = await finished({ text: "hi", delegate: true });
    const out = join(dir, "rec.json");
    const [stdout, toFile, withChildren] = await Promise.all([
      rebuno(["exec", "export", id]),
      rebuno(["exec", "export", id, "-o", out]),
      rebuno(["exec", "export", id, "--children"]),
    ]);
    for (const run of [stdout, toFile, withChildren]) expect(run.code, run.stderr).toBe(EXIT.ok);
    const recording = parseRecording(stdout.stdout);
    expect(recording.steps.map((s) => [s.target, s.status, s.result])).toEqual([
      ["echo", "succeeded", { echoed: "hi" }],
      ["shout", "succeeded", { shouted: "HI" }],
      ["delegate", "succeeded", { echoed: "hi" }],
    ]);
    expect(recording.children).toBeUndefined();
    expect(toFile.stderr).toMatch(/^wrote 3 steps and \d+ events to /);
    expect(parseRecording(readFileSync(out, "utf8")).execution.id).toBe(id);
    const children = parseRecording(withChildren.stdout).children ?? [];
    expect(
      children.map((c) => [c.execution.agentId, c.execution.spawnedBy?.executionId, c.steps[0]?.result]),
    ).toEqual([["helper", id, { echoed: "hi" }]]);
  }, 60_000);

  it("an unknown execution is not found (3) and writes no file; an unwritable -o is a usage error (2)", async () => {
    const out = join(dir, "never.json");
    const id = await finished({ text: "unwritable" });
    const [run, unwritable] = await Promise.all([
      rebuno(["exec", "export", UNKNOWN, "-o", out]),
      rebuno(["exec", "export", id, "-o", join(dir, "no-such-folder", "rec.json")]),
    ]);
    expect(run.code).toBe(EXIT.notFound);
    expect(run.stderr).toContain("404");
    expect(() => readFileSync(out)).toThrow(/ENOENT/);
    expect(unwritable.code).toBe(EXIT.usage);
    expect(unwritable.stderr).toMatch(/--output: cannot write .*rec\.json.* \(ENOENT\)/);
  }, 60_000);
});

describe("rebuno policy test --executions", () => {
  it("prints each decision that would change and exits 12; 0 when nothing changes", async () => {
    const id = await finished({ text: "backtest" });
    const [changed, unchanged, one, asJson] = await Promise.all([
      rebuno(["policy", "test", file("stricter.yaml", STRICTER), "--executions", "--agent", "recorder"]),
      rebuno([
        "policy",
        "test",
        file("same.yaml", POLICY),
        "--executions",
        "--agent",
        "recorder",
        "--since",
        "1h",
      ]),
      rebuno(["policy", "test", file("stricter-one.yaml", STRICTER), "--execution", id]),
      rebuno(["policy", "test", file("stricter-json.yaml", STRICTER), "--execution", id, "--json"]),
    ]);
    expect(changed.code, changed.stderr).toBe(EXIT.decisionsChanged);
    expect(changed.stdout).toMatch(/^EXECUTION\s+STEP\s+DECISION\s+RULE\s+REASON$/m);
    expect(changed.stdout).toMatch(
      new RegExp(`${id}\\s+echo \\(tool_call\\)\\s+allow → deny\\s+no-echo\\s+echo is retired`),
    );
    expect(changed.stdout).toMatch(/\d+ of \d+ recorded steps would change decision\n$/);
    expect(unchanged.code, unchanged.stderr).toBe(EXIT.ok);
    expect(unchanged.stdout).toMatch(/^0 of \d+ recorded steps would change decision\n$/);
    expect(one.code).toBe(EXIT.decisionsChanged);
    expect(one.stdout).toContain("1 of 2 recorded steps would change decision");
    expect(JSON.parse(asJson.stdout)).toMatchObject({
      agentId: "recorder",
      evaluated: 2,
      changed: [{ execution_id: id, target: "echo", expect: "allow", decision: "deny", rule_id: "no-echo" }],
    });
  }, 60_000);

  it("bad input: no --agent (2), both selectors (2), a bundle that does not compile (7), unknown execution (3), legacy kernel (8)", async () => {
    const policy = file("ok.yaml", POLICY);
    const [noAgent, both, broken, unknown, legacy, neither] = await Promise.all([
      rebuno(["policy", "test", policy, "--executions"]),
      rebuno(["policy", "test", policy, "--executions", "--execution", UNKNOWN, "--agent", "recorder"]),
      rebuno([
        "policy",
        "test",
        file("broken.yaml", "default_action: maybe\n"),
        "--executions",
        "--agent",
        "recorder",
      ]),
      rebuno(["policy", "test", policy, "--execution", UNKNOWN]),
      rebuno(["policy", "test", policy, "--executions", "--agent", "recorder"], {
        REBUNO_PROTOCOL: "legacy",
      }),
      rebuno(["policy", "test", policy]),
    ]);
    expect(noAgent.code).toBe(EXIT.usage);
    expect(noAgent.stderr).toContain("needs --agent");
    expect(both.code).toBe(EXIT.usage);
    expect(broken.code).toBe(EXIT.invalid);
    expect(broken.stderr).toContain("invalid policy bundle");
    expect(unknown.code).toBe(EXIT.notFound);
    expect(legacy.code).toBe(EXIT.notSupported);
    expect(legacy.stderr).toContain("not_supported_by_kernel");
    expect(neither.code).toBe(EXIT.usage);
  }, 60_000);
});

describe("rebuno exec fork", () => {
  it("fork-points, then a fork that replays the settled steps and runs the rest live", async () => {
    const id = await finished({ text: "fork me" });
    const events = await client.events(id, { limit: 1000 });
    // Fork right after echo settled: echo replays, shout runs live in the fork.
    const echoDone = events.find((e) => e.type === "step.succeeded" && e.payload.target === "echo")!.eventSeq;
    const points = await rebuno(["exec", "fork-points", id]);
    expect(points.code, points.stderr).toBe(EXIT.ok);
    expect(points.stdout).toBe(`fork with --at 0..${events.at(-1)!.eventSeq}\nno resource checkpoints\n`);

    const fork = await rebuno(["exec", "fork", id, "--at", String(echoDone), "--session", `fork-${id}`]);
    expect(fork.code, fork.stderr).toBe(EXIT.ok);
    expect(fork.stdout).toMatch(
      /replays \(settled at or before event \d+\):\nKIND\s+TARGET\s+STATUS\s+STEP\ntool_call\s+echo\s+succeeded/,
    );
    expect(fork.stdout).toMatch(
      /runs live[^\n]*:\nKIND\s+TARGET\s+STATUS\s+STEP\ntool_call\s+shout\s+succeeded/,
    );
    const forkId = /^fork\s+(\S+)$/m.exec(fork.stdout)![1]!;
    const done = await client.waitForTerminal(forkId, { timeoutMs: 20_000, pollMs: 20 });
    expect(done).toMatchObject({ status: "completed", forkedFrom: id, forkSeq: echoDone });
    expect(done.output).toEqual({ first: { echoed: "fork me" }, second: { shouted: "FORK ME" } });
    // The copied echo step was never run again: its events precede the fork's start.
    const forkEvents = await client.events(forkId, { limit: 1000 });
    const started = forkEvents.find((e) => e.type === "execution.started")!.eventSeq;
    const echoSettled = forkEvents.find(
      (e) => e.type === "step.succeeded" && e.payload.target === "echo",
    )!.eventSeq;
    expect(echoSettled).toBeLessThan(started);
  }, 60_000);

  it("bad input changes nothing: --at past the last event (2), a policy that does not compile (7), unknown execution (3)", async () => {
    const id = await finished({ text: "no fork" });
    const before = (await client.list({ limit: 200 })).executions.length;
    const [past, broken, unknown, notANumber] = await Promise.all([
      rebuno(["exec", "fork", id, "--at", "100000"]),
      rebuno(["exec", "fork", id, "--at", "1", "--policy", file("broken-fork.yaml", "rules: nope\n")]),
      rebuno(["exec", "fork", UNKNOWN, "--at", "1"]),
      rebuno(["exec", "fork", id, "--at", "soon"]),
    ]);
    expect(past.code).toBe(EXIT.usage);
    expect(past.stderr).toMatch(/--at 100000 is beyond the last event of \S+ \(\d+\)/);
    expect(broken.code).toBe(EXIT.invalid);
    expect(unknown.code).toBe(EXIT.notFound);
    expect(notANumber.code).toBe(EXIT.usage);
    expect((await client.list({ limit: 200 })).executions.length).toBe(before);
  }, 60_000);
});
