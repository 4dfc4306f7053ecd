// Compaction of a running SQLite store is written a row per event-loop turn: the store goes on
// serving and committing in between, and a crash at any of those turns restarts to exactly the
// state of that moment (never to a half-written snapshot).
import { describe, expect, test } from "vitest";
import { RUN_COMPACT_MIN_CHARS } from "../src/store/durable-memory.js";
import { SqliteStore } from "../src/store/sqlite.js";
import { COMPACTION_ROW_CHARS } from "../src/store/sqlite-compaction.js";
import { fileContents, observe, restartState } from "./sqlite-files.js";
import { newPath } from "./sqlite-fixture.js";

const turn = () => new Promise((resolve) => setImmediate(resolve));

/** Whether the store has a compaction in progress (its rows are not all written yet). */
function compacting(store: SqliteStore): boolean {
  return (store as unknown as { state: { compacting?: unknown } }).state.compacting !== undefined;
}

function agent(store: SqliteStore, id: string, url: string, at: number): void {
  store.putAgent({ id, webhookUrl: url, secret: "s", registeredAt: at });
}

describe("compaction while running", () => {
  test("is spread over turns; writes between its rows are durable; a crash at any turn loses nothing", async () => {
    const path = newPath();
    const store = new SqliteStore(path);
    // A state of several snapshot rows: 8 agents of 0.9 rows each.
    for (let i = 0; i < 8; i++)
      agent(store, `big${i}`, `http://${"b".repeat(COMPACTION_ROW_CHARS * 0.9)}/${i}`, i);
    await store.whenDurable();
    // Then a log long enough to compact: one agent rewritten with a 1 MiB URL.
    const huge = "x".repeat(1 << 20);
    let round = 0;
    while (!compacting(store) && round < RUN_COMPACT_MIN_CHARS / huge.length + 10) {
      agent(store, "a", `http://${huge}/${round++}`, round);
      await store.whenDurable();
    }
    expect(compacting(store)).toBe(true);

    let turnsWhileCompacting = 0;
    for (let i = 0; i < 200 && compacting(store); i++) {
      turnsWhileCompacting++;
      agent(store, `live${i}`, "http://live.test/", i); // served and committed mid-compaction
      await store.whenDurable();
      expect(restartState(path)).toEqual(observe(store)); // a SIGKILL now loses nothing
      await turn();
    }
    expect(compacting(store)).toBe(false);
    expect(turnsWhileCompacting).toBeGreaterThanOrEqual(4); // not done in one blocking go

    // The old generation's rows are garbage, deleted a few per turn; the log keeps only what came
    // after the snapshot's base.
    for (let i = 0; i < 1000 && fileContents(path).garbageRows > 0; i++) await turn();
    const contents = fileContents(path);
    expect(contents).toMatchObject({ garbageRows: 0 });
    expect(contents.snapshotRows).toBeGreaterThanOrEqual(8);
    expect(contents.logRows).toBeLessThan(turnsWhileCompacting + 2);
    expect(restartState(path)).toEqual(observe(store));
    const state = observe(store);
    store.close();
    const reopened = new SqliteStore(path);
    expect(observe(reopened)).toEqual(state);
    reopened.close();
  }, 120_000);

  test("close during a compaction finishes it at once; the rows written so far are not kept twice", async () => {
    const path = newPath();
    const store = new SqliteStore(path);
    for (let i = 0; i < 8; i++)
      agent(store, `big${i}`, `http://${"b".repeat(COMPACTION_ROW_CHARS * 0.9)}/${i}`, i);
    const huge = "x".repeat(1 << 20);
    for (let round = 0; !compacting(store) && round < RUN_COMPACT_MIN_CHARS / huge.length + 10; round++) {
      agent(store, "a", `http://${huge}/${round}`, round);
      await store.whenDurable();
    }
    await turn(); // a row or two of the background compaction
    expect(compacting(store)).toBe(true);
    const state = observe(store);
    store.close();
    expect(fileContents(path)).toMatchObject({ garbageRows: 0, logRows: 0 });
    const reopened = new SqliteStore(path);
    expect(observe(reopened)).toEqual(state);
    reopened.close();
  }, 120_000);
});
