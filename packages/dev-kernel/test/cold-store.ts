// A SQLite store whose settled executions are moved to the cold tables before every read, so a
// suite run against it reads (and writes) executions in both tiers at every step, not only the
// ones that happened to sit idle for the store's quiet period.
import { SqliteStore, type SqliteStoreOptions } from "../src/store/sqlite.js";
import type { Store } from "../src/store/types.js";

const READ = /^(get|list|find|count|lastEventSeq|nextDispatchDueAt)/;

/** How many executions {@link coldReading} stores moved to the cold tier, for tests to check. */
export const archived = { count: 0 };

/** `new SqliteStore(path)` that archives everything settled before each read (module comment). */
export function coldReading(path: string, options: SqliteStoreOptions = {}): SqliteStore {
  const store = new SqliteStore(path, { coldAfterMs: Number.POSITIVE_INFINITY, ...options });
  return new Proxy(store, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== "function") return value;
      if (typeof prop === "string" && READ.test(prop)) {
        return (...args: unknown[]) => {
          archived.count += target.archiveSettled(); // a no-op inside a transaction
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      }
      return (value as (...a: unknown[]) => unknown).bind(target);
    },
  });
}

/** The store as the `Store` interface (for factories typed that way). */
export const coldReadingStore = (path: string): Store => coldReading(path);
