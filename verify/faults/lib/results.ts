/**
 * Fault-suite results: each test records one row (fault, promise, outcome counts) into
 * `.tmp/faults/<id>.json`; `scripts/test-faults.mjs` gathers them into docs/reliability.md.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const DIR = fileURLToPath(new URL("../../../.tmp/faults/", import.meta.url));

export interface FaultRow {
  /** Stable id, also the file name. */
  readonly id: string;
  /** Group in the table: Crashes, Outages, Network, Delivery, Time, Hostile input, Load. */
  readonly group: string;
  /** The fault injected. */
  readonly fault: string;
  /** What the system promises under it. */
  readonly promise: string;
  /** The test file that proves it. */
  readonly test: string;
  /** Seed to replay the run (FAULT_SEED=…), when the test is randomized. */
  readonly seed?: number | undefined;
  /** Counts observed (executions, faults injected, violations, …). */
  readonly counts: Readonly<Record<string, number | string>>;
}

export function recordFault(row: FaultRow): void {
  mkdirSync(DIR, { recursive: true });
  writeFileSync(`${DIR}${row.id}.json`, `${JSON.stringify({ ...row, at: new Date().toISOString() })}\n`);
}
