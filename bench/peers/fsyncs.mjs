// How many fsync-family calls a system's processes make per durable step: the evidence for what
// "each system at the durability it promises" costs. strace attaches to every live process (and
// thread) of the system for a few sequential workflows, off the timed phases.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { tree } from "../lib/proc.mjs";

const SYNC_CALLS = ["fsync", "fdatasync", "sync_file_range", "msync"];

/** Why fsyncs cannot be counted here, or undefined when strace works. */
export function straceUnavailable() {
  const r = spawnSync("strace", ["-qq", "-e", "trace=none", "true"], { encoding: "utf8" });
  if (r.error !== undefined) return `strace not installed (${r.error.message})`;
  return r.status === 0 ? undefined : `strace cannot trace here: ${r.stderr.trim()}`;
}

/**
 * Count sync calls of the trees under `roots` while `work()` runs; resolves with the counts per
 * call and the seconds spent inside them (as strace measures: tracing inflates it somewhat).
 */
export async function countSyncCalls(roots, work) {
  const dir = mkdtempSync(join(tmpdir(), "bench-b14-strace-"));
  const log = join(dir, "strace.log");
  const pids = tree(roots);
  const strace = spawn(
    "strace",
    // -T: time spent in each call; --seccomp-bpf: only the traced calls stop the tracee.
    [
      "-f",
      "-T",
      "--seccomp-bpf",
      "-e",
      `trace=${SYNC_CALLS.join(",")}`,
      "-o",
      log,
      ...pids.flatMap((p) => ["-p", String(p)]),
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  try {
    let err = "";
    // strace prints one "Process N attached" per thread; wait until every process is attached.
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`strace did not attach: ${err}`)), 30_000);
      strace.stderr.on("data", (d) => {
        err += d;
        if (pids.every((p) => err.includes(`Process ${p} attached`))) {
          clearTimeout(timer);
          resolve();
        }
      });
      strace.once("exit", (code) => reject(new Error(`strace exited ${code}: ${err}`)));
    });
    await work();
    const exited = new Promise((resolve) => strace.once("exit", resolve));
    strace.kill("SIGINT"); // detach; the system keeps running
    await exited;
    const counts = Object.fromEntries(SYNC_CALLS.map((c) => [c, 0]));
    let seconds = 0;
    for (const line of readFileSync(log, "utf8").split("\n")) {
      // A call is one line, or an "<unfinished ...>" line and a "<... NAME resumed>" line.
      const m = /^\d+\s+(\w+)\(/.exec(line);
      if (m !== null && m[1] in counts) counts[m[1]]++;
      const t = /<([\d.]+)>$/.exec(line);
      if (t !== null) seconds += Number(t[1]);
    }
    return { counts, seconds };
  } finally {
    if (strace.exitCode === null) strace.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  }
}
