/**
 * The SQLite store's file before and around SQLite: creating a new store, refusing an existing file
 * that is not one, telling a read-only file from an I/O error, and mapping what SQLite reports to the
 * store's typed errors. A store file only comes into being complete (built under a temporary name,
 * then linked into place), so an existing file without the store's tables (a zero-length file,
 * another application's empty database) is never taken for a new store and written over.
 */
import { randomBytes } from "node:crypto";
import { accessSync, constants, linkSync, lstatSync, rmSync } from "node:fs";
import { dirname } from "node:path";
import type Database from "better-sqlite3";
import { openSqliteDatabase } from "./sqlite-driver.js";
import { FORMAT_NAME, FORMAT_VERSION, metaRows, SCHEMA } from "./sqlite-schema.js";
import {
  describe,
  StoreCorruptError,
  StoreError,
  StoreFormatError,
  StoreLockedError,
  StoreReadOnlyError,
} from "./store-errors.js";

/** Tables of the dev kernel's first, normalized SQLite schema (before the redo log of formats 1–3). */
const OLD_SCHEMA_TABLES = ["executions", "events", "steps", "dispatches", "occurrences"];
/** Tables a file of each format must hold. */
export const FORMAT3_TABLES = ["snapshot", "log", "cold_execution", "cold_dispatch", "cold_approval"];
const FORMAT4_TABLES = [...SCHEMA.matchAll(/CREATE TABLE (\w+)/g)].map((m) => m[1]!);

const READ_ONLY_CODES = new Set(["EACCES", "EPERM", "EROFS"]);

/**
 * Make sure `path` can be opened as a store: create it when it does not exist, else check that it
 * is a non-empty regular file this process may write, together with its directory and side files.
 * Returns whether it was created.
 */
export function prepareStoreFile(path: string, nativeBinding: string | undefined): boolean {
  let size: number;
  try {
    const stat = lstatSync(path);
    if (!stat.isFile()) {
      throw new StoreFormatError(path, `${path} is not a regular file: point --store at a file path`);
    }
    size = stat.size;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw classifySqliteError(path, err);
    checkWritable(path, [[dirname(path), "its directory"]]);
    if (createStoreFile(path, nativeBinding)) return true;
    size = lstatSync(path).size; // created by someone else meanwhile: check it like any other
  }
  if (size === 0) {
    throw new StoreFormatError(
      path,
      `${path} is empty (0 bytes), so it is not a store rebuno-dev wrote (a new store is created ` +
        "complete, never empty): delete it to start an empty store there, or point --store at another path",
    );
  }
  checkWritable(path, [
    [path, "the file"],
    [dirname(path), "its directory"],
    [`${path}-wal`, "its WAL"],
    [`${path}-seal`, "its seal file"],
  ]);
  return false;
}

/** Refuse unless this process may write every existing one of `paths` (`access`: its real rights). */
function checkWritable(path: string, paths: readonly (readonly [string, string])[]): void {
  for (const [p, what] of paths) {
    try {
      accessSync(p, constants.W_OK);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? "";
      if (code === "ENOENT" && p !== path && p !== dirname(path)) continue; // side file not there yet
      if (!READ_ONLY_CODES.has(code)) throw classifySqliteError(path, err);
      throw new StoreReadOnlyError(
        path,
        `${path} is read-only for this process: ${what}${p === path ? "" : ` (${p})`} cannot be written ` +
          `(${code}), and the store writes every change there. Make it writable, or point --store at ` +
          "another path",
        { cause: err },
      );
    }
  }
}

/** Build a new store under a temporary name and link it into place; false if `path` appeared meanwhile. */
function createStoreFile(path: string, nativeBinding: string | undefined): boolean {
  const temp = `${path}.new-${process.pid}-${randomBytes(4).toString("hex")}`;
  try {
    const db = openSqliteDatabase(path, temp, nativeBinding);
    try {
      db.pragma("journal_mode = WAL"); // what every open expects; kept in the file's header
      db.pragma("synchronous = FULL");
      db.exec(SCHEMA + metaRows(randomBytes(16).toString("hex"))); // complete on disk when it returns
    } finally {
      db.close();
    }
    try {
      linkSync(temp, path); // unlike rename, never replaces a file created meanwhile
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "EEXIST") return false;
      throw err;
    }
    return true;
  } catch (err) {
    throw classifySqliteError(path, err, "create");
  } finally {
    rmSync(temp, { force: true }); // linked into place, or never created (the error thrown says why)
  }
}

/** A store error saying the file is not a rebuno-dev store, and why. */
function notOurs(path: string, why: string): StoreFormatError {
  return new StoreFormatError(
    path,
    `${path} is not a rebuno-dev store (${why}): point --store at a new path or at a file rebuno-dev created`,
  );
}

/** Map what the file system or SQLite said while creating or opening the file to a typed error. */
export function classifySqliteError(path: string, err: unknown, doing = "open"): StoreError {
  if (StoreError.isInstance(err)) return err;
  const code = String((err as { code?: unknown }).code ?? "");
  const [why, options] = [describe(err), { cause: err }];
  if (READ_ONLY_CODES.has(code) || (/^SQLITE_(READONLY|CANTOPEN)$/.test(code) && !writable(dirname(path))))
    return new StoreReadOnlyError(
      path,
      `cannot ${doing} ${path}: its directory is read-only (${why})`,
      options,
    );
  if (code === "SQLITE_BUSY" || code === "SQLITE_LOCKED") return new StoreLockedError(path, options);
  if (code === "SQLITE_NOTADB")
    return new StoreFormatError(path, `${path} is not an SQLite database (${why})`, options);
  if (code.startsWith("SQLITE_CORRUPT"))
    return new StoreCorruptError(
      path,
      `${path} is damaged: SQLite reports ${why}; restore it from a backup`,
      options,
    );
  if (code.startsWith("SQLITE_READONLY"))
    return new StoreReadOnlyError(path, `${path} is read-only for this process (${why})`, options);
  return new StoreError(path, `cannot ${doing} ${path}: ${why}`, options);
}

function writable(p: string): boolean {
  try {
    accessSync(p, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** The `meta` table as a map. */
export function readMeta(db: Database.Database): Map<string, string> {
  const rows = db.prepare("SELECT key, value FROM meta").all() as { key: string; value: string }[];
  return new Map(rows.map((r) => [r.key, r.value]));
}

/** Check (reading only) that the file is ours and not newer; returns its format version. */
export function checkFormat(db: Database.Database, path: string): number {
  const tables = db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
    .pluck()
    .all() as string[];
  if (!tables.includes("meta")) {
    if (tables.length > 0 && OLD_SCHEMA_TABLES.every((t) => tables.includes(t))) {
      throw new StoreFormatError(
        path,
        `${path} holds the dev kernel's old SQLite schema (tables executions, steps, events…), ` +
          "which this version no longer reads: delete the file (and its -wal/-shm files) to start " +
          "empty, or point --store at another path",
      );
    }
    throw notOurs(path, tables.length === 0 ? "it holds no tables" : `it holds tables ${tables.join(", ")}`);
  }
  const meta = readMeta(db);
  if (meta.get("format") !== FORMAT_NAME) throw notOurs(path, `its format is ${meta.get("format")}`);
  const version = Number(meta.get("version"));
  if (!Number.isInteger(version) || version < 1) {
    throw new StoreFormatError(path, `${path} has an invalid format version ${meta.get("version")}`);
  }
  if (version > FORMAT_VERSION) {
    throw new StoreFormatError(
      path,
      `${path} was written by a newer rebuno-dev (format version ${version}; this one reads up to ` +
        `${FORMAT_VERSION}): upgrade @rebuno/dev-kernel, or point --store at another path`,
    );
  }
  const expected = version >= 4 ? FORMAT4_TABLES : version === 3 ? FORMAT3_TABLES : ["snapshot", "log"];
  for (const t of expected) {
    if (!tables.includes(t)) throw new StoreFormatError(path, `${path} lacks its ${t} table`);
  }
  return version;
}

/** SQLite's own structural check of every page (it cannot see a changed value inside a valid row). */
export function runQuickCheck(db: Database.Database, path: string): void {
  const found = db.pragma("quick_check(5)", { simple: false }) as { quick_check: string }[];
  const problems = found.map((r) => r.quick_check).filter((p) => p !== "ok");
  if (problems.length > 0) {
    throw new StoreCorruptError(
      path,
      `${path} is damaged: SQLite's quick_check reports ${problems.join("; ")}. Restore it from a ` +
        "backup; the file was left as it is",
    );
  }
}
