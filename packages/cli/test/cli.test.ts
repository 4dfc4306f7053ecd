/**
 * The `rebuno` command, run as a child process (the real entry point, src/main.ts, compiled once
 * with esbuild) against a real dev kernel on loopback with a real agent serving webhooks: every
 * command, its `--json` form, and the error paths with their documented exit codes.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@rebuno/client";
import { type DevKernel, startDevKernel } from "@rebuno/dev-kernel";
import { Agent, type ServeHandle, Toolbox, tool } from "@rebuno/sdk";
import { type Bundle, type BundleRun, bundleCli, runBundle } from "@rebuno/test-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXIT } from "../src/exit-codes.js";
import { runCli } from "../src/program.js";

const SECRET = randomBytes(16).toString("hex");
const TOKEN = "cli-test-root-token";

const POLICY = `default_action: allow
rules:
  - id: payouts-need-a-person
    when: { target: payout }
    then: { decision: require_approval }
  - id: no-nukes
    when: { target: nuke }
    then: { decision: deny, reason: nukes are off limits }
`;

const object = (properties: Record<string, { type: string }>) => ({
  type: "object",
  properties,
  required: Object.keys(properties),
});

class Ops extends Toolbox {
  @tool("echo", { input: object({ text: { type: "string" } }) }) async echo(args: { text: string }) {
    return { echoed: args.text };
  }
  @tool("payout", { input: object({ cents: { type: "number" } }), idempotency: "at_most_once" })
  async payout(args: { cents: number }) {
    return { paid: args.cents };
  }
}

type WorkerInput = { mode: "ok" | "fail" | "approve"; text?: string };

let kernel: DevKernel;
let url: string;
let server: ServeHandle;
let client: Client;
let dir: string;
let cli: Bundle;

beforeAll(async () => {
  cli = await bundleCli();
  kernel = await startDevKernel({ bootstrapToken: TOKEN, dispatch: { pollMs: 20 } });
  url = await kernel.listen({ host: "127.0.0.1", port: 0 });
  const ops = new Ops();
  const agent = new Agent<WorkerInput, unknown>(
    "worker",
    async (input) => {
      if (input.mode === "fail") throw new Error("boom on purpose");
      if (input.mode === "approve") return ops.payout({ cents: 500 });
      return ops.echo({ text: input.text ?? "hi" });
    },
    { secret: SECRET, baseUrl: url, logger: { warn: () => {}, error: () => {} } },
  );
  server = await agent.serve({ host: "127.0.0.1", port: 0 });
  kernel.registerAgent({ id: "worker", webhookUrl: server.url, secret: SECRET, policy: POLICY });
  client = new Client({ baseUrl: url, apiKey: TOKEN });
  dir = mkdtempSync(join(tmpdir(), "rebuno-cli-test-"));
});

afterAll(async () => {
  await server?.close();
  await kernel?.close();
  rmSync(dir, { recursive: true, force: true });
  cli?.dispose();
});

function rebuno(
  args: readonly string[],
  options: { env?: Record<string, string>; stdin?: string } = {},
): Promise<BundleRun> {
  const env = { REBUNO_URL: url, REBUNO_API_KEY: TOKEN, NO_COLOR: "", ...options.env };
  return runBundle(cli, args, { env, stdin: options.stdin });
}

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

describe("rebuno: basics", () => {
  it("--version, --help on every command, usage errors exit 2", async () => {
    const [version, help, execHelp, grantHelp, policyTestHelp, unknown, missing] = await Promise.all([
      rebuno(["--version"]),
      rebuno(["--help"]),
      rebuno(["exec", "--help"]),
      rebuno(["approvals", "grant", "--help"]),
      rebuno(["policy", "test", "--help"]),
      rebuno(["exec", "frobnicate"]),
      rebuno(["exec", "get"]),
    ]);
    expect(version).toMatchObject({ code: 0, stdout: "0.1.0\n" });
    expect(help.code).toBe(0);
    for (const group of ["exec", "approvals", "agents", "policy"]) expect(help.stdout).toContain(group);
    expect(help.stdout).toContain("Exit codes:");
    expect(execHelp.code).toBe(0);
    for (const sub of ["ls", "get", "create", "watch", "events", "steps", "cancel"])
      expect(execHelp.stdout).toMatch(new RegExp(`\\n  ${sub}\\b`));
    expect(grantHelp.stdout).toContain("--reason <text>");
    expect(grantHelp.stdout).toContain("--api-key <token>"); // global options are listed on every command
    expect(policyTestHelp.stdout).toContain("--tool <id>");
    expect(unknown.code).toBe(EXIT.usage);
    expect(unknown.stderr).toContain("unknown command 'frobnicate'");
    expect(missing.code).toBe(EXIT.usage);
    expect(missing.stderr).toContain("missing required argument 'id'");
  }, 60_000);

  it("connection errors: no URL (2), unreachable (5), wrong API key (4), bad protocol (2)", async () => {
    const [noUrl, unreachable, wrongKey, badProtocol, badProtocolEnv] = await Promise.all([
      rebuno(["exec", "ls"], { env: { REBUNO_URL: "" } }),
      rebuno(["--url", "http://127.0.0.1:1", "exec", "ls"]),
      rebuno(["exec", "ls", "--api-key", "not-the-token"]),
      rebuno(["--protocol", "v9", "exec", "ls"]),
      rebuno(["exec", "ls"], { env: { REBUNO_PROTOCOL: "v9" } }),
    ]);
    expect(noUrl.code).toBe(EXIT.usage);
    expect(noUrl.stderr).toContain("no kernel URL");
    expect(unreachable.code).toBe(EXIT.unreachable);
    expect(unreachable.stderr).toContain("ECONNREFUSED");
    expect(wrongKey.code).toBe(EXIT.auth);
    expect(wrongKey.stderr).toContain("401");
    expect(badProtocol.code).toBe(EXIT.usage);
    expect(badProtocolEnv.code).toBe(EXIT.usage);
    expect(badProtocolEnv.stderr).toContain("REBUNO_PROTOCOL");
  }, 60_000);
});

describe("rebuno exec", () => {
  it("create with --input JSON, @file and stdin; --json prints the created execution; watch exits 0", async () => {
    const inputFile = file("input.json", '{"mode":"ok","text":"from a file"}');
    const [inline, fromFile, fromStdin] = await Promise.all([
      rebuno(["exec", "create", "--agent", "worker", "--input", '{"mode":"ok","text":"inline"}', "--json"]),
      rebuno(["exec", "create", "--agent", "worker", "--input", `@${inputFile}`, "--json"]),
      rebuno(["exec", "create", "--agent", "worker", "--input", "-", "--json"], {
        stdin: '{"mode":"ok","text":"piped"}',
      }),
    ]);
    for (const run of [inline, fromFile, fromStdin]) expect(run.code, run.stderr).toBe(0);
    const created = [inline, fromFile, fromStdin].map(
      (r) => JSON.parse(r.stdout) as { id: string; agentId: string; input: unknown },
    );
    expect(created.map((c) => c.input)).toEqual([
      { mode: "ok", text: "inline" },
      { mode: "ok", text: "from a file" },
      { mode: "ok", text: "piped" },
    ]);
    expect(created[0]!.agentId).toBe("worker");

    const watch = await rebuno(["exec", "watch", created[0]!.id]);
    expect(watch.code, watch.stderr).toBe(EXIT.ok);
    expect(watch.stdout).toMatch(/echo \(tool_call\)\s+allowed/);
    expect(watch.stdout).toMatch(/echo \(tool_call\)\s+succeeded\s+\d+ms\s+\{"echoed":"inline"\}/);
    expect(watch.stdout).toMatch(/execution\s+completed/);
    expect(watch.stdout).not.toContain("\x1b[");

    const watchJson = await rebuno(["exec", "watch", created[1]!.id, "--json"]);
    const entries = watchJson.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string; subject: string });
    expect(entries.at(-1)).toMatchObject({ type: "execution.completed", subject: "execution" });
  }, 60_000);

  it("create errors: bad JSON (2), unreadable @file (2), unknown agent (3), session on a legacy kernel (8)", async () => {
    const [badJson, noFile, badStdin, unknownAgent, legacySession] = await Promise.all([
      rebuno(["exec", "create", "--agent", "worker", "--input", "{mode: ok}"]),
      rebuno(["exec", "create", "--agent", "worker", "--input", `@${join(dir, "missing.json")}`]),
      rebuno(["exec", "create", "--agent", "worker", "--input", "-"], { stdin: "not json" }),
      rebuno(["exec", "create", "--agent", "nobody", "--input", "{}"]),
      // The older kernel generation has no sessions: refused before anything is sent.
      rebuno(["--protocol", "legacy", "exec", "create", "--agent", "worker", "--session", "s1"]),
    ]);
    expect(badJson.code).toBe(EXIT.usage);
    expect(badJson.stderr).toContain("--input is not valid JSON");
    expect(noFile.code).toBe(EXIT.usage);
    expect(noFile.stderr).toContain("ENOENT");
    expect(badStdin.code).toBe(EXIT.usage);
    expect(badStdin.stderr).toContain("(stdin) is not valid JSON");
    expect(unknownAgent.code, unknownAgent.stderr).toBe(EXIT.notFound);
    expect(legacySession.code, legacySession.stderr).toBe(EXIT.notSupported);
    expect(legacySession.stderr).toContain("legacy");
  }, 60_000);

  it("watch exits 10 for a failed execution; get, ls with filters, events, steps (tables and --json)", async () => {
    const failed = await client.create("worker", { mode: "fail" });
    const watch = await rebuno(["exec", "watch", failed.id]);
    expect(watch.code).toBe(EXIT.executionFailed);
    expect(watch.stdout).toMatch(/execution\s+failed\s+agent_error: Error: boom on purpose/);

    const ok = await client.create("worker", { mode: "ok", text: "listed" });
    await client.waitForTerminal(ok.id, { timeoutMs: 20_000, pollMs: 20 });
    const [
      get,
      getJson,
      ls,
      lsFailed,
      lsJson,
      lsSinceFuture,
      events,
      eventsJson,
      steps,
      stepsJson,
      unknown,
      badSince,
    ] = await Promise.all([
      rebuno(["exec", "get", ok.id]),
      rebuno(["exec", "get", ok.id, "--json"]),
      rebuno(["exec", "ls", "--agent", "worker"]),
      rebuno(["exec", "ls", "--status", "failed", "--json"]),
      rebuno(["exec", "ls", "--json", "--since", "1h", "--limit", "2"]),
      rebuno(["exec", "ls", "--json", "--since", "2999-01-01T00:00:00Z"]),
      rebuno(["exec", "events", ok.id]),
      rebuno(["exec", "events", ok.id, "--json"]),
      rebuno(["exec", "steps", ok.id]),
      rebuno(["exec", "steps", ok.id, "--json"]),
      rebuno(["exec", "get", "00000000-0000-7000-8000-000000000000"]),
      rebuno(["exec", "ls", "--since", "yesterday"]),
    ]);
    expect(get.code).toBe(0);
    expect(get.stdout).toMatch(/status\s+completed/);
    expect(get.stdout).toContain('{"echoed":"listed"}');
    expect(JSON.parse(getJson.stdout)).toMatchObject({
      id: ok.id,
      status: "completed",
      output: { echoed: "listed" },
    });
    expect(ls.stdout.split("\n")[0]).toMatch(/^ID\s+AGENT\s+STATUS\s+CREATED/);
    expect(ls.stdout).toContain(ok.id);
    expect((JSON.parse(lsFailed.stdout) as { id: string; status: string }[]).map((e) => e.status)).toEqual(
      expect.arrayContaining(["failed"]),
    );
    expect((JSON.parse(lsFailed.stdout) as { status: string }[]).every((e) => e.status === "failed")).toBe(
      true,
    );
    expect(JSON.parse(lsJson.stdout)).toHaveLength(2);
    expect(JSON.parse(lsSinceFuture.stdout)).toEqual([]);
    expect(events.stdout).toMatch(/^SEQ\s+TIME\s+TYPE\s+PAYLOAD/);
    expect(events.stdout).toContain("execution.completed");
    expect((JSON.parse(eventsJson.stdout) as { type: string }[])[0]!.type).toBe("execution.created");
    expect(steps.stdout).toMatch(/1\s+tool_call\s+echo\s+succeeded\s+safe_to_retry/);
    expect(JSON.parse(stepsJson.stdout)).toMatchObject([
      { kind: "tool_call", target: "echo", status: "succeeded" },
    ]);
    expect(unknown.code).toBe(EXIT.notFound);
    expect(badSince.code).toBe(EXIT.usage);
  }, 60_000);
});

describe("rebuno approvals and cancel", () => {
  it("approvals ls, grant (the step runs), deny --reason (the step is denied with it); decided twice → 6", async () => {
    const a = await client.create("worker", { mode: "approve" });
    const b = await client.create("worker", { mode: "approve" });
    const pendingFor = async (id: string) => {
      for (let i = 0; i < 400; i++) {
        const found = (await client.listApprovals()).find((x) => x.executionId === id);
        if (found !== undefined) return found;
        await new Promise((r) => setTimeout(r, 25));
      }
      throw new Error(`no approval for ${id}`);
    };
    const [approvalA, approvalB] = await Promise.all([pendingFor(a.id), pendingFor(b.id)]);
    const [ls, lsJson] = await Promise.all([
      rebuno(["approvals", "ls"]),
      rebuno(["approvals", "ls", "--json"]),
    ]);
    expect(ls.stdout).toMatch(/^ID\s+EXECUTION\s+STATUS/);
    expect(ls.stdout).toContain(approvalA.id);
    expect((JSON.parse(lsJson.stdout) as { id: string }[]).map((x) => x.id)).toEqual(
      expect.arrayContaining([approvalA.id, approvalB.id]),
    );

    const [grant, deny] = await Promise.all([
      rebuno(["approvals", "grant", approvalA.id, "--reason", "looks fine", "--by", "ops@example.com"]),
      rebuno(["approvals", "deny", approvalB.id, "--reason", "not this month", "--json"]),
    ]);
    expect(grant.code, grant.stderr).toBe(0);
    expect(grant.stdout).toContain("granted  by ops@example.com");
    expect(JSON.parse(deny.stdout)).toMatchObject({
      id: approvalB.id,
      status: "denied",
      rationale: "not this month",
    });
    const doneA = await client.waitForTerminal(a.id, { timeoutMs: 20_000, pollMs: 20 });
    expect(doneA).toMatchObject({ status: "completed", output: { paid: 500 } });
    const stepsB = await client.listSteps(b.id);
    expect(stepsB.find((s) => s.target === "payout")).toMatchObject({
      status: "denied",
      error: { reason: "not this month" },
    });

    const [again, unknown] = await Promise.all([
      rebuno(["approvals", "grant", approvalA.id]),
      rebuno(["approvals", "deny", "00000000-0000-7000-8000-000000000000", "--reason", "x"]),
    ]);
    expect(again.code).toBe(EXIT.conflict);
    expect(unknown.code).toBe(EXIT.notFound);
  }, 60_000);

  it("watch shows failed webhook deliveries; a cancelled execution exits 11", async () => {
    kernel.registerAgent({ id: "unreachable", webhookUrl: "http://127.0.0.1:9/webhook", secret: SECRET });
    const stuck = await client.create("unreachable", {});
    for (let i = 0; i < 400; i++) {
      if ((await client.events(stuck.id)).some((e) => e.type === "dispatch.failed")) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    await client.cancel(stuck.id);
    const watch = await rebuno(["exec", "watch", stuck.id]);
    expect(watch.code).toBe(EXIT.executionCancelled);
    expect(watch.stdout).toMatch(/dispatch\s+failed\s+attempt 1/);
  }, 60_000);

  it("cancel a parked execution: watch exits 11; cancelling again is a conflict (6)", async () => {
    const parked = await client.create("worker", { mode: "approve" });
    for (let i = 0; i < 400 && (await client.get(parked.id)).status !== "blocked"; i++)
      await new Promise((r) => setTimeout(r, 25));
    const cancel = await rebuno(["exec", "cancel", parked.id]);
    expect(cancel.code, cancel.stderr).toBe(0);
    expect(cancel.stdout).toContain("cancelled");
    const [watch, again] = await Promise.all([
      rebuno(["exec", "watch", parked.id]),
      rebuno(["exec", "cancel", parked.id]),
    ]);
    expect(watch.code).toBe(EXIT.executionCancelled);
    expect(again.code).toBe(EXIT.conflict);
  }, 60_000);
});

describe("rebuno agents and policy", () => {
  it("agents add (with a policy file), ls, get, rm; a removed agent is not found (3)", async () => {
    const policy = file("p.yaml", "default_action: deny\n");
    const add = await rebuno([
      "agents",
      "add",
      "helper",
      "--webhook-url",
      "http://127.0.0.1:9/webhook",
      "--secret",
      "s3cret",
      "--policy",
      policy,
      "--json",
    ]);
    expect(add.code, add.stderr).toBe(0);
    expect(JSON.parse(add.stdout)).toMatchObject({
      id: "helper",
      webhookUrl: "http://127.0.0.1:9/webhook",
      policyBundle: "default_action: deny\n",
    });
    const [ls, lsJson, get] = await Promise.all([
      rebuno(["agents", "ls"]),
      rebuno(["agents", "ls", "--json"]),
      rebuno(["agents", "get", "helper"]),
    ]);
    expect(ls.stdout).toMatch(/^ID\s+WEBHOOK/);
    expect(ls.stdout).toMatch(/helper\s+http:\/\/127\.0\.0\.1:9\/webhook/);
    expect((JSON.parse(lsJson.stdout) as { id: string }[]).map((a) => a.id)).toEqual(
      expect.arrayContaining(["helper", "worker"]),
    );
    expect(get.stdout).toContain("default_action: deny");
    const rm = await rebuno(["agents", "rm", "helper"]);
    expect(rm).toMatchObject({ code: 0, stdout: "removed helper\n" });
    const getGone = await rebuno(["agents", "get", "helper"]);
    expect(getGone.code).toBe(EXIT.notFound);
    expect(getGone.stderr).toContain("404");
  }, 60_000);

  it("policy get and set; a bundle that does not compile is refused (7)", async () => {
    const strict = file(
      "strict.yaml",
      POLICY.replace("default_action: allow", "default_action: allow\n# edited"),
    );
    const set = await rebuno(["policy", "set", "worker", strict]);
    expect(set).toMatchObject({ code: 0, stdout: "policy set for worker\n" });
    const [get, getJson] = await Promise.all([
      rebuno(["policy", "get", "worker"]),
      rebuno(["policy", "get", "worker", "--json"]),
    ]);
    expect(get.stdout).toContain("# edited");
    expect(JSON.parse(getJson.stdout)).toMatchObject({ agentId: "worker" });
    const bad = await rebuno(["policy", "set", "worker", file("bad.yaml", "rules: nope\n")]);
    expect(bad.code).toBe(EXIT.invalid);
    expect(bad.stderr).toContain("invalid policy bundle");
  }, 60_000);

  it("policy test evaluates locally with the dev kernel's engine: decision, rule, reason", async () => {
    const policy = file("test-policy.yaml", POLICY);
    const [deny, approve, allow, asJson, badArgs, badBundle, noKernel] = await Promise.all([
      rebuno(["policy", "test", policy, "--tool", "nuke", "--args", '{"target":"moon"}']),
      rebuno(["policy", "test", policy, "--tool", "payout", "--args", '{"cents":5}']),
      rebuno(["policy", "test", policy, "--tool", "echo"]),
      rebuno(["policy", "test", policy, "--tool", "nuke", "--json"]),
      rebuno(["policy", "test", policy, "--tool", "nuke", "--args", "{oops"]),
      rebuno(["policy", "test", file("broken.yaml", "default_action: maybe\n"), "--tool", "x"]),
      // No kernel needed at all: an unreachable URL does not matter.
      rebuno(["policy", "test", policy, "--tool", "nuke"], { env: { REBUNO_URL: "http://127.0.0.1:1" } }),
    ]);
    expect(deny.code).toBe(0);
    expect(deny.stdout).toMatch(/decision\s+deny\nrule\s+no-nukes\nreason\s+nukes are off limits/);
    expect(approve.stdout).toMatch(/decision\s+require_approval\nrule\s+payouts-need-a-person/);
    expect(allow.stdout).toMatch(/decision\s+allow\nrule\s+default/);
    expect(JSON.parse(asJson.stdout)).toMatchObject({
      decision: "deny",
      ruleId: "no-nukes",
      reason: "nukes are off limits",
    });
    expect(badArgs.code).toBe(EXIT.usage);
    expect(badBundle.code).toBe(EXIT.invalid);
    expect(badBundle.stderr).toContain("default_action");
    expect(noKernel.code).toBe(0);
  }, 60_000);
});

describe("rebuno: colour", () => {
  // A pseudo-terminal is not available to a child process here, so this runs the same entry
  // point in process with stdout declared a TTY.
  async function listOnTty(env: Record<string, string>): Promise<string> {
    let out = "";
    const code = await runCli(["exec", "ls", "--agent", "worker"], {
      stdout: (t) => {
        out += t;
      },
      stderr: () => {},
      readStdin: async () => "",
      env: { REBUNO_URL: url, REBUNO_API_KEY: TOKEN, ...env },
      isTTY: true,
    });
    expect(code).toBe(0);
    return out;
  }

  it("only on a TTY, and never with NO_COLOR", async () => {
    const done = await client.create("worker", { mode: "ok" });
    await client.waitForTerminal(done.id, { timeoutMs: 20_000, pollMs: 20 });
    expect(await listOnTty({})).toContain("\x1b[32mcompleted\x1b[39m");
    expect(await listOnTty({ NO_COLOR: "1" })).not.toContain("\x1b[");
  }, 30_000);
});
