// Apart from sqlite-driver.ts so that the error's declaration needs no better-sqlite3 types.
import { describe, StoreError } from "./store-errors.js";

const PNPM =
  'under pnpm 10 also allow its build script (`pnpm approve-builds`, or "better-sqlite3" in ' +
  "pnpm.onlyBuiltDependencies) and run `pnpm rebuild better-sqlite3`";

/**
 * The SQLite store cannot run in this installation: better-sqlite3 is not installed, or its native
 * addon is missing or built for another Node version. `reason` says which; `message` how to fix it.
 * The memory store (the default) does not need it.
 */
export class SqliteUnavailableError extends StoreError {
  static {
    SqliteUnavailableError.prototype.name = "SqliteUnavailableError";
  }
  /** `"not_installed"`: the package cannot be resolved; `"native_addon"`: its addon will not load. */
  readonly reason: "not_installed" | "native_addon";

  constructor(path: string, reason: "not_installed" | "native_addon", cause: unknown) {
    const what =
      reason === "not_installed"
        ? "is not installed (it is an optional dependency): install it next to @rebuno/dev-kernel (npm " +
          "install better-sqlite3)"
        : `'s native addon does not load (${firstLine(cause)}): build it for this Node version: ` +
          "`npm rebuild better-sqlite3`";
    const message = `the SQLite store needs better-sqlite3, and better-sqlite3${what}; ${PNPM}.`;
    super(path, `${message} The memory store needs neither.`, { code: "sqlite_unavailable", cause });
    this.reason = reason;
  }
}

/** The cause in one line: the `bindings` package's message is followed by every path it tried. */
function firstLine(err: unknown): string {
  const message = describe(err);
  if (message.includes("Could not locate the bindings file")) {
    return "no better_sqlite3.node was built: its install script did not run";
  }
  return message.split("\n", 1)[0] ?? "";
}
