// A small LRU map for the SQLite store's caches of hot rows (sqlite.ts).
import type { Table } from "./sqlite-rows.js";

/**
 * A map that forgets its oldest entries beyond {@link BoundedCache.LIMIT} of them or, with `weigh`,
 * beyond `maxWeight` in all (a row carries up to a request body of JSON text: a count alone would
 * not bound the memory).
 */
export class BoundedCache<T> extends Map<string, T> {
  static readonly LIMIT = 1024;
  private weight = 0;

  constructor(
    private readonly weigh?: (value: T) => number,
    private readonly maxWeight = Number.POSITIVE_INFINITY,
  ) {
    super();
  }

  override set(key: string, value: T): this {
    this.delete(key); // re-inserted: now the newest
    super.set(key, value);
    if (this.weigh !== undefined) this.weight += this.weigh(value);
    while (this.size > BoundedCache.LIMIT || this.weight > this.maxWeight)
      this.delete(this.keys().next().value!);
    return this;
  }

  override delete(key: string): boolean {
    if (this.weigh !== undefined && super.has(key)) this.weight -= this.weigh(super.get(key)!);
    return super.delete(key);
  }

  override clear(): void {
    this.weight = 0;
    super.clear();
  }
}

/** A cache of `table`'s rows holding at most 4 Mi characters of their JSON text in all. */
export const rowCache = <T extends object>(table: Table<T>) =>
  new BoundedCache<T | null>((row) => table.textLength(row), 4 * 1024 * 1024);
