// A small LRU map for the SQLite store's caches of hot rows (sqlite.ts).

/** A map that forgets its oldest entries beyond {@link BoundedCache.LIMIT}. */
export class BoundedCache<T> extends Map<string, T> {
  static readonly LIMIT = 1024;

  override set(key: string, value: T): this {
    this.delete(key); // re-inserted: now the newest
    super.set(key, value);
    if (this.size > BoundedCache.LIMIT) this.delete(this.keys().next().value!);
    return this;
  }
}
