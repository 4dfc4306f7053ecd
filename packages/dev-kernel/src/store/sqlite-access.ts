/**
 * What the SQLite store (sqlite.ts) reads and writes its tables with: the open connection, the
 * prepared statements, the bounded caches of hot rows, and the helpers that map rows through the
 * table specs (sqlite-rows.ts).
 */
import type Database from "better-sqlite3";
import { BoundedCache } from "./bounded-cache.js";
import { SqliteConnection } from "./sqlite-connection.js";
import { checkJsonColumns } from "./sqlite-json.js";
import type { SqliteStoreOptions } from "./sqlite-options.js";
import { type Columns, fromColumns, type TableSpec, toColumns } from "./sqlite-rows.js";
import { prepareStatements, type Statements } from "./sqlite-statements.js";
import type { AgentRow, DispatchRow, ExecutionRow, StepRow } from "./types.js";

export class SqliteTables {
  readonly file: SqliteConnection;
  readonly q: Statements;
  /**
   * Bounded caches of the rows every request reads again (its execution, its log's last seq): the
   * values SQLite holds, set by the writes that change them and dropped whenever SQLite rolls back
   * (a throwing transaction, a failed commit).
   */
  readonly executions = new BoundedCache<ExecutionRow | null>();
  readonly lastSeqs = new BoundedCache<number>();
  readonly steps = new BoundedCache<StepRow | null>();
  readonly dispatches = new BoundedCache<DispatchRow | null>();
  readonly agents = new BoundedCache<AgentRow | null>();
  private readonly caches = [this.executions, this.lastSeqs, this.steps, this.dispatches, this.agents];
  /** Events whose JSON was checked (sqlite-json.ts): never changed, so kept across rollbacks. */
  private readonly eventsChecked = new BoundedCache<number>();
  /** The columns a cached row was written from, so that an update compares without mapping it again. */
  private readonly columnsOf = new WeakMap<object, Columns>();

  constructor(path: string, options: SqliteStoreOptions) {
    this.file = new SqliteConnection(path, options, () => {
      for (const cache of this.caches) cache.clear();
    });
    try {
      this.q = prepareStatements(this.file.db);
    } catch (err) {
      throw this.file.abandon(err);
    }
  }

  // Rows read from the file have their JSON columns checked (sqlite-json.ts).
  all<T>(stmt: Database.Statement, table: TableSpec, ...args: unknown[]): T[] {
    return (stmt.all(...args) as Columns[]).map((c) => this.row<T>(table, c));
  }

  one<T>(stmt: Database.Statement, table: TableSpec, ...args: unknown[]): T | undefined {
    const c = stmt.get(...args) as Columns | undefined;
    return c === undefined ? undefined : this.row<T>(table, c);
  }

  private row<T>(table: TableSpec, c: Columns): T {
    checkJsonColumns(this.file.path, table, c, this.eventsChecked);
    return fromColumns<T>(table, c);
  }

  /** Run an UPDATE that must find its row (like the memory store, which throws otherwise). */
  update(stmt: Database.Statement, params: Record<string, unknown>, what: string): void {
    this.file.write(() => {
      if (stmt.run(params).changes === 0) throw new Error(`${what} does not exist`);
    });
  }

  /** A row by key, through its cache (`null` there: known not to exist). */
  read<T>(
    cache: BoundedCache<T | null>,
    key: string,
    stmt: Database.Statement,
    table: TableSpec,
    ...args: unknown[]
  ): T | undefined {
    let row = cache.get(key);
    if (row === undefined) {
      row = this.one<T>(stmt, table, ...args) ?? null;
      cache.set(key, row);
    }
    return row ?? undefined;
  }

  /** Write `row` into `table` with `stmt` (`update`: it must exist) and cache it as SQLite now holds it. */
  put<T extends object>(
    cache: BoundedCache<T | null>,
    key: string,
    stmt: Database.Statement,
    table: TableSpec,
    row: T,
    update: string | undefined,
  ): void {
    const params = toColumns(table, row);
    const prev = update === undefined ? undefined : cache.get(key);
    if (update === undefined) this.file.write(() => stmt.run(params));
    else if (prev === undefined || prev === null) this.update(stmt, params, update);
    else {
      // The row as SQLite holds it is known: set only the columns that change, so that SQLite
      // rewrites only the indexes on those (it rewrites an index for every column SET names).
      const before = this.columnsOf.get(prev) ?? toColumns(table, prev);
      const changed = Object.keys(params).filter((c) => params[c] !== before[c]);
      if (changed.length > 0) {
        const [, name, where] = /^UPDATE (\w+) SET .* WHERE (.*)$/s.exec(stmt.source)!;
        const sql = `UPDATE ${name} SET ${changed.map((c) => `${c} = @${c}`).join(", ")} WHERE ${where}`;
        this.update(this.q.cached(sql), params, update);
      }
    }
    const cached = fromColumns<T>(table, params);
    this.columnsOf.set(cached, params);
    cache.set(key, cached);
  }
}
