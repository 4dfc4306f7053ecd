/**
 * A bounded write-through cache of parsed rows for the SQLite store. Every agent request reads the
 * same few rows (its agent, execution, dispatch, step); parsing their JSON again each time was a
 * visible share of the SQLite kernel's CPU. The store sets an entry on every write of the row,
 * deletes it on delete, and clears every cache when a transaction is rolled back (an entry may
 * hold an undone write). Rows are immutable values, so sharing one object is safe.
 */

/** Entries a cache holds before it starts over (a crude bound; the hot rows refill at once). */
export const ROW_CACHE_MAX = 4096;

/** See the module comment. */
export class RowCache<T> {
  private readonly rows = new Map<string, T>();

  get(key: string): T | undefined {
    return this.rows.get(key);
  }

  set(key: string, row: T): void {
    if (this.rows.size >= ROW_CACHE_MAX && !this.rows.has(key)) this.rows.clear();
    this.rows.set(key, row);
  }

  delete(key: string): void {
    this.rows.delete(key);
  }

  clear(): void {
    this.rows.clear();
  }
}
