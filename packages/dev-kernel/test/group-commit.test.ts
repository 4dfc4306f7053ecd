// SQLite group commit (src/store/group-commit.ts): transactions of one event-loop turn share one
// SQLite transaction, each under its own savepoint; nothing is acknowledged — no HTTP answer, no
// webhook — before the commit covering it. A second connection on the same file plays the part of
// the process that restarts after a SIGKILL: what it cannot see would be lost.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { GROUP_COMMIT_MAX } from "../src/store/group-commit.js";
import { MemoryStore } from "../src/store/memory.js";
import { SqliteStore } from "../src/store/sqlite.js";
import type { AgentRow } from "../src/store/types.js";
import { DEFAULT_AGENTS, Harness } from "./harness.js";

let dir: string;
let path: string;
let store: SqliteStore;
let observer: Database.Database;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "rebuno-group-"));
  path = join(dir, "kernel.db");
  store = new SqliteStore(path);
  observer = new Database(path, { readonly: true });
});

afterEach(() => {
  observer.close();
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

const agent = (id: string): AgentRow => ({ id, webhookUrl: "http://a.test/", secret: "s", registeredAt: 1 });

/** Agent ids a separate connection sees (i.e. what is committed). */
function committedAgents(): string[] {
  return (observer.prepare("SELECT id FROM agents ORDER BY id").all() as { id: string }[]).map((r) => r.id);
}

describe("SqliteStore group commit", () => {
  test("one turn's transactions commit together; a throwing one rolls back only its own writes", async () => {
    store.transaction(() => store.putAgent(agent("a")));
    expect(() =>
      store.transaction(() => {
        store.putAgent(agent("b"));
        throw new Error("boom");
      }),
    ).toThrow("boom");
    store.transaction(() => store.transaction(() => store.putAgent(agent("c"))));
    // Visible to this connection at once, not yet committed.
    expect(store.getAgent("a")).toBeDefined();
    expect(store.getAgent("b")).toBeUndefined();
    expect(committedAgents()).toEqual([]);
    const durable = store.whenDurable();
    let settled = false;
    void durable.then(() => {
      settled = true;
    });
    await Promise.resolve();
    expect(settled).toBe(false);
    await durable;
    expect(committedAgents()).toEqual(["a", "c"]);
    // Nothing pending: resolved at once, and a later batch gets its own commit.
    await store.whenDurable();
    store.transaction(() => store.putAgent(agent("d")));
    expect(committedAgents()).toEqual(["a", "c"]);
    await store.whenDurable();
    expect(committedAgents()).toEqual(["a", "c", "d"]);
  });

  test(`a batch commits as soon as it holds ${GROUP_COMMIT_MAX} transactions`, () => {
    for (let i = 0; i < GROUP_COMMIT_MAX; i++) store.transaction(() => store.putAgent(agent(`x${i}`)));
    expect(committedAgents()).toHaveLength(GROUP_COMMIT_MAX);
    store.transaction(() => store.putAgent(agent("y")));
    expect(committedAgents()).toHaveLength(GROUP_COMMIT_MAX);
  });

  test("close() commits the open batch", async () => {
    store.transaction(() => store.putAgent(agent("a")));
    const durable = store.whenDurable();
    store.close();
    await durable;
    expect(committedAgents()).toEqual(["a"]);
  });

  test("the memory store is always durable", async () => {
    const memory = new MemoryStore();
    memory.transaction(() => memory.putAgent(agent("a")));
    await expect(memory.whenDurable()).resolves.toBeUndefined();
  });
});

describe("the kernel acknowledges only committed writes (SQLite)", () => {
  let h: Harness;
  afterEach(async () => {
    await h.close();
  });

  test("every answer and every webhook comes after the commit of what it acknowledges", async () => {
    const seenAtWebhook: string[] = [];
    h = await Harness.start(
      { name: "sqlite", create: () => store },
      {
        dispatch: {
          concurrency: 32,
          fetch: async (req) => {
            const { execution_id: id } = JSON.parse(await req.text()) as { execution_id: string };
            const row = observer.prepare("SELECT status FROM dispatches WHERE execution_id = ?").get(id) as
              | { status: string }
              | undefined;
            seenAtWebhook.push(`${id}:${row?.status ?? "missing"}`);
            return new Response(null, { status: 200 });
          },
        },
        agents: DEFAULT_AGENTS,
      },
    );
    // Concurrent creates land in one batch; each answer must find its row already committed.
    const answers = await Promise.all(
      Array.from({ length: 20 }, async () => {
        const r = await h.client("POST", "/v0/executions", { agent_id: "alpha" });
        const committed = observer.prepare("SELECT id FROM executions WHERE id = ?").get(r.body.id);
        return { status: r.status, id: r.body.id as string, committed: committed !== undefined };
      }),
    );
    expect(answers.every((a) => a.status === 201 && a.committed)).toBe(true);
    await h.kernel.tick();
    // The webhook of each execution was sent only after its claim (in_flight) was committed.
    expect(seenAtWebhook.sort()).toEqual(answers.map((a) => `${a.id}:in_flight`).sort());
  });
});
