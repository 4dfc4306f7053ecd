/**
 * better-sqlite3, an optional dependency with a native addon, loaded (with `require`: opening a
 * store is synchronous) only when a SQLite store is opened. The memory store must work without it,
 * and when it is absent or its addon was never built (pnpm 10 skips install scripts unless allowed)
 * the store fails with one typed error that says how to fix it, not a stack of binding paths.
 */
import { createRequire } from "node:module";
import type BetterSqlite3 from "better-sqlite3";
import { SqliteUnavailableError } from "./sqlite-errors.js";
import { describe } from "./store-errors.js";

type DatabaseConstructor = typeof BetterSqlite3;

/** better-sqlite3's `Database` class, resolved from `resolveFrom` (tests pass a directory without it). */
export function loadSqliteDriver(
  path: string,
  resolveFrom: string | URL = import.meta.url,
): DatabaseConstructor {
  try {
    return createRequire(resolveFrom)("better-sqlite3") as DatabaseConstructor; // cached by require
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    const missing = code === "MODULE_NOT_FOUND" && describe(err).includes("'better-sqlite3'");
    throw new SqliteUnavailableError(path, missing ? "not_installed" : "native_addon", err);
  }
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
    return new Database(file, { nativeBinding }); // undefined: the built addon
  } catch (err) {
    if (isAddonLoadFailure(err)) throw new SqliteUnavailableError(storePath, "native_addon", err);
    throw err;
  }
}

/**
 * The first `new Database()` loads the addon: through `bindings` ("Could not locate the bindings
 * file"), `require(nativeBinding)` or `dlopen` (another Node ABI). SQLite's errors carry `SQLITE_*`.
 */
function isAddonLoadFailure(err: unknown): boolean {
  const code = String((err as { code?: unknown }).code ?? "");
  if (code === "ERR_DLOPEN_FAILED") return true;
  const message = describe(err);
  if (message.includes("Could not locate the bindings file")) return true;
  return code === "MODULE_NOT_FOUND" && message.includes(".node");
}
