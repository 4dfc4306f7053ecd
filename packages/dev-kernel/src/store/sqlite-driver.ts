/**
 * better-sqlite3, loaded only when a SQLite store is opened. It is an optional dependency of
 * @rebuno/dev-kernel with a native addon: the memory store and everything built on it must work
 * without it, and when it is absent or its addon was never built (pnpm 10 skips install scripts
 * unless allowed) the store fails with one typed error that says how to fix it, not a stack of
 * binding paths.
 *
 * Loaded with `require` (better-sqlite3 is CommonJS) because opening a store is synchronous.
 */
import { createRequire } from "node:module";
import type BetterSqlite3 from "better-sqlite3";
import { SqliteUnavailableError } from "./sqlite-errors.js";
import { describe } from "./store-errors.js";

type DatabaseConstructor = typeof BetterSqlite3;

let loaded: DatabaseConstructor | undefined;

/**
 * better-sqlite3's `Database` class. `resolveFrom` (a file path or URL) is where resolution starts;
 * tests pass a directory without it to see the error a user without it gets.
 */
export function loadSqliteDriver(
  path: string,
  resolveFrom: string | URL = import.meta.url,
): DatabaseConstructor {
  const fromHere = resolveFrom === import.meta.url;
  if (fromHere && loaded !== undefined) return loaded;
  let driver: DatabaseConstructor;
  try {
    driver = createRequire(resolveFrom)("better-sqlite3") as DatabaseConstructor;
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    const missing = code === "MODULE_NOT_FOUND" && describe(err).includes("'better-sqlite3'");
    throw new SqliteUnavailableError(path, missing ? "not_installed" : "native_addon", err);
  }
  if (fromHere) loaded = driver;
  return driver;
}

/** Open `file` with better-sqlite3; the addon's own load failures become {@link SqliteUnavailableError}. */
export function openSqliteDatabase(
  storePath: string,
  file: string,
  nativeBinding: string | undefined,
  resolveFrom?: string | URL,
): BetterSqlite3.Database {
  const Database = loadSqliteDriver(storePath, resolveFrom);
  try {
    return new Database(file, nativeBinding === undefined ? {} : { nativeBinding });
  } catch (err) {
    if (isAddonLoadFailure(err)) throw new SqliteUnavailableError(storePath, "native_addon", err);
    throw err;
  }
}

/**
 * better-sqlite3 loads its addon in the first `new Database()`: through `bindings` ("Could not
 * locate the bindings file", a list of tried paths), or `require(nativeBinding)`, or `dlopen`
 * (built for another Node ABI). SQLite's own errors carry `SQLITE_*` codes and are not these.
 */
function isAddonLoadFailure(err: unknown): boolean {
  const code = String((err as { code?: unknown }).code ?? "");
  if (code === "ERR_DLOPEN_FAILED") return true;
  const message = describe(err);
  if (message.includes("Could not locate the bindings file")) return true;
  return code === "MODULE_NOT_FOUND" && message.includes(".node");
}
