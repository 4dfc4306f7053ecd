// Files the SQLite store must refuse rather than serve: not a store at all (empty, random bytes,
// another application's database), a store with a broken page, a store missing
// acknowledged records (a damaged or cut WAL), a file this process may not write. Each refusal is a
// typed error naming the file, leaves the file as it was, and gives `rebuno-dev` its own exit code.
// Damage inside a stored value (format 5 has no per-row checksum): in a WAL frame its checksum
// fails (the seal reports the lost commits); in the file, a JSON column that no longer parses is
// refused when its row is read (`store_corrupt` naming the row, the other rows served); a value that
// still parses cannot be detected (docs/dev-kernel.md, "What cannot be detected").
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync,
  existsSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import {
  bundleRebunoDev,
  ProcessGroup,
  type RebunoDevBundle,
  rebunoDevCommand,
  startRebunoDev,
} from "@rebuno/test-kit";
import Database from "better-sqlite3";
import { afterAll, describe, expect, test } from "vitest";
import { startDevKernel } from "../src/kernel.js";
import { SqliteStore } from "../src/store/sqlite.js";
import { StoreRowCorruptError } from "../src/store/sqlite-json.js";
import { FORMAT_VERSION } from "../src/store/sqlite-schema.js";
import {
  STORE_EXIT_CODES,
  StoreCorruptError,
  StoreFormatError,
  StoreReadOnlyError,
} from "../src/store/store-errors.js";
import { crashCopy, tempDir } from "./sqlite-files.js";
import { newPath } from "./sqlite-fixture.js";
import { dispatch, execution, step } from "./store-rows.js";

const AS_ROOT = process.getuid?.() === 0;
/** Root may write any file: the read-only cases run the kernel as `nobody` then. */
const NOBODY = 65534;

function agent(store: SqliteStore, id: string): void {
  store.putAgent({ id, webhookUrl: "http://a.test/", secret: "s", registeredAt: 1 });
}

function opening(path: string, options: { quickCheck?: boolean } = {}): unknown {
  try {
    new SqliteStore(path, options).close();
  } catch (err) {
    return err;
  }
  throw new Error(`${path} opened`);
}

/** Hashes of the file and its side files, to show a refusal changed nothing. */
function fingerprint(path: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const side of ["", "-wal", "-seal"]) {
    if (existsSync(path + side)) {
      out[side || "db"] = createHash("sha256")
        .update(readFileSync(path + side))
        .digest("hex");
    }
  }
  return out;
}

/** Break page 3 of the file: its type byte becomes one no b-tree page has. */
function breakPage(path: string): void {
  const bytes = readFileSync(path);
  const pageSize = bytes.readUInt16BE(16);
  expect(bytes.length / pageSize).toBeGreaterThan(4);
  bytes[pageSize * 2] = 0x07;
  writeFileSync(path, bytes);
}

/**
 * XOR one byte of `path` at `offset` within every copy of `marker`: the live row, and older copies
 * that freed pages may still hold (a flip there alone would change nothing the store reads).
 */
function flipByteIn(path: string, marker: string, offset: number, xor: number): number {
  const bytes = readFileSync(path);
  let flipped = 0;
  for (let at = bytes.indexOf(marker); at >= 0; at = bytes.indexOf(marker, at + 1)) {
    bytes[at + offset] = bytes[at + offset]! ^ xor;
    flipped++;
  }
  expect(flipped, `${marker} in ${path}`).toBeGreaterThan(0);
  writeFileSync(path, bytes);
  return flipped;
}

const BAD = "0193a000-0000-7000-8000-0000000000b1";
const GOOD = "0193a000-0000-7000-8000-0000000000a1";

/**
 * A closed store (its WAL checkpointed into the file) holding agent `a`, execution GOOD and
 * execution BAD with an event and a step, each with a JSON value naming `marker`.
 */
async function storeWithValues(marker: string): Promise<string> {
  const path = newPath();
  const store = new SqliteStore(path);
  agent(store, "a");
  const now = Date.now(); // recent: the kernel's retention sweep leaves them alone
  store.transaction(() => {
    const row = { status: "completed", createdAt: now, updatedAt: now } as const;
    store.insertExecution(execution(GOOD, { ...row, inputJson: '{"n":1}' }));
    store.insertExecution(execution(BAD, { ...row, inputJson: `{"input":"${marker}","n":12345}` }));
    store.appendEvent(BAD, "execution.created", `{"payload":"${marker}"}`, now);
    store.insertStep(step(BAD, "s1", { argsJson: `{"args":"${marker}"}`, createdAt: now }));
  });
  await store.whenDurable();
  store.close();
  expect(existsSync(`${path}-wal`)).toBe(false); // everything is in the file itself
  return path;
}

/** A closed store holding agents `a0`…`a{n-1}` and one agent named `marker`. */
async function storeWith(marker: string, n = 3): Promise<string> {
  const path = newPath();
  const store = new SqliteStore(path);
  for (let i = 0; i < n; i++) agent(store, `a${i}`);
  agent(store, marker);
  await store.whenDurable();
  store.close();
  return path;
}

/** The bundled command for runs as another user, built once per file (see bundleRebunoDev). */
let unprivileged: Promise<RebunoDevBundle> | undefined;
const unprivilegedCli = async () => await (unprivileged ??= bundleRebunoDev());
/** Kernels started to serve (not to refuse), killed after the file's tests. */
const serving = new ProcessGroup();
afterAll(async () => {
  await serving.killAll();
  await (await unprivileged)?.dispose();
});

/** What `read` throws (it must throw). */
function thrown(read: () => unknown): Error {
  try {
    read();
  } catch (err) {
    return err as Error;
  }
  throw new Error("the read succeeded");
}

/** Run `rebuno-dev` on the file until it exits (it is expected to refuse to start). */
async function cli(path: string, uid?: number): Promise<{ code: number | null; stderr: string }> {
  const dir = tempDir();
  chmodSync(dir, 0o755);
  const config = join(dir, "dev.yaml");
  writeFileSync(config, "agents: []\n", { mode: 0o644 });
  const args = ["--config", config, "--listen", "127.0.0.1:0", "--store", `sqlite:${path}`];
  // Its own spawn, for the `uid` (a file the kernel's user may not write). Another user may not be
  // able to read this checkout (a private folder): it runs a bundled copy of the command.
  const command =
    uid === undefined
      ? rebunoDevCommand(args)
      : await unprivilegedCli().then((b) => ({ command: b.node, args: [b.path, ...args], env: {} }));
  const child = spawn(command.command, command.args, {
    env: { ...process.env, ...command.env },
    stdio: ["ignore", "pipe", "pipe"],
    ...(uid === undefined ? {} : { uid, gid: uid }),
  });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  child.stdout.resume();
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000); // it must refuse, not serve
  // A child that cannot be started at all fails the test with its reason, not a timeout.
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once("exit", resolve);
    child.once("error", reject);
  });
  clearTimeout(timer);
  return { code, stderr };
}

describe("files that are not a store", () => {
  test("a zero-length file is refused, not taken for a new store, and stays empty", async () => {
    const path = newPath();
    writeFileSync(path, "");
    const err = opening(path);
    expect(StoreFormatError.isInstance(err)).toBe(true);
    expect(err).toMatchObject({ code: "store_format", path });
    expect((err as Error).message).toMatch(new RegExp(`^${path} is empty \\(0 bytes\\)`));
    expect(statSync(path).size).toBe(0);
    expect(existsSync(`${path}-wal`)).toBe(false);
    const run = await cli(path);
    expect(run.code).toBe(STORE_EXIT_CODES.store_format);
    expect(run.stderr).toContain(`rebuno-dev: ${path} is empty (0 bytes)`);
  }, 90_000);

  test("an empty SQLite database of another application", () => {
    const path = newPath();
    const db = new Database(path);
    db.pragma("user_version = 7"); // a valid database file with no tables
    db.close();
    const before = fingerprint(path);
    expect(opening(path)).toSatisfy(
      (e) =>
        StoreFormatError.isInstance(e) &&
        e.path === path &&
        e.message.startsWith(`${path} is not a rebuno-dev store (it holds no tables)`),
    );
    expect(fingerprint(path)).toEqual(before);
  });

  test("random bytes (seeded)", () => {
    const path = newPath();
    let x = 0x9e3779b9; // xorshift32, seed printed by the assertion message on failure
    const bytes = Buffer.alloc(64 * 1024);
    for (let i = 0; i < bytes.length; i++) {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      bytes[i] = x & 0xff;
    }
    writeFileSync(path, bytes);
    const err = opening(path);
    expect(StoreFormatError.isInstance(err), `seed 0x9e3779b9: ${String(err)}`).toBe(true);
    expect((err as Error).message).toMatch(new RegExp(`^${path} is not an SQLite database`));
    expect(readFileSync(path).equals(bytes)).toBe(true);
  });

  test("a new store is created complete, with no temporary file left behind", () => {
    const dir = tempDir();
    const path = join(dir, "k.db");
    new SqliteStore(path).close();
    expect(readdirSync(dir).sort()).toEqual(["k.db", "k.db-seal"]);
  });

  test("a new store beside the seal of a deleted one starts empty (the old seal is dropped)", async () => {
    const path = await storeWith("old-agent");
    rmSync(path);
    const store = new SqliteStore(path);
    expect(store.listAgents()).toEqual([]);
    store.close();
    const reopened = new SqliteStore(path);
    expect(reopened.listAgents()).toEqual([]);
    reopened.close();
  });
});

describe("damaged stores", () => {
  test("a broken page is found by SQLite's quick_check at open", async () => {
    const path = await storeWith("x", 3000); // several pages
    breakPage(path);
    const err = opening(path);
    expect(StoreCorruptError.isInstance(err)).toBe(true);
    expect((err as Error).message).toMatch(new RegExp(`^${path} is damaged: SQLite`));
  });

  test.each([
    ["cut short", (wal: string) => truncateSync(wal, statSync(wal).size - 100)],
    [
      "with a flipped byte in its last frame",
      (wal: string) => {
        const bytes = readFileSync(wal);
        bytes[bytes.length - 50] = bytes[bytes.length - 50]! ^ 0xff;
        writeFileSync(wal, bytes);
      },
    ],
  ])("a WAL %s loses acknowledged records: refused, and the WAL is kept", async (_, damage) => {
    const path = newPath();
    const store = new SqliteStore(path);
    for (let i = 0; i < 5; i++) {
      agent(store, `a${i}`);
      await store.whenDurable(); // each one acknowledged, each its own commit
    }
    const copy = crashCopy(path); // SIGKILL now: all five are in the WAL, none checkpointed
    store.close();
    damage(`${copy}-wal`);
    const before = fingerprint(copy);
    const err = opening(copy);
    expect(fingerprint(copy)).toEqual(before); // nothing checkpointed into the file
    expect(StoreCorruptError.isInstance(err)).toBe(true);
    expect(err).toMatchObject({ code: "store_corrupt", path: copy });
    const message = (err as Error).message;
    expect(message).toMatch(
      new RegExp(
        // Opening committed once, then each of the five agents.
        `^${copy} holds less than the kernel acknowledged \\(it holds \\d+ commits, but 6 were acknowledged`,
      ),
    );
    const kept = /its WAL as found was copied to (\S+)\)$/.exec(message)?.[1];
    expect(kept !== undefined && existsSync(kept)).toBe(true);
    // The refusal is stable: a second start refuses too (the seal still says 5).
    expect(StoreCorruptError.isInstance(opening(copy))).toBe(true);
    // Without the seal the loss is invisible: SQLite serves the records before the damage.
    rmSync(`${copy}-seal`);
    const accepted = new SqliteStore(copy);
    expect(accepted.listAgents().length).toBeLessThan(5);
    accepted.close();
  });

  test("a flipped byte in a row's record header (a column's serial type) is found by quick_check at open, the file unchanged", async () => {
    const path = await storeWithValues("header");
    const bytes = readFileSync(path);
    // The executions row's record header: id (36-character text: serial type 13 + 2 × 36), agent_id
    // ("a": 15), agent_version (NULL: 0), input (text: 13 + 2 × its length).
    const input = '{"input":"header","n":12345}';
    const header = Buffer.from([13 + 2 * BAD.length, 15, 0, 13 + 2 * input.length]);
    const at = bytes.indexOf(header);
    expect(at).toBeGreaterThan(0);
    expect(bytes.indexOf(BAD, at)).toBeGreaterThan(at); // the row's id follows its header
    bytes[at + 3] = bytes[at + 3]! ^ 0x02; // input one byte longer: every later column shifts
    writeFileSync(path, bytes);
    const before = fingerprint(path);
    const err = opening(path);
    expect(StoreCorruptError.isInstance(err)).toBe(true);
    expect(err).toMatchObject({ code: "store_corrupt", path });
    expect((err as Error).message).toMatch(new RegExp(`^${path} is damaged: SQLite's quick_check reports `));
    expect(fingerprint(path)).toEqual(before);
  });

  test("a flipped byte inside a JSON value in the file: quick_check passes; reading its row is refused as store_corrupt naming the table and key; the other rows are served and nothing is written", async () => {
    const path = await storeWithValues("value-in-file");
    // ':' → ';' in the execution's input, the event's payload and the step's args.
    expect(flipByteIn(path, ':"value-in-file"', 0, 0x01)).toBeGreaterThanOrEqual(3);
    const store = new SqliteStore(path); // quick_check (on by default) finds nothing to refuse
    try {
      const before = fingerprint(path);
      expect(store.getExecution(GOOD)?.inputJson).toBe('{"n":1}');
      expect(store.getAgent("a")?.webhookUrl).toBe("http://a.test/");
      const reads = [
        [() => store.getExecution(BAD), "executions", { id: BAD }, "input"],
        [() => store.listEvents(BAD, 0, 10), "events", { execution_id: BAD, event_seq: 1 }, "payload"],
        [() => store.listSteps(BAD), "steps", { execution_id: BAD, step_id: "s1" }, "args"],
        [() => store.getStep(BAD, "s1"), "steps", { execution_id: BAD, step_id: "s1" }, "args"],
      ] as const;
      for (const [read, table, key, column] of reads) {
        const err = thrown(read);
        expect(StoreRowCorruptError.isInstance(err), String(err)).toBe(true);
        expect(StoreCorruptError.isInstance(err)).toBe(true);
        expect(err).toMatchObject({ code: "store_corrupt", path, table, key, column });
        const keyText = Object.entries(key)
          .map(([k, v]) => `${k}=${v}`)
          .join(" ");
        const row = `${table} row ${keyText} has invalid JSON in its ${column} column`;
        expect(err).toMatchObject({ row });
        expect(err.message.startsWith(`${path} is damaged: ${row} (`), err.message).toBe(true);
        expect(err.message).toMatch(/\)\. The other rows are served; restore the file from a backup/);
      }
      // Refused again on the next read (nothing was cached), and the refusals wrote nothing.
      expect(StoreRowCorruptError.isInstance(thrown(() => store.getExecution(BAD)))).toBe(true);
      await store.whenDurable();
      expect(fingerprint(path)).toEqual(before);
    } finally {
      store.close();
    }
    expect(readFileSync(path).includes(';"value-in-file"')).toBe(true); // the row is left as found
  });

  test("a flipped byte inside a value that stays valid JSON in the file cannot be detected: the changed value is served", async () => {
    const path = await storeWithValues("still-valid");
    flipByteIn(path, '"n":12345', 5, 0x01); // '2' → '3'
    const store = new SqliteStore(path);
    try {
      expect(store.getExecution(BAD)?.inputJson).toBe('{"input":"still-valid","n":13345}');
    } finally {
      store.close();
    }
  });

  test("a flipped byte inside a value in a WAL frame fails the frame's checksum: refused as losing the acknowledged commits from that frame on, nothing changed", async () => {
    const path = newPath();
    const store = new SqliteStore(path);
    agent(store, "a");
    await store.whenDurable();
    const now = Date.now();
    store.insertExecution(
      execution(BAD, { inputJson: '{"input":"value-in-wal"}', createdAt: now, updatedAt: now }),
    );
    await store.whenDurable(); // acknowledged, in its own commit
    for (let i = 0; i < 3; i++) {
      agent(store, `later${i}`);
      await store.whenDurable();
    }
    const copy = crashCopy(path); // SIGKILL now: every commit in the WAL, none checkpointed
    store.close();
    expect(readFileSync(copy).includes("value-in-wal")).toBe(false);
    // 'v' → 'w': the JSON would still parse, but the frame's checksum no longer matches.
    flipByteIn(`${copy}-wal`, '"value-in-wal"', 1, 0x01);
    const before = fingerprint(copy);
    const err = opening(copy);
    expect(StoreCorruptError.isInstance(err)).toBe(true);
    expect(err).toMatchObject({ code: "store_corrupt", path: copy });
    // Opening, agent a, then the execution's commit: recovery stops before its frame.
    expect((err as Error).message).toMatch(
      new RegExp(
        `^${copy} holds less than the kernel acknowledged \\(it holds 2 commits, but 6 were acknowledged`,
      ),
    );
    expect(fingerprint(copy)).toEqual(before);
    expect(existsSync(`${copy}-shm`)).toBe(false);
  });

  test("rebuno-dev answers a request for a damaged row with the store_corrupt envelope and keeps serving", async () => {
    const path = await storeWithValues("value-for-cli");
    flipByteIn(path, ':"value-for-cli"', 0, 0x01);
    const kernel = await startRebunoDev({
      store: `sqlite:${path}`,
      args: ["--quiet", "--no-console"],
      group: serving,
    });
    const get = async (target: string) => {
      const res = await fetch(`${kernel.url}${target}`);
      const text = await res.text();
      return { status: res.status, type: res.headers.get("content-type"), text };
    };
    const envelope = {
      code: "store_corrupt",
      message: `store corrupt: executions row id=${BAD} has invalid JSON in its input column`,
    };
    for (const target of [`/v0/executions/${BAD}`, `/v0/executions/${BAD}/events`, "/v0/executions"]) {
      const bad = await get(target);
      expect(bad.status, target).toBe(500);
      expect(bad.type).toBe("application/json; charset=utf-8");
      expect(JSON.parse(bad.text), target).toEqual(envelope);
    }
    const good = await get(`/v0/executions/${GOOD}`);
    expect(good.status).toBe(200);
    expect(JSON.parse(good.text)).toMatchObject({ id: GOOD, input: { n: 1 }, status: "completed" });
    expect((await get("/v0/health")).status).toBe(200);
    expect(JSON.parse((await get(`/v0/executions/${BAD}`)).text)).toEqual(envelope);
    expect(kernel.process.running).toBe(true);
    // The operator's report names the file and the row.
    expect(kernel.process.stderr()).toContain(
      `rebuno-dev: http: StoreRowCorruptError: ${path} is damaged: executions row id=${BAD} has invalid JSON in its input column`,
    );
    await kernel.process.kill("SIGTERM");
  }, 90_000);

  test("a damaged row does not stop the kernel's background work: the other execution is delivered, the damaged one reported once", async () => {
    const path = newPath();
    const store = new SqliteStore(path);
    agent(store, "a");
    const now = Date.now();
    store.transaction(() => {
      for (const [id, inputJson] of [
        [BAD, '{"input":"value-for-dispatch"}'],
        [GOOD, '{"n":1}'],
      ] as const) {
        store.insertExecution(
          execution(id, { status: "pending", inputJson, createdAt: now, updatedAt: now }),
        );
        // The damaged one is due first: it used to stop every pass of the delivery loop there.
        store.insertDispatch(
          dispatch(`d-${id}`, id, { nextAttemptAt: id === BAD ? now - 1000 : now, createdAt: now }),
        );
      }
    });
    await store.whenDurable();
    store.close();
    flipByteIn(path, ':"value-for-dispatch"', 0, 0x01);
    const delivered: string[] = [];
    const reports: unknown[] = [];
    const kernel = await startDevKernel({
      store: { sqlite: path },
      dispatch: {
        fetch: async (request) => {
          delivered.push((JSON.parse(await request.text()) as { execution_id: string }).execution_id);
          return new Response(null, { status: 200 });
        },
      },
      onError: (err) => reports.push(err),
    });
    try {
      for (let i = 0; i < 5; i++) await kernel.tick();
      expect(delivered).toEqual([GOOD]);
      expect(reports).toHaveLength(1);
      expect(StoreRowCorruptError.isInstance(reports[0])).toBe(true);
      expect(reports[0]).toMatchObject({
        code: "store_corrupt",
        table: "executions",
        key: { id: BAD },
        column: "input",
      });
    } finally {
      await kernel.close();
    }
  });

  test("rebuno-dev exits with the corrupt-store code", async () => {
    const path = await storeWith("x", 3000);
    breakPage(path);
    const run = await cli(path);
    expect(run.code).toBe(STORE_EXIT_CODES.store_corrupt);
    expect(run.stderr).toContain(`rebuno-dev: ${path} is damaged: SQLite`);
  }, 90_000);
});

describe("format 1 files (before row checksums)", () => {
  test("are upgraded at open and keep everything they held", () => {
    const path = newPath();
    const db = new Database(path);
    db.pragma("journal_mode = WAL");
    db.exec(`
      CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
      CREATE TABLE snapshot (id INTEGER PRIMARY KEY, ops TEXT NOT NULL);
      CREATE TABLE log (id INTEGER PRIMARY KEY, ops TEXT NOT NULL);
      INSERT INTO meta VALUES ('format', 'rebuno-dev-redo-log'), ('version', '1');
      INSERT INTO snapshot (ops) VALUES ('[["putAgent",{"id":"a","webhookUrl":"http://a.test/","secret":"s","registeredAt":1}]]');
      INSERT INTO log (ops) VALUES ('[["putAgent",{"id":"b","webhookUrl":"http://b.test/","secret":"s","registeredAt":2}]]');
    `);
    db.close();
    const store = new SqliteStore(path);
    expect(store.listAgents().map((a) => a.id)).toEqual(["a", "b"]);
    agent(store, "c");
    store.close();
    const reopened = new SqliteStore(path);
    expect(reopened.listAgents().map((a) => a.id)).toEqual(["a", "b", "c"]);
    reopened.close();
    const check = new Database(path);
    expect(check.prepare("SELECT value FROM meta WHERE key = 'version'").pluck().get()).toBe(
      String(FORMAT_VERSION),
    );
    check.close();
  });
});

describe("read-only", () => {
  /** A store whose file or directory is then made read-only (for `nobody` when we are root). */
  async function readOnly(what: "file" | "dir"): Promise<string> {
    const dir = tempDir();
    const path = join(dir, "k.db");
    const store = new SqliteStore(path);
    agent(store, "a");
    await store.whenDurable();
    store.close();
    if (what === "file") {
      chmodSync(path, 0o444);
      chmodSync(dir, 0o777);
    } else {
      chmodSync(path, 0o666);
      chmodSync(`${path}-seal`, 0o666);
      chmodSync(dir, 0o555);
    }
    return path;
  }

  test.each(["file", "dir"] as const)(
    "a read-only %s: refused as read-only, by path",
    async (what) => {
      const path = await readOnly(what);
      const before = fingerprint(path);
      if (!AS_ROOT) {
        const err = opening(path);
        expect(StoreReadOnlyError.isInstance(err)).toBe(true);
        expect(err).toMatchObject({ code: "store_read_only", path });
      }
      const run = await cli(path, AS_ROOT ? NOBODY : undefined);
      expect(run.code, run.stderr).toBe(STORE_EXIT_CODES.store_read_only);
      expect(run.stderr).toContain(`rebuno-dev: ${path} is read-only for this process: `);
      expect(run.stderr).toContain(what === "file" ? "the file cannot be written" : "its directory");
      expect(run.stderr).not.toContain("disk I/O error");
      expect(fingerprint(path)).toEqual(before);
      chmodSync(join(path, ".."), 0o755);
    },
    90_000,
  );
});
