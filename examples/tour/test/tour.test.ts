/**
 * The tour, run as a user runs it (a separate Node process, agents in their own child processes),
 * in JSON-lines mode and in text mode with `--keep`. Each stage must appear with the facts it
 * claims, and the process must exit 0.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runCli } from "@rebuno/cli";
import { parseRecording, type Recording } from "@rebuno/protocol";
import { formatReplayReport, replayRecording } from "@rebuno/testing";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { ShopAgent } from "../agents.js";

const MAIN = fileURLToPath(new URL("../main.ts", import.meta.url));
const TSCONFIG = fileURLToPath(new URL("./tsconfig.json", import.meta.url));
const children: ChildProcess[] = [];

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
});

function startTour(args: string[]) {
  const child = spawn(process.execPath, ["--import", "tsx", MAIN, ...args], {
    env: { ...process.env, TSX_TSCONFIG_PATH: TSCONFIG, NO_COLOR: "" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  const exit = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, exit, out: () => stdout, err: () => stderr };
}

type Rec = Record<string, unknown> & { type: string; stage: string };

describe("pnpm tour", () => {
  it("--json: every stage, its timeline and its facts, as JSON lines; exit 0", async () => {
    const tour = startTour(["--json"]);
    const code = await tour.exit;
    expect(code, tour.err()).toBe(0);
    const records = tour
      .out()
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Rec);
    const stages = records.filter((r) => r.type === "stage").map((r) => r.stage);
    expect(stages).toEqual(["toolbox", "denial", "approval", "crash", "subagent"]);
    const of = (stage: string) => records.filter((r) => r.stage === stage);
    const types = (stage: string) =>
      of(stage)
        .filter((r) => r.type === "timeline")
        .map((r) => `${r.type}:${r.subject}:${r.outcome}`);

    // 1: schemas shown once, tool calls recorded as steps.
    const schemaNotes = records.filter((r) => Array.isArray(r.data));
    expect(schemaNotes).toHaveLength(1);
    expect(JSON.stringify(schemaNotes[0]!.data)).toContain('"name":"place_order"');
    expect(types("toolbox")).toEqual(
      expect.arrayContaining([
        "timeline:check_stock:succeeded",
        "timeline:place_order:succeeded",
        "timeline:execution:completed",
      ]),
    );

    // 2: the exact string the LLM receives.
    const denial = of("denial").find(
      (r) => r.type === "note" && String(r.text).startsWith("the LLM receives exactly"),
    );
    expect((denial!.data as { modelReads: string }).modelReads).toBe(
      "delete_account not allowed. reason: accounts are closed by the support team, not by the assistant",
    );
    expect(types("denial")).toContain("timeline:delete_account:denied");

    // 3: parked, granted through the client, resumed.
    expect(types("approval")).toEqual(
      expect.arrayContaining([
        "timeline:refund:awaiting approval",
        "timeline:execution:blocked",
        "timeline:approval:granted",
        "timeline:execution:resumed",
        "timeline:refund:succeeded",
      ]),
    );

    // 4: SIGKILL, redelivery, the safe tool runs again, the at_most_once one is indeterminate.
    const crash = of("crash");
    expect(crash.some((r) => String(r.text).startsWith("SIGKILL"))).toBe(true);
    expect(crash.filter((r) => String(r.text).includes("print_label body started"))).toHaveLength(2);
    expect(types("crash")).toEqual(
      expect.arrayContaining([
        "timeline:charge_card:indeterminate",
        "timeline:print_label:succeeded",
        "timeline:find_charge:succeeded",
      ]),
    );
    expect(
      crash.some((r) => r.type === "timeline" && r.subject === "dispatch" && r.detail === "attempt 2"),
    ).toBe(true);

    // 5: a subagent in a session; the resumed runs replay without running bodies.
    const sub = of("subagent");
    expect(sub.filter((r) => r.type === "replay" && r.target === "outline").length).toBeGreaterThanOrEqual(1);
    expect(
      sub.filter(
        (r) => String(r.text).startsWith("subagent ") && String(r.text).includes("(session researcher:"),
      ),
    ).toHaveLength(2);
    expect(types("subagent")).toEqual(
      expect.arrayContaining(["timeline:execution:blocked", "timeline:execution:resumed"]),
    );

    // 6: the summary adds up.
    const summary = records.find((r) => r.type === "summary")!;
    expect(summary).toMatchObject({ executions: 7, denials: 1, byStatus: { completed: 7 } });
    expect(summary.replays as number).toBeGreaterThanOrEqual(5);
    expect(summary.steps as number).toBeGreaterThanOrEqual(12);
  }, 120_000);

  it("text mode with --keep and --store sqlite: stage headings, no colour off a TTY, the kernel stays up until SIGINT; its executions export, the shop recording replays offline, and the file holds them as rows", async () => {
    const dir = mkdtempSync(join(tmpdir(), "rebuno-tour-"));
    const file = join(dir, "tour.db");
    const tour = startTour(["--keep", "--store", `sqlite:${file}`]);
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no kernel URL: ${tour.out()} ${tour.err()}`)),
        100_000,
      );
      tour.child.stdout!.on("data", () => {
        const m = /kernel left running at (http:\/\/[\d.:]+)/.exec(tour.out());
        if (m !== null) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
      tour.exit.then((code) => reject(new Error(`exited ${code}: ${tour.err()}`)));
    });
    const text = tour.out();
    for (const heading of [
      "1/5  A decorated toolbox and a class agent",
      "2/5  A tool denied by policy",
      "3/5  A step held for approval",
      "4/5  The agent process SIGKILLed in the middle of a tool",
      "5/5  A subagent call with a session, and a resumed run that replays",
      "Summary: 7 executions",
    ]) {
      expect(text).toContain(heading);
    }
    expect(text).not.toContain("\x1b[");
    const executions = (await (await fetch(`${url}/v0/executions`)).json()) as { executions: unknown[] };
    expect(executions.executions).toHaveLength(7);
    await exportAndReplay(url);
    tour.child.kill("SIGINT");
    expect(await tour.exit).toBe(0);
    expectRows(file);
    rmSync(dir, { recursive: true, force: true });
  }, 120_000);

  it("--store with anything but memory or sqlite:PATH: exit 2 with the usage", async () => {
    const tour = startTour(["--store", "postgres://x"]);
    expect(await tour.exit).toBe(2);
    expect(tour.err()).toContain('--store must be memory or sqlite:PATH, got "postgres://x"');
    expect(tour.err()).toContain("usage: pnpm tour");
  });
});

/** What `sqlite3 tour.db` shows after the tour (docs/dev-kernel.md): plain rows, one per step. */
function expectRows(file: string): void {
  const db = new Database(file, { readonly: true });
  try {
    const count = (sql: string) => db.prepare(sql).pluck().get() as number;
    expect(count("SELECT count(*) FROM executions WHERE status = 'completed'")).toBe(7);
    expect(count("SELECT count(*) FROM steps")).toBe(12);
    const shop = db
      .prepare(
        `SELECT s.target, s.status FROM steps s JOIN executions e ON e.id = s.execution_id
         WHERE e.agent_id = 'shop' ORDER BY s.created_at`,
      )
      .all();
    expect(shop).toEqual([
      { target: "check_stock", status: "succeeded" },
      { target: "order_id", status: "succeeded" },
      { target: "place_order", status: "succeeded" },
    ]);
    const denials = db
      .prepare(
        `SELECT json_extract(payload, '$.rule_id') AS rule, count(*) AS n FROM events
         WHERE type = 'step.denied' GROUP BY rule`,
      )
      .all();
    expect(denials).toEqual([{ rule: "never-delete-accounts", n: 1 }]);
  } finally {
    db.close();
  }
}

/** `rebuno exec export ID` in process: the recording it prints. */
async function exportWithCli(url: string, id: string): Promise<Recording> {
  let stdout = "";
  let stderr = "";
  const code = await runCli(["--url", url, "exec", "export", id], {
    stdout: (t) => (stdout += t),
    stderr: (t) => (stderr += t),
    readStdin: async () => "",
    env: {},
    isTTY: false,
  });
  expect(code, stderr).toBe(0);
  return parseRecording(stdout);
}

/** The shop agent with one argument changed: it checks the stock of a different SKU. */
class ChangedShopAgent extends ShopAgent {
  override async run(input: { sku: string; quantity: number }): Promise<string> {
    await this.shop.checkStock({ sku: `${input.sku}-green` });
    return "unreachable offline";
  }
}

/**
 * The done-when: the tour's executions, exported with `rebuno exec export`, hold their
 * steps with results; the shop agent's recording replays offline exactly; one changed argument
 * is reported at that step with both argument sets.
 */
async function exportAndReplay(url: string): Promise<void> {
  const list = (await (await fetch(`${url}/v0/executions?limit=50`)).json()) as {
    executions: { id: string; agent_id: string }[];
  };
  const recordings = await Promise.all(list.executions.map((e) => exportWithCli(url, e.id)));
  expect(recordings.reduce((n, r) => n + r.steps.length, 0)).toBeGreaterThan(10);
  for (const r of recordings) {
    // Every step the event log mentions is in the recording (a researcher turn may have none).
    const logged = new Set(r.events.filter((e) => e.type.startsWith("step.")).map((e) => e.payload.step_id));
    expect(new Set(r.steps.map((x) => x.stepId)), r.execution.agentId).toEqual(logged);
    for (const s of r.steps.filter((x) => x.status === "succeeded")) expect(s).toHaveProperty("result");
  }
  const shop = recordings.find((r) => r.execution.agentId === "shop" && r.execution.status === "completed")!;
  expect(shop.steps.map((s) => [s.target, s.status])).toEqual([
    ["check_stock", "succeeded"],
    ["order_id", "succeeded"],
    ["place_order", "succeeded"],
  ]);
  const options = { secret: "offline", baseUrl: "http://127.0.0.1:1" };
  const followed = await replayRecording(new ShopAgent(options), shop);
  expect(formatReplayReport(followed)).toBe("followed the recording (3 steps replayed)");
  expect(followed.outcome).toEqual({ status: "completed", output: shop.execution.output });

  const changed = await replayRecording(new ChangedShopAgent(options), shop);
  expect(changed.followed).toBe(false);
  expect(changed.divergence).toMatchObject({
    index: 0,
    recorded: { target: "check_stock", args: { sku: "tea" } },
    submitted: { target: "check_stock", args: { sku: "tea-green" } },
    argsDiff: [{ path: "$.sku", recorded: "tea", submitted: "tea-green" }],
  });
  expect(formatReplayReport(changed)).toContain('args $.sku: "tea" → "tea-green"');
}
