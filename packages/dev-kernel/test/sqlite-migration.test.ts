// Files of the redo-log format 3 (written by the store of commit fce9f0f, fixtures/format3) are
// converted to the plain tables at open, in one transaction, and serve everything they held.
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, test } from "vitest";
import { SqliteStore } from "../src/store/sqlite.js";
import { FORMAT_VERSION } from "../src/store/sqlite-schema.js";
import { StoreCorruptError, StoreFormatError } from "../src/store/store-errors.js";
import { dumpStore } from "./format3-dump.js";
import { dispatch, execution, step } from "./store-rows.js";

const FIXTURES = join(import.meta.dirname, "fixtures", "format3");
const DISPATCHES = ["d-done", "d-child", "d-run", "d-s1", "d-s2"];

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A copy of fixture `name` (with its -wal and -seal when it has them) in a new temp dir. */
function fixture(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), "rebuno-format3-"));
  dirs.push(dir);
  for (const suffix of ["", "-wal", "-seal"]) {
    const from = join(FIXTURES, `${name}.db${suffix}`);
    if (existsSync(from)) copyFileSync(from, join(dir, `kernel.db${suffix}`));
  }
  return join(dir, "kernel.db");
}

const sha = (path: string): string => createHash("sha256").update(readFileSync(path)).digest("hex");
const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

describe("format 3 files", () => {
  test.each(["closed", "crashed"])("%s.db converts at open and serves every row it acknowledged", (name) => {
    const path = fixture(name);
    const expected = JSON.parse(readFileSync(join(FIXTURES, `${name}.expected.json`), "utf8"));
    const store = new SqliteStore(path);
    expect(plain(dumpStore(store, DISPATCHES))).toEqual(expected);
    store.close();
    // Again after reopening the converted file, and with sqlite3's eyes: plain tables only.
    const again = new SqliteStore(path);
    expect(plain(dumpStore(again, DISPATCHES))).toEqual(expected);
    again.close();
    const db = new Database(path, { readonly: true });
    const tables = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
      .pluck()
      .all();
    expect(tables).not.toContain("log");
    expect(tables).not.toContain("cold_execution");
    expect(tables).toEqual(
      expect.arrayContaining(["executions", "steps", "events", "approvals", "dispatches"]),
    );
    const steps = db.prepare("SELECT count(*) FROM steps").pluck().get();
    const expectedSteps = (expected.executions as { steps: unknown[] }[]).reduce(
      (n, e) => n + e.steps.length,
      0,
    );
    expect(steps).toBe(expectedSteps);
    db.close();
    // The copy of the old file kept during the conversion is gone once the new one committed.
    expect(readdirSync(join(path, "..")).filter((f) => f.includes("backup"))).toEqual([]);
  });

  test("a damaged format-3 file is refused and left exactly as it was", () => {
    const path = fixture("closed");
    const db = new Database(path);
    db.prepare("UPDATE snapshot SET ops = replace(ops, 'tides', 'tidez')").run();
    db.close();
    const before = sha(path);
    expect(() => new SqliteStore(path)).toThrow(StoreCorruptError);
    expect(sha(path)).toBe(before);
    expect(readdirSync(join(path, "..")).filter((f) => f.includes("backup"))).toEqual([]);
  });

  test("a damaged cold record is refused with StoreCorruptError, and the file is left as it was", () => {
    const path = fixture("closed");
    const db = new Database(path);
    db.prepare("UPDATE cold_execution SET bundle = replace(bundle, 'tides', 'tidez')").run();
    db.close();
    const before = sha(path);
    expect(() => new SqliteStore(path)).toThrow(/cold record of execution e-\w+ fails its checksum/);
    expect(sha(path)).toBe(before);
  });

  test("a format-3 file without its cold tables is refused with StoreFormatError", () => {
    const path = fixture("closed");
    const db = new Database(path);
    db.exec("DROP TABLE cold_dispatch");
    db.close();
    expect(() => new SqliteStore(path)).toThrow(StoreFormatError);
    expect(() => new SqliteStore(path)).toThrow(/lacks its cold_dispatch table/);
  });

  test("a format-3 file missing acknowledged log records is refused (its seal says more)", () => {
    const path = fixture("crashed");
    const db = new Database(path);
    db.prepare("DELETE FROM log WHERE id = (SELECT max(id) FROM log)").run();
    db.close();
    expect(() => new SqliteStore(path)).toThrow(/holds less than the kernel acknowledged/);
  });
});

describe("format versions", () => {
  test("a file from a newer format is refused, naming both versions", () => {
    const dir = mkdtempSync(join(tmpdir(), "rebuno-format-"));
    dirs.push(dir);
    const path = join(dir, "kernel.db");
    new SqliteStore(path).close();
    const db = new Database(path);
    db.prepare("UPDATE meta SET value = ? WHERE key = 'version'").run(String(FORMAT_VERSION + 1));
    db.close();
    const err = (() => {
      try {
        new SqliteStore(path);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(StoreFormatError);
    expect((err as Error).message).toContain(
      `format version ${FORMAT_VERSION + 1}; this one reads up to ${FORMAT_VERSION}`,
    );
  });

  test.each([4, 5])(
    "a format-%i file gets the format-6 tables and indexes at open and serves its rows",
    (version) => {
      const dir = mkdtempSync(join(tmpdir(), "rebuno-format-"));
      dirs.push(dir);
      const path = join(dir, "kernel.db");
      const writer = new SqliteStore(path);
      writer.transaction(() => {
        writer.insertExecution(execution("e1"));
        writer.insertStep(step("e1", "s1"));
        writer.insertStep(step("e1", "s2", { status: "succeeded" }));
        writer.insertDispatch(dispatch("d1", "e1", { status: "in_flight", attempt: 1, lockedAt: 5 }));
        writer.appendEvent("e1", "execution.created", "{}", 1);
        writer.appendEvent("e1", "step.proposed", '{"n":1.0}', 2);
      });
      writer.close();
      const schema = (file: string): unknown[] => {
        const db = new Database(file, { readonly: true });
        const rows = db.prepare("SELECT type, name, sql FROM sqlite_master ORDER BY name").all();
        db.close();
        return rows;
      };
      const current = schema(path);
      // Back to format 5 as main wrote it: events and steps clustered by execution (WITHOUT ROWID).
      const db = new Database(path);
      for (const [name, key] of [
        ["events", "execution_id, event_seq"],
        ["steps", "execution_id, step_id"],
      ] as const) {
        const sql = db.prepare("SELECT sql FROM sqlite_master WHERE name = ?").pluck().get(name) as string;
        expect(sql).not.toContain("WITHOUT ROWID");
        db.exec(`ALTER TABLE ${name} RENAME TO ${name}6; ${sql.replace(`PRIMARY KEY (${key}))`, `PRIMARY KEY (${key})) WITHOUT ROWID`)};
        INSERT INTO ${name} SELECT * FROM ${name}6; DROP TABLE ${name}6;`);
      }
      db.exec(`DROP INDEX IF EXISTS steps_failed_call_idx;
      CREATE INDEX steps_failed_call_idx ON steps (execution_id, kind, target, args_hash) WHERE status = 'failed';
      UPDATE meta SET value = '5' WHERE key = 'version';`);
      expect(
        db
          .prepare("SELECT name FROM sqlite_master WHERE sql LIKE '%WITHOUT ROWID' ORDER BY name")
          .pluck()
          .all(),
      ).toEqual(["dispatch_step_counters", "events", "meta", "steps"]);
      // Back to format 4: two more indexes, one of them on the lease's locked_at.
      if (version === 4) {
        db.exec(`DROP INDEX dispatches_in_flight_idx;
        CREATE INDEX dispatches_in_flight_idx ON dispatches (locked_at) WHERE status = 'in_flight';
        CREATE INDEX steps_status_idx ON steps (execution_id, status);
        UPDATE meta SET value = '4' WHERE key = 'version';`);
      }
      db.close();
      expect(schema(path)).not.toEqual(current);
      const store = new SqliteStore(path);
      expect(store.listStepsWithStatus("e1", ["executing"]).map((s) => s.stepId)).toEqual(["s1"]);
      expect(store.listExpiredLeases(1010).map((d) => d.id)).toEqual(["d1"]);
      expect(store.listExpiredLeases(1000)).toEqual([]);
      expect(store.listEvents("e1", 0, 10).map((e) => [e.seq, e.payloadJson])).toEqual([
        [1, "{}"],
        [2, '{"n":1.0}'],
      ]);
      expect(store.appendEvent("e1", "step.allowed", "{}", 3)).toBe(3);
      store.close();
      expect(schema(path)).toEqual(current);
      const check = new Database(path, { readonly: true });
      expect(check.prepare("SELECT value FROM meta WHERE key = 'version'").pluck().get()).toBe(
        String(FORMAT_VERSION),
      );
      check.close();
    },
  );
});
