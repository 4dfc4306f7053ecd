// The peers of B14 (Restate server + SDK, DBOS) are large and only this bench needs them, so they
// live outside the workspace: bench/peers/package.json with its own lockfile, installed on demand
// into bench/peers/node_modules (gitignored) with the versions the lockfile pins. The workspace's
// `pnpm install` never sees them (bench/peers is not a workspace package).
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const PEERS_DIR = dirname(fileURLToPath(import.meta.url));

/** The version pinned in package.json of `name`, and whether node_modules holds exactly it. */
function installed(name) {
  const wanted = JSON.parse(readFileSync(join(PEERS_DIR, "package.json"), "utf8")).dependencies[name];
  const file = join(PEERS_DIR, "node_modules", name, "package.json");
  const have = existsSync(file) ? JSON.parse(readFileSync(file, "utf8")).version : undefined;
  return { wanted, have, ok: wanted !== undefined && have === wanted };
}

/**
 * Install the peers if missing; returns `{ ok }` per package, or the reason it is not there.
 * Never throws: a peer the registry will not give us skips its rows, not the bench.
 */
export function ensurePeers(names, log = (m) => console.error(m)) {
  if (!names.every((n) => installed(n).ok)) {
    log("B14: installing the peers into bench/peers/node_modules (pinned by bench/peers/pnpm-lock.yaml)");
    const r = spawnSync(
      "pnpm",
      ["install", "--frozen-lockfile", "--ignore-workspace", "--prefer-offline", "--dir", PEERS_DIR],
      { encoding: "utf8", timeout: 10 * 60_000, stdio: ["ignore", "pipe", "pipe"] },
    );
    if (r.status !== 0)
      log(`B14: pnpm install of the peers failed: ${(r.stderr || r.stdout || String(r.error)).trim()}`);
  }
  const result = {};
  for (const name of names) {
    const s = installed(name);
    result[name] = s.ok
      ? { ok: true, version: s.have }
      : {
          ok: false,
          reason: `${name}@${s.wanted} not installed (have ${s.have ?? "none"}; see the pnpm install error above)`,
        };
  }
  return result;
}
