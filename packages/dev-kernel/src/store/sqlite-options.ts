// Apart from the connection so that the store's public declarations need no better-sqlite3 types
// (an optional dependency: a consumer without it or its @types must still type-check).
/** Options for `SqliteStore` (sqlite.ts). */
export interface SqliteStoreOptions {
  /**
   * `NORMAL` (default) survives a process crash (SIGKILL) without losing a committed batch: in WAL
   * mode the log is written before the commit returns, only an OS crash can lose the tail. `FULL`
   * also fsyncs on every commit, for power-loss durability.
   */
  readonly synchronous?: "NORMAL" | "FULL";
  /**
   * Run SQLite's `PRAGMA quick_check` over the whole file at open (default true). It reads every
   * page, about a second per GB: turn it off for very large stores whose disk you trust. The seal
   * (acknowledged commits) is checked either way.
   */
  readonly quickCheck?: boolean;
  /** Path of a `better_sqlite3.node` built for another Node ABI (passed to better-sqlite3). */
  readonly nativeBinding?: string;
}
