/**
 * Errors of the SQLite store, in the Rebuno error family (`@rebuno/protocol`). None of them is a
 * `KernelError`: they are not answers to a client. The HTTP core turns one raised under a request
 * into `500 internal_error` (and reports it), a damaged row (`StoreRowCorruptError`, sqlite-json.ts)
 * into `500 store_corrupt` naming it; the CLI prints the message of one raised at start-up.
 */
import { RebunoError, type RebunoErrorOptions } from "@rebuno/protocol";

/** Base class: something is wrong with the store's file. `code` says what. */
export class StoreError extends RebunoError {
  static {
    StoreError.prototype.name = "StoreError";
  }
  /** The database file concerned. */
  readonly path: string;

  constructor(path: string, message: string, options: RebunoErrorOptions = {}) {
    super(message, { ...options, code: options.code ?? "store_error" });
    this.path = path;
  }
}

/**
 * Another process (or another `SqliteStore` in this one) holds the file: two kernels on one file
 * would overwrite each other's writes.
 */
export class StoreLockedError extends StoreError {
  static {
    StoreLockedError.prototype.name = "StoreLockedError";
  }
  constructor(path: string, options: Omit<RebunoErrorOptions, "code"> = {}) {
    super(
      path,
      `${path} is in use by another rebuno-dev (or another SQLite connection holding it): stop that ` +
        "process, or point --store at another file",
      { ...options, code: "store_locked" },
    );
  }
}

/**
 * The file is not one this version can read: not SQLite at all, another application's database,
 * the dev kernel's older normalized schema, a newer format version, or log contents that do not
 * parse. `message` names the file and what to do.
 */
export class StoreFormatError extends StoreError {
  static {
    StoreFormatError.prototype.name = "StoreFormatError";
  }
  constructor(path: string, message: string, options: Omit<RebunoErrorOptions, "code"> = {}) {
    super(path, message, { ...options, code: "store_format" });
  }
}

/**
 * The file is a rebuno-dev store, but what it holds is damaged: SQLite's own check found broken
 * pages, a row's JSON text does not parse, or the file holds fewer (or other) records than the kernel
 * acknowledged before it stopped (a damaged or missing end of the WAL). The kernel refuses to
 * serve from it: answering from less than was acknowledged would silently undo finished work.
 * `message` names the file, the problem and what to do.
 */
export class StoreCorruptError extends StoreError {
  static {
    StoreCorruptError.prototype.name = "StoreCorruptError";
  }
  constructor(path: string, message: string, options: Omit<RebunoErrorOptions, "code"> = {}) {
    super(path, message, { ...options, code: "store_corrupt" });
  }
}

/**
 * This process may not write the file or its directory (file mode, ownership, read-only file
 * system). The store needs both: every write is logged, and SQLite keeps its WAL beside the file.
 */
export class StoreReadOnlyError extends StoreError {
  static {
    StoreReadOnlyError.prototype.name = "StoreReadOnlyError";
  }
  constructor(path: string, message: string, options: Omit<RebunoErrorOptions, "code"> = {}) {
    super(path, message, { ...options, code: "store_read_only" });
  }
}

/**
 * Writing a batch to the file failed (disk full, I/O error). The answers that waited on the batch
 * are rejected with it, and the in-memory state was rebuilt from what the file holds. Retrying a
 * request may succeed once the cause is fixed.
 */
export class StoreCommitError extends StoreError {
  static {
    StoreCommitError.prototype.name = "StoreCommitError";
  }
  constructor(path: string, cause: unknown) {
    super(path, `writing to ${path} failed: ${describe(cause)}`, {
      code: "store_commit_failed",
      cause,
      retryable: true,
    });
  }
}

/**
 * The store cannot continue: a commit failed and the state could not be read back from the file
 * either, or the store was closed. Every later transaction and `whenDurable()` fails with it.
 */
export class StoreUnavailableError extends StoreError {
  static {
    StoreUnavailableError.prototype.name = "StoreUnavailableError";
  }
  constructor(path: string, message: string, cause?: unknown) {
    super(path, message, { code: "store_unavailable", cause });
  }
}

export function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Exit codes of `rebuno-dev` when its store cannot be opened, by error `code`, so that scripts and
 * supervisors can tell the causes apart (1 stays the code of every other start-up failure).
 */
export const STORE_EXIT_CODES: Readonly<Record<string, number>> = {
  /** Not a rebuno-dev store: empty, not SQLite, another application's database, newer format. */
  store_format: 3,
  /** A rebuno-dev store whose contents are damaged or less than was acknowledged. */
  store_corrupt: 4,
  /** The file or its directory is read-only for this process. */
  store_read_only: 5,
  /** Another process holds the file. */
  store_locked: 6,
  /** Any other failure to open, read or write the file (I/O error, missing directory…). */
  store_error: 7,
  store_commit_failed: 7,
  store_unavailable: 7,
};

/** The exit code for `err` if it is a store error (see {@link STORE_EXIT_CODES}), else undefined. */
export function storeExitCode(err: unknown): number | undefined {
  return StoreError.isInstance(err)
    ? (STORE_EXIT_CODES[err.code] ?? STORE_EXIT_CODES.store_error)
    : undefined;
}
