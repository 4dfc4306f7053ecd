// SIGKILL of a process writing to a SQLite store mid-commit: executions are created and completed,
// older ones get late events and are deleted, in the same batches as new work. A store reopened on
// the file must hold exactly the state after some iteration n at or past the last acknowledged one
// (the child keeps committing while the parent reads its acks and kills it).
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, expect, test } from "vitest";
import { SqliteStore } from "../src/store/sqlite.js";
import { crashId, crashPlan } from "./crash-plan.js";

const REPO = fileURLToPath(new URL("../../../", import.meta.url));
const CHILD = fileURLToPath(new URL("./crash-child.ts", import.meta.url));
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "rebuno-crash-"));
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
    const plan = crashPlan(i);
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
    const id = crashId(i);
    out.set(id, [store.getExecution(id)?.status, store.lastEventSeq(id), store.listSteps(id).length]);
  }
  return out;
}

const present = (store: SqliteStore, i: number) => store.getExecution(crashId(i)) !== undefined;

/**
 * The last iteration n the file holds, scanning on from iteration `from` (each iteration is one
 * batch, so the file holds iterations 0…n for one n). Iteration n's id is present (only iteration
 * n + 9 may delete it); ids past n were never written; an id ≤ n is absent only if a later
 * iteration deleted it, and deletions are 7 iterations apart, so two absent ids in a row mark the end.
 */
function lastCommitted(store: SqliteStore, from: number): number {
  let n = from;
  while (present(store, n + 1) || present(store, n + 2)) n += present(store, n + 1) ? 1 : 2;
  return n;
}

test("SIGKILL mid-commit while creating, updating and deleting executions: a restart finds every acknowledged write", async () => {
  const path = join(dir, "k.db");
  let start = 0;
  for (const round of [1, 2]) {
    const acked = await runAndKill(path, start, 150 * round);
    const store = new SqliteStore(path);
    try {
      // The child may be several iterations past its last ack seen here when the kill lands.
      const n = lastCommitted(store, start - 1);
      expect(n).toBeGreaterThanOrEqual(acked);
      // Every id 0…n as iterations 0…n left it (deleted ids: no row, no event, no step) ...
      const expected = expectedAfter(n);
      expect(found(store, n)).toEqual(expected);
      // ... and nothing else: no execution past n.
      const alive = [...expected.values()].filter(([status]) => status !== undefined).length;
      expect(store.countExecutions()).toBe(alive);
      expect(store.listExecutions({ limit: 1_000_000 }).length).toBe(alive);
      start = n + 1;
    } finally {
      store.close();
    }
  }
}, 180_000);
