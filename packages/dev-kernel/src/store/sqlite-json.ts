/**
 * The JSON columns of the SQLite store's tables, checked as rows are read from the file.
 *
 * The kernel splices stored JSON text into its answers without parsing it again (`RawJson`, the
 * events body built by concatenation), so a column whose text no longer parses would reach a
 * client as a malformed body. SQLite's own checks (quick_check, the WAL's frame checksums) find
 * damage to the file's structure, not to a value's bytes (and a damaged value that still parses
 * cannot be told from a real one: docs/dev-kernel.md, "What cannot be detected"). Rows read from
 * SQLite are checked (cached rows were written by this process; an event, which never changes, once
 * per process), and a bad one is refused with a {@link StoreRowCorruptError} naming it: the request
 * fails with the `store_corrupt` envelope and every other row is served as before.
 */

import type { BoundedCache } from "./bounded-cache.js";
import { type Columns, EVENTS, type Table } from "./sqlite-rows.js";
import { describe, StoreCorruptError } from "./store-errors.js";

/** A row of the file whose stored text is damaged (one of its JSON columns does not parse). */
export class StoreRowCorruptError extends StoreCorruptError {
  static {
    StoreRowCorruptError.prototype.name = "StoreRowCorruptError";
  }
  /** The table (`executions`, `events`…). */
  readonly table: string;
  /** The row's key columns and values (`{ id: "…" }`, `{ execution_id: "…", event_seq: 3 }`). */
  readonly key: Readonly<Record<string, string | number>>;
  /** The column whose text does not parse. */
  readonly column: string;
  /** `<table> row <key> has invalid JSON in its <column> column`, without the file's path. */
  readonly row: string;

  constructor(
    path: string,
    table: string,
    key: Readonly<Record<string, string | number>>,
    column: string,
    cause: unknown,
  ) {
    const keyText = Object.entries(key).map(([k, v]) => `${k}=${v}`);
    const row = `${table} row ${keyText.join(" ")} has invalid JSON in its ${column} column`;
    super(
      path,
      `${path} is damaged: ${row} (${describe(cause)}). The ` +
        "other rows are served; restore the file from a backup, or repair or delete that row with " +
        "an SQL tool while the kernel is stopped",
      { cause },
    );
    this.table = table;
    this.key = key;
    this.column = column;
    this.row = row;
  }
}

/**
 * Throw {@link StoreRowCorruptError} when a JSON column of `c`, a row of `table` read from `path`,
 * does not parse. `eventsChecked`: per execution, the events 1…n already checked (a log is read
 * from its start or from where the reader stopped, so the checked rows stay a prefix).
 */
export function checkJsonColumns<T extends object>(
  path: string,
  table: Table<T>,
  c: Columns,
  eventsChecked: BoundedCache<number>,
): void {
  const events = table === (EVENTS as Table<object>);
  const seq = events ? (c.event_seq as number) : 0;
  const through = events ? (eventsChecked.get(c.execution_id as string) ?? 0) : 0;
  if (events && seq <= through) return;
  const bad = table.invalidJson(c);
  if (bad !== undefined)
    throw new StoreRowCorruptError(path, table.name, table.keyOf(c), bad.column, bad.cause);
  if (events && seq === through + 1) eventsChecked.set(c.execution_id as string, seq);
}
