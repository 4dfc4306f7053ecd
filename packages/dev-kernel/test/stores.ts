import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
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
// Registered while the importing test file is collected, so it runs after that file's tests.
// (A process "exit" listener does not run when vitest tears its worker down, leaving the dirs.)
afterAll(() => {
  for (const d of tempDirs.splice(0)) rmSync(d, { recursive: true, force: true });
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
