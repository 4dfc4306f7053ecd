/**
 * The seal's check (sqlite-seal.ts) for a file whose WAL was left behind, made before the store's
 * read-write connection opens it.
 *
 * SQLite's WAL recovery keeps the frames up to the first one whose checksum fails (a cut or damaged
 * end). The store's connection would see that loss against the seal and refuse, but closing that
 * connection lets SQLite checkpoint the valid frames into the file and delete the WAL: the refusal
 * would change the very file it refuses. A read-only connection never checkpoints, so the check is
 * made through one first and a store that lost acknowledged commits is refused as found (its
 * `-shm`, which a read-only connection creates, is removed again).
 */
import { existsSync, rmSync, statSync } from "node:fs";
import { loadSqliteDriver } from "./sqlite-driver.js";
import { readMeta } from "./sqlite-file.js";
import type { SealFile } from "./sqlite-seal.js";

/**
 * What the file lost against the seal (the refusal's reason), or undefined to open as usual:
 * no WAL, no readable seal, nothing lost, or anything else the read-write open will classify (a
 * file in use by another kernel, an older format, not SQLite at all).
 */
export function lostBeforeOpen(
  path: string,
  seal: SealFile,
  nativeBinding: string | undefined,
): string | undefined {
  if ((statSync(`${path}-wal`, { throwIfNoEntry: false })?.size ?? 0) === 0) return undefined;
  let sealed: ReturnType<SealFile["read"]>;
  try {
    sealed = seal.read();
  } catch {
    return undefined;
  }
  if (sealed === undefined) return undefined;
  const shm = `${path}-shm`;
  const hadShm = existsSync(shm);
  let db: InstanceType<ReturnType<typeof loadSqliteDriver>> | undefined;
  try {
    const Database = loadSqliteDriver(path);
    db = new Database(path, {
      readonly: true,
      fileMustExist: true,
      ...(nativeBinding ? { nativeBinding } : {}),
    });
    db.pragma("busy_timeout = 0");
    const meta = readMeta(db);
    const storeId = meta.get("store_id");
    const commits = Number(meta.get("commits"));
    if (storeId === undefined || !Number.isSafeInteger(commits)) return undefined;
    if (storeId !== sealed.storeId)
      return `${seal.path} belongs to another store file (id ${sealed.storeId}, this one is ${storeId})`;
    if (sealed.commits > commits)
      return `it holds ${commits} commits, but ${sealed.commits} were acknowledged`;
    return undefined;
  } catch {
    return undefined;
  } finally {
    db?.close();
    if (!hadShm) rmSync(shm, { force: true });
  }
}
