import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemoryStore } from "../src/store/memory.js";
import { SqliteStore } from "../src/store/sqlite.js";
import type { Store } from "../src/store/types.js";

/** A store implementation the kernel suite runs against. */
export interface StoreFactory {
  readonly name: string;
  /** A fresh, empty store. */
  create(): Store;
}

const tempDirs: string[] = [];
process.once("exit", () => {
  for (const d of tempDirs) rmSync(d, { recursive: true, force: true });
});

function tempDb(): string {
  const dir = mkdtempSync(join(tmpdir(), "rebuno-kernel-"));
  tempDirs.push(dir);
  return join(dir, "kernel.db");
}

/** Every store the HTTP suite runs against (`describe.each(stores)`). */
export const stores: readonly StoreFactory[] = [
  { name: "memory", create: () => new MemoryStore() },
  {
    name: "sqlite",
    create: () => new SqliteStore(tempDb()),
  },
];
