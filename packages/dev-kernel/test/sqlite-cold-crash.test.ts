// SIGKILL of a process writing to a SQLite store with the cold tier on: executions are archived at
// once, brought back by late writes and deleted while cold, in the same batches as new work. A
// store reopened on the file must hold exactly the state after the last acknowledged iteration (or
// the one after it, whose batch may have committed before its acknowledgement was printed).
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, expect, test } from "vitest";
import { SqliteStore } from "../src/store/sqlite.js";
import { coldId, coldPlan } from "./cold-crash-plan.js";
import { hotCount } from "./cold-fixture.js";

const REPO = fileURLToPath(new URL("../../../", import.meta.url));
const CHILD = fileURLToPath(new URL("./cold-crash-child.ts", import.meta.url));
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "rebuno-cold-crash-"));
  // Run the store and the protocol package from source, as restart.test.ts does.
  writeFileSync(
    join(dir, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: { baseUrl: REPO, paths: { "@rebuno/protocol": ["packages/protocol/src/index.ts"] } },
    }),
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Run the child from iteration `start` until it acknowledged `count` more, then SIGKILL it. */
async function runAndKill(path: string, start: number, count: number): Promise<number> {
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", CHILD, path, String(start)], {
    cwd: REPO,
    env: { ...process.env, TSX_TSCONFIG_PATH: join(dir, "tsconfig.json") },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let last = start - 1;
  let stderr = "";
  let buffered = "";
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no ${count} acks in time (last ${last}): ${stderr}`)),
      60_000,
    );
    child.stdout!.on("data", (d: Buffer) => {
      buffered += d.toString();
      const lines = buffered.split("\n");
      buffered = lines.pop()!;
      for (const line of lines) if (line.startsWith("ack ")) last = Number(line.slice(4));
      if (last >= start + count - 1) {
        clearTimeout(timer);
        child.kill("SIGKILL");
        resolve();
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      if (last < start + count - 1) reject(new Error(`child exited ${code}: ${stderr}`));
    });
  });
  await exited;
  return last;
}

/** Per id: [status, last event seq, steps] after iterations 0…n (undefined status: deleted). */
function expectedAfter(n: number): Map<string, [string | undefined, number, number]> {
  const state = new Map<string, [string | undefined, number, number]>();
  for (let i = 0; i <= n; i++) {
    const plan = coldPlan(i);
    state.set(plan.id, ["completed", 2, 1]);
    if (plan.late !== undefined) {
      const [status, seq, steps] = state.get(plan.late)!;
      state.set(plan.late, [status, seq + 1, steps]);
    }
    if (plan.remove !== undefined) state.set(plan.remove, [undefined, 0, 0]);
  }
  return state;
}

function found(store: SqliteStore, n: number): Map<string, [string | undefined, number, number]> {
  const out = new Map<string, [string | undefined, number, number]>();
  for (let i = 0; i <= n; i++) {
    const id = coldId(i);
    const e = store.getExecution(id);
    if (e === undefined && store.lastEventSeq(id) === 0 && i === n) continue; // never written
    out.set(id, [e?.status, store.lastEventSeq(id), store.listSteps(id).length]);
  }
  return out;
}

test("SIGKILL while archiving, thawing and deleting cold executions: a restart finds every acknowledged write", async () => {
  const path = join(dir, "k.db");
  let start = 0;
  for (const round of [1, 2]) {
    const acked = await runAndKill(path, start, 150 * round);
    const store = new SqliteStore(path, { coldAfterMs: Number.POSITIVE_INFINITY });
    try {
      const state = found(store, acked + 1);
      const committedNext = state.has(coldId(acked + 1));
      const expected = expectedAfter(committedNext ? acked + 1 : acked);
      // Ids deleted before being written again never show: compare on what either side names.
      for (const [id, value] of expected)
        expect([id, state.get(id) ?? [undefined, 0, 0]]).toEqual([id, value]);
      const alive = [...expected.values()].filter(([status]) => status !== undefined).length;
      expect(store.countExecutions()).toBe(alive);
      expect(store.listExecutions({ limit: 1_000_000 }).length).toBe(alive);
      expect(hotCount(store)).toBeLessThan(alive); // most were cold when the process died
      start = (committedNext ? acked + 1 : acked) + 1;
    } finally {
      store.close();
    }
  }
}, 180_000);
