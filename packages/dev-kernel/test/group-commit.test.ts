// SQLite group commit (src/store/sqlite-connection.ts): the transactions of one event-loop turn
// commit together, as one SQLite transaction; nothing is acknowledged — no HTTP answer, no webhook —
// before the commit covering it. The observer is a crash copy of the file (test/sqlite-files.ts):
// what it does not hold, a kernel restarted after a SIGKILL would not find.
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { MemoryStore } from "../src/store/memory.js";
import { SqliteStore } from "../src/store/sqlite.js";
import { GROUP_COMMIT_MAX } from "../src/store/sqlite-connection.js";
import type { AgentRow } from "../src/store/types.js";
import { DEFAULT_AGENTS, Harness } from "./harness.js";
import { fileContents, restartState, tempDir } from "./sqlite-files.js";

let path: string;
let store: SqliteStore;

beforeEach(() => {
  path = join(tempDir(), "kernel.db");
  store = new SqliteStore(path);
});

afterEach(() => {
  store.close();
});

const agent = (id: string): AgentRow => ({ id, webhookUrl: "http://a.test/", secret: "s", registeredAt: 1 });

/** Commits of the file since the store opened (opening itself commits once). */
function commits(): number {
  return fileContents(path).commits - 1;
}

/** The agent ids the file holds. */
function storedAgents(): readonly string[] {
  return fileContents(path).agents;
}

describe("SqliteStore group commit", () => {
  test("a transaction that reads, then writes and throws, undoes only its own writes", async () => {
    store.transaction(() => store.putAgent(agent("a")));
    // Reads only and throws: nothing of the batch is undone.
    expect(() =>
      store.transaction(() => {
        store.getAgent("a");
        throw new Error("read-only boom");
      }),
    ).toThrow("read-only boom");
    // Its savepoint is taken at its first write, after the read: the write is undone, "a" stays.
    expect(() =>
      store.transaction(() => {
        expect(store.getAgent("a")?.id).toBe("a");
        store.putAgent(agent("b"));
        store.deleteAgent("a");
        throw new Error("boom");
      }),
    ).toThrow("boom");
    store.transaction(() => store.putAgent(agent("c")));
    expect(store.listAgents().map((a) => a.id)).toEqual(["a", "c"]);
    await store.whenDurable();
    expect(storedAgents()).toEqual(["a", "c"]);
  });

  test("one turn's transactions are written as one commit; a throwing one leaves nothing", async () => {
    store.transaction(() => store.putAgent(agent("a")));
    expect(() =>
      store.transaction(() => {
        store.putAgent(agent("b"));
        throw new Error("boom");
      }),
    ).toThrow("boom");
    store.transaction(() => store.transaction(() => store.putAgent(agent("c"))));
    store.putAgent(agent("d")); // outside transaction(): a transaction of its own
    // Visible at once, not yet in the file.
    expect(store.listAgents().map((a) => a.id)).toEqual(["a", "c", "d"]);
    expect(commits()).toBe(0);
    expect(storedAgents()).toEqual([]);
    const durable = store.whenDurable();
    let settled = false;
    void durable.then(() => {
      settled = true;
    });
    await Promise.resolve();
    expect(settled).toBe(false);
    expect(commits()).toBe(0);
    await durable;
    expect(commits()).toBe(1);
    expect(storedAgents()).toEqual(["a", "c", "d"]);
    // Nothing pending: resolved at once, and a later batch gets a commit of its own.
    await store.whenDurable();
    store.transaction(() => store.putAgent(agent("e")));
    expect(storedAgents()).toEqual(["a", "c", "d"]);
    await store.whenDurable();
    expect(commits()).toBe(2);
    expect(storedAgents()).toEqual(["a", "c", "d", "e"]);
  });

  test("a transaction that throws after a committed batch leaves the file as it was", async () => {
    store.transaction(() => store.putAgent(agent("a")));
    await store.whenDurable();
    const before = fileContents(path);
    expect(() =>
      store.transaction(() => {
        store.putAgent({ ...agent("a"), secret: "changed" });
        store.deleteAgent("a");
        throw new Error("boom");
      }),
    ).toThrow("boom");
    await store.whenDurable();
    expect(fileContents(path)).toEqual(before);
    expect(store.getAgent("a")?.secret).toBe("s");
  });

  test("read-only transactions write nothing and never wait", async () => {
    store.transaction(() => store.getAgent("a"));
    await store.whenDurable();
    expect(commits()).toBe(0);
  });

  test(`a batch is written as soon as it holds ${GROUP_COMMIT_MAX} transactions`, async () => {
    for (let i = 0; i < GROUP_COMMIT_MAX; i++) store.transaction(() => store.putAgent(agent(`x${i}`)));
    expect(commits()).toBe(1);
    expect(storedAgents()).toHaveLength(GROUP_COMMIT_MAX);
    store.transaction(() => store.putAgent(agent("y")));
    expect(storedAgents()).toHaveLength(GROUP_COMMIT_MAX);
    await store.whenDurable();
    expect(storedAgents()).toHaveLength(GROUP_COMMIT_MAX + 1);
  });

  test("close() commits the open batch", async () => {
    store.transaction(() => store.putAgent(agent("a")));
    const durable = store.whenDurable();
    store.close();
    await durable;
    expect(fileContents(path)).toEqual({ commits: 2, agents: ["a"] });
    expect(restartState(path).agents).toEqual([agent("a")]);
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
            const { execution_id: id, dispatch_id: dispatchId } = JSON.parse(await req.text()) as {
              execution_id: string;
              dispatch_id: string;
            };
            const found = restartState(path, { dispatchIds: [dispatchId] }).dispatches as
              | ({ status: string } | undefined)[]
              | undefined;
            seenAtWebhook.push(`${id}:${found?.[0]?.status ?? "missing"}`);
            return new Response(null, { status: 200 });
          },
        },
        agents: DEFAULT_AGENTS,
      },
    );
    // Concurrent creates land in one batch; each answer must find its execution already on disk.
    const answers = await Promise.all(
      Array.from({ length: 20 }, async () => {
        const r = await h.client("POST", "/v0/executions", { agent_id: "alpha" });
        const onDisk = (restartState(path).executions as { id: string }[]).some((e) => e.id === r.body.id);
        return { status: r.status, id: r.body.id as string, onDisk };
      }),
    );
    expect(answers.every((a) => a.status === 201 && a.onDisk)).toBe(true);
    await h.kernel.tick();
    // The webhook of each execution was sent only after its claim (in_flight) was on disk.
    expect(seenAtWebhook.sort()).toEqual(answers.map((a) => `${a.id}:in_flight`).sort());
  });
});
