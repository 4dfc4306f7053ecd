import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The temporary directories of one test file, removed together (`removeAll()` in `afterEach`). */
export class TempDirs {
  private readonly dirs: string[] = [];

  /** `prefix` names the directories (`<prefix>-XXXXXX` under the OS's temporary folder). */
  constructor(private readonly prefix: string) {}

  /** A fresh, empty directory. */
  make(): string {
    const dir = mkdtempSync(join(tmpdir(), `${this.prefix}-`));
    this.dirs.push(dir);
    return dir;
  }

  /** Remove every directory made so far, with its contents. */
  removeAll(): void {
    for (const dir of this.dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  }
}
