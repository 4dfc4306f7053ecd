/**
 * Checksums of the SQLite store's records and the seal: what the kernel last acknowledged, kept
 * outside SQLite so that a file missing acknowledged records is refused instead of served.
 *
 * Every stored row (snapshot and log) carries `sum`, a hash of its table, id, ops text and (for
 * snapshot rows) generation: a changed byte in a record (which SQLite itself does not notice, it keeps no checksums of
 * row contents) fails the check when the file is loaded. The sums of one generation (its snapshot
 * rows, then the log rows after its base) are folded into a hash chain.
 *
 * SQLite recovers a WAL by keeping its frames up to the first one whose checksum fails and dropping
 * the rest without a word, so a damaged end of the WAL silently loses committed, acknowledged
 * transactions. The seal file (`<path>-seal`) records, after every commit, the generation, how
 * many rows it holds and the chain over them. At open the file must hold at least those rows with
 * that chain. It is written after the commit, so it may lag the file (a crash in between) but never
 * lead it unless records were lost. One fixed-size `pwrite` per batch, not synced: under
 * `synchronous=FULL` a power loss can leave it behind the file, which only weakens the check.
 */
import { hash } from "node:crypto";
import { closeSync, constants, ftruncateSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { StoreCorruptError } from "./store-errors.js";

/** Hex characters of a row's sum (128 bits). */
const SUM_CHARS = 32;
const MAGIC = "rebuno-dev-seal v1";

/** A seal: the rows of `generation` the kernel acknowledged, and the chain over their sums. */
export interface SealState {
  readonly generation: number;
  readonly rows: number;
  readonly chain: string;
}

/**
 * The checksum stored with a row (see the module comment). Log rows pass generation 0: they keep
 * their id across a compaction (a log row written during one belongs to both generations).
 */
export function rowSum(table: "snapshot" | "log", generation: number, id: number, ops: string): string {
  // One-shot hashing: a third of the cost of a Hash object for the small rows of a batch.
  return hash("sha256", `${table}\n${generation}\n${id}\n${ops}`, "hex").slice(0, SUM_CHARS);
}

/** The chain of a generation before its first row. */
export function chainStart(generation: number): string {
  return hash("sha256", `${MAGIC}\n${generation}`, "hex");
}

/** The chain after one more row. */
export function chainNext(chain: string, sum: string): string {
  return hash("sha256", chain + sum, "hex");
}

/** `text` of a seal, fixed-length so that rewriting it in place never leaves a longer old tail. */
function encode(s: SealState): string {
  const body = `${MAGIC} g=${String(s.generation).padStart(15, "0")} n=${String(s.rows).padStart(15, "0")} c=${s.chain}`;
  return `${body} s=${hash("sha256", body, "hex").slice(0, 16)}\n`;
}

const PATTERN = new RegExp(`^(${MAGIC} g=(\\d{15}) n=(\\d{15}) c=([0-9a-f]{64})) s=([0-9a-f]{16})\\n$`);

/** The seal file beside a store file. */
export class SealFile {
  readonly path: string;
  private fd: number | undefined;

  constructor(storePath: string) {
    this.path = `${storePath}-seal`;
  }

  /** The seal on disk, or undefined when there is none. Throws when it exists but is damaged. */
  read(): SealState | undefined {
    let text: string;
    try {
      text = readFileSync(this.path, "latin1");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw err;
    }
    const m = PATTERN.exec(text);
    if (m === null || hash("sha256", m[1]!, "hex").slice(0, 16) !== m[5]) {
      throw new StoreCorruptError(
        this.path,
        `${this.path} (the record of what the kernel acknowledged) is damaged, so it cannot be checked ` +
          "that the store holds everything acknowledged: restore it, or delete it to accept what the " +
          "store file holds",
      );
    }
    return { generation: Number(m[2]), rows: Number(m[3]), chain: m[4]! };
  }

  /** Record `state` (opening the file on first use). */
  write(state: SealState): void {
    const text = encode(state);
    if (this.fd === undefined) {
      // No O_TRUNC: a crash between open and write must not leave an empty seal behind.
      const fd = openSync(this.path, constants.O_WRONLY | constants.O_CREAT, 0o644);
      this.fd = fd;
      writeSync(fd, text, 0, "latin1");
      ftruncateSync(fd, text.length); // whatever was there may have been longer
      return;
    }
    writeSync(this.fd, text, 0, "latin1");
  }

  /** Delete the seal file, if there is one. */
  remove(): void {
    rmSync(this.path, { force: true });
  }

  close(): void {
    if (this.fd === undefined) return;
    closeSync(this.fd);
    this.fd = undefined;
  }
}
