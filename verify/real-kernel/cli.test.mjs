// The `rebuno` command against the real Go kernel (`rebuno dev`, protocol legacy), with the SDK
// fixture agent serving its webhooks: the same commands and exit codes as against our dev kernel.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { EXIT } from "@rebuno/cli";
import { parseRecording } from "@rebuno/protocol";
import { bundleCli, freePort, runBundle } from "@rebuno/test-kit";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startAgentProcess } from "./lib/agent-process.mjs";
import { startGoDev } from "./lib/go-kernel.mjs";

const SECRET = "cli-agent-secret-0123456789";
const POLICY = `default_action: allow
rules:
  - id: hold-refunds
    priority: 10
    when: { target: refund }
    then: { decision: require_approval }
`;
const ghost = "01920000-0000-7000-8000-000000000bad";

let go;
let cli;
let agent;
let dir;

beforeAll(async () => {
  cli = await bundleCli();
  dir = mkdtempSync(path.join(os.tmpdir(), "rebuno-cli-go-"));
  const port = await freePort();
  go = await startGoDev({
    agents: [
      { id: "cli-agent", webhookUrl: `http://127.0.0.1:${port}/webhook`, secret: SECRET, policy: POLICY },
      // Nobody listens here: its executions stay running until cancelled.
      { id: "cli-idle", webhookUrl: "http://127.0.0.1:9/webhook", secret: SECRET },
    ],
  });
  agent = await startAgentProcess({
    REBUNO_URL: go.url,
    REBUNO_AGENT_SECRET: SECRET,
    REBUNO_PROTOCOL: "legacy",
    AGENT_ID: "cli-agent",
    PORT: String(port),
    LEASE_S: "30",
  });
});

afterAll(async () => {
  await agent?.kill();
  await go?.stop();
  cli?.dispose();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

function rebuno(args, { env = {} } = {}) {
  return runBundle(cli, args, {
    env: { REBUNO_URL: go.url, REBUNO_PROTOCOL: "legacy", REBUNO_API_KEY: "", NO_COLOR: "", ...env },
  });
}

async function created(input, agentId = "cli-agent") {
  const run = await rebuno([
    "exec",
    "create",
    "--agent",
    agentId,
    "--input",
    JSON.stringify(input),
    "--json",
  ]);
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout).id;
}

async function pendingApproval(executionId) {
  for (let i = 0; i < 300; i++) {
    const ls = await rebuno(["approvals", "ls", "--json"]);
    const found = JSON.parse(ls.stdout).find((a) => a.executionId === executionId);
    if (found !== undefined) return found;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no pending approval for ${executionId}`);
}

describe("rebuno (CLI) against rebuno dev, protocol legacy", () => {
  test("exec create, watch (exit 0), get, ls, events, steps; unknown id is 3", async () => {
    const id = await created({ kind: "tools", key: "cli1" });
    const watch = await rebuno(["exec", "watch", id]);
    expect(watch.code, watch.stderr).toBe(EXIT.ok);
    expect(watch.stdout).toMatch(/lookup \(tool_call\)\s+succeeded\s+\d+ms\s+\{"found":"value-cli1"\}/);
    expect(watch.stdout).toMatch(/execution\s+completed/);
    const [get, ls, events, steps, unknown] = await Promise.all([
      rebuno(["exec", "get", id, "--json"]),
      rebuno(["exec", "ls", "--agent", "cli-agent"]),
      rebuno(["exec", "events", id, "--json"]),
      rebuno(["exec", "steps", id]),
      rebuno(["exec", "get", ghost]),
    ]);
    expect(JSON.parse(get.stdout)).toMatchObject({ id, status: "completed" });
    expect(ls.stdout).toContain(id);
    expect(JSON.parse(events.stdout)[0].type).toBe("execution.created");
    expect(steps.stdout).toMatch(/1\s+tool_call\s+lookup\s+succeeded\s+safe_to_retry/);
    expect(steps.stdout).toMatch(/2\s+tool_call\s+charge\s+succeeded\s+at_most_once/);
    expect(unknown.code).toBe(EXIT.notFound);
    const session = await rebuno(["exec", "create", "--agent", "cli-agent", "--session", "s1"]);
    expect(session.code).toBe(EXIT.notSupported);
  });

  test("approvals: grant resumes the execution; deny --reason reaches the agent", async () => {
    const granted = await created({ kind: "approval", key: "cli-g" });
    const denied = await created({ kind: "approval-denied", key: "cli-d" });
    const [a, b] = await Promise.all([pendingApproval(granted), pendingApproval(denied)]);
    const [grant, deny] = await Promise.all([
      rebuno(["approvals", "grant", a.id, "--by", "ops", "--reason", "ok"]),
      rebuno(["approvals", "deny", b.id, "--by", "ops", "--reason", "not today"]),
    ]);
    expect(grant.code, grant.stderr).toBe(0);
    expect(deny.code, deny.stderr).toBe(0);
    const [watchGranted, watchDenied] = await Promise.all([
      rebuno(["exec", "watch", granted, "--json"]),
      rebuno(["exec", "watch", denied]),
    ]);
    expect(watchGranted.code).toBe(EXIT.ok);
    expect(
      watchGranted.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l).type),
    ).toContain("step.succeeded");
    expect(watchDenied.code).toBe(EXIT.ok);
    expect(watchDenied.stdout).toMatch(/refund \(tool_call\)\s+denied\s+not today/);
  });

  test("cancel (0), cancel again (6), watch of a cancelled execution (11)", async () => {
    const id = await created({}, "cli-idle");
    const cancel = await rebuno(["exec", "cancel", id]);
    expect(cancel.code, cancel.stderr).toBe(0);
    const [again, watch] = await Promise.all([rebuno(["exec", "cancel", id]), rebuno(["exec", "watch", id])]);
    expect(again.code).toBe(EXIT.conflict);
    expect(watch.code).toBe(EXIT.executionCancelled);
  });

  test("agents add, ls, get, rm; policy set and get", async () => {
    const policy = path.join(dir, "p.yaml");
    writeFileSync(policy, "default_action: deny\n");
    const add = await rebuno([
      "agents",
      "add",
      "cli-extra",
      "--webhook-url",
      "http://127.0.0.1:9/x",
      "--secret",
      "s",
    ]);
    expect(add.code, add.stderr).toBe(0);
    const set = await rebuno(["policy", "set", "cli-extra", policy]);
    expect(set.code, set.stderr).toBe(0);
    const [ls, get] = await Promise.all([
      rebuno(["agents", "ls", "--json"]),
      rebuno(["policy", "get", "cli-extra"]),
    ]);
    expect(JSON.parse(ls.stdout).map((x) => x.id)).toContain("cli-extra");
    expect(get.stdout).toContain("default_action: deny");
    const rm = await rebuno(["agents", "rm", "cli-extra"]);
    expect(rm.code, rm.stderr).toBe(0);
    expect((await rebuno(["agents", "get", "cli-extra"])).code).toBe(EXIT.notFound);
  });

  test("exec export: the recording holds the steps with results, and nothing the Go kernel does not record", async () => {
    const id = await created({ kind: "tools", key: "cli-export" });
    expect((await rebuno(["exec", "watch", id])).code).toBe(EXIT.ok);
    const out = path.join(dir, "go-recording.json");
    const run = await rebuno(["exec", "export", id, "-o", out, "--children"]);
    expect(run.code, run.stderr).toBe(EXIT.ok);
    const recording = parseRecording(readFileSync(out, "utf8")); // identity checked: step ids match args
    expect(recording.protocol).toBe("legacy");
    expect(recording.steps.map((s) => [s.target, s.status, s.decision])).toEqual([
      ["lookup", "succeeded", "allowed"],
      ["charge", "succeeded", "allowed"],
    ]);
    expect(recording.steps[0].result).toEqual({ found: "value-cli-export" });
    // The Go kernel records no session, no previous state and no subagents: absent, not invented.
    expect(recording.execution).not.toHaveProperty("session");
    expect(recording.execution).not.toHaveProperty("previous");
    expect(recording).not.toHaveProperty("children");
    expect((await rebuno(["exec", "export", ghost])).code).toBe(EXIT.notFound);
  });

  test("policy test --executions and exec fork: the typed not-supported error (8), nothing changed", async () => {
    const policy = path.join(dir, "backtest.yaml");
    writeFileSync(policy, POLICY);
    const [backtest, one, fork, points] = await Promise.all([
      rebuno(["policy", "test", policy, "--executions", "--agent", "cli-agent"]),
      rebuno(["policy", "test", policy, "--execution", ghost, "--agent", "cli-agent"]),
      rebuno(["exec", "fork", ghost, "--at", "1"]),
      rebuno(["exec", "fork-points", ghost]),
    ]);
    for (const run of [backtest, one, fork, points]) {
      expect(run.code, run.stderr).toBe(EXIT.notSupported);
      expect(run.stderr).toContain("not_supported_by_kernel");
    }
  });
});
