/**
 * The seal: what the kernel last acknowledged, kept outside SQLite so that a file missing
 * acknowledged commits is refused instead of served.
 *
 * SQLite recovers a WAL by keeping its frames up to the first one whose checksum fails and silently
 * dropping the rest, so a damaged end of the WAL loses committed, acknowledged transactions. Every
 * batch the store commits increments `meta.commits` in the same transaction; after the commit the
 * seal file (`<path>-seal`) records the file's `store_id` and that count, and at open the file must
 * hold at least the sealed count, under the same id. Written after the commit, the seal may lag the
 * file (a crash in between) but never leads it unless commits were lost. One fixed-size `pwrite`
 * per batch, not synced: under `synchronous=FULL` a power loss can leave it behind the file, which
 * only weakens the check.
 */
import { hash } from "node:crypto";
import { closeSync, constants, ftruncateSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { StoreCorruptError } from "./store-errors.js";

const MAGIC = "rebuno-dev-seal v2";

/** A seal: `commits` batches of the file `storeId` were acknowledged. */
interface SealState {
  readonly storeId: string;
  readonly commits: number;
}

/** Text of a seal, fixed-length so that rewriting it in place never leaves a longer old tail. */
function encode(s: SealState): string {
  const body = `${MAGIC} id=${s.storeId} n=${String(s.commits).padStart(15, "0")}`;
  return `${body} s=${hash("sha256", body, "hex").slice(0, 16)}\n`;
}

const PATTERN = new RegExp(`^(${MAGIC} id=([0-9a-f]{32}) n=(\\d{15})) s=([0-9a-f]{16})\\n$`);
/** The seal of the redo-log formats (1–3): it counts records, which a converted file no longer has. */
const FORMAT3_SEAL = /^rebuno-dev-seal v1 g=(\d{15}) n=(\d{15}) c=([0-9a-f]{64}) s=[0-9a-f]{16}\n$/;

/** The seal file beside a store file. */
export class SealFile {
  readonly path: string;
  private fd: number | undefined;

  constructor(private readonly storePath: string) {
    this.path = `${storePath}-seal`;
  }

  private text(): string | undefined {
    try {
      return readFileSync(this.path, "latin1");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw err;
    }
  }

  /** The seal on disk, or undefined when there is none. Throws when it exists but is damaged. */
  read(): SealState | undefined {
    const text = this.text();
    if (text === undefined) return undefined;
    const m = PATTERN.exec(text);
    if (m === null || hash("sha256", m[1]!, "hex").slice(0, 16) !== m[4]) throw this.damaged();
    return { storeId: m[2]!, commits: Number(m[3]) };
  }

  /** A format-3 seal (sqlite-format3.ts): generation, record count and chain; undefined when none. */
  readFormat3(): { generation: number; rows: number; chain: string } | undefined {
    const text = this.text();
    if (text === undefined) return undefined;
    const m = FORMAT3_SEAL.exec(text);
    if (m === null) throw this.damaged();
    return { generation: Number(m[1]), rows: Number(m[2]), chain: m[3]! };
  }

  private damaged(): StoreCorruptError {
    return new StoreCorruptError(
      this.path,
      `${this.path} (the record of what the kernel acknowledged) is damaged, so it cannot be checked ` +
        "that the store holds everything acknowledged: restore it, or delete it to accept what the " +
        "store file holds",
    );
  }

  /** What a file holding `commits` commits under `storeId` lacks against `sealed`, or undefined. */
  shortfall(sealed: SealState | undefined, storeId: string, commits: number): string | undefined {
    if (sealed !== undefined && sealed.storeId !== storeId) {
      return `${this.path} belongs to another store file (id ${sealed.storeId}, this one is ${storeId})`;
    }
    if (sealed !== undefined && sealed.commits > commits) {
      return `it holds ${commits} commits, but ${sealed.commits} were acknowledged`;
    }
    return undefined;
  }

  /** The refusal of a store file that lacks acknowledged work (`what` says which). */
  lost(what: string, refusing = "start"): StoreCorruptError {
    return new StoreCorruptError(
      this.storePath,
      `${this.storePath} holds less than the kernel acknowledged (${what}; see ${this.path}): the end ` +
        "of its WAL is damaged or missing, or an older copy of the file was put in its place. Refusing " +
        `to ${refusing} rather than silently undo acknowledged work: restore the file (and its -wal) ` +
        `from a backup, or delete ${this.path} to accept what the file holds`,
    );
  }

  /** Record `state` (opening the file on first use). */
  write(state: SealState): void {
    const text = encode(state);
    if (this.fd === undefined) {
      // No O_TRUNC: a crash between open and write must not leave an empty seal behind.
      this.fd = openSync(this.path, constants.O_WRONLY | constants.O_CREAT, 0o644);
      writeSync(this.fd, text, 0, "latin1");
      ftruncateSync(this.fd, text.length); // whatever was there may have been longer
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
