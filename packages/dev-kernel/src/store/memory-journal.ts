// The memory store's transactions: every write inside `transaction(fn)` records how to reverse
// itself, and a throw replays the journal backwards (no partial state, as SQLite guarantees).

type Undo = () => void;

/** Base of the memory store's tables: the transaction and the journaled map writes they share. */
export abstract class UndoJournal {
  private journal: Undo[] | undefined;

  transaction<T>(fn: () => T): T {
    if (this.journal !== undefined) return fn();
    const journal: Undo[] = [];
    this.journal = journal;
    try {
      return fn();
    } catch (err) {
      for (let i = journal.length - 1; i >= 0; i--) journal[i]!();
      throw err;
    } finally {
      this.journal = undefined;
    }
  }

  /** Record how to reverse a write made just now (a no-op outside a transaction). */
  protected undo(fn: Undo): void {
    this.journal?.push(fn);
  }

  /** Set `key` in `map`, journaling the previous value. */
  protected setIn<K, V>(map: Map<K, V>, key: K, value: V): void {
    if (this.journal !== undefined) {
      const had = map.has(key);
      const prev = map.get(key);
      this.undo(() => (had ? map.set(key, prev as V) : map.delete(key)));
    }
    map.set(key, value);
  }

  /** The value of `key` in `map`, set (journaled) to `make()` first when there is none. */
  protected entry<K, V>(map: Map<K, V>, key: K, make: () => V): V {
    let value = map.get(key);
    if (value === undefined) this.setIn(map, key, (value = make()));
    return value;
  }

  /** Push `value` onto `list`, journaling its removal. */
  protected pushIn<V>(list: V[], value: V): void {
    list.push(value);
    this.undo(() => void list.pop());
  }

  /** Delete `key` from `map`, journaling the previous value. */
  protected deleteIn<K, V>(map: Map<K, V>, key: K): void {
    if (!map.has(key)) return;
    if (this.journal !== undefined) {
      const prev = map.get(key) as V;
      this.undo(() => map.set(key, prev));
    }
    map.delete(key);
  }
}
