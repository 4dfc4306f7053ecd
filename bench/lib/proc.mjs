// CPU and memory of a process tree from /proc (Linux), for the benches. In B14 a system under test
// is its server process (rebuno-dev, restate-server, the PostgreSQL postmaster) plus its worker
// process, and each may fork (PostgreSQL's backends), so figures are summed over every live
// descendant.
import { readdirSync, readFileSync } from "node:fs";

const TICK_US = 1e6 / 100; // USER_HZ is 100 on Linux for every architecture Node ships
const PAGE_KIB = 4;

/** Fields of /proc/<pid>/stat after the command name (which may contain spaces and parens). */
function statFields(pid) {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    return text.slice(text.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined; // exited in between
  }
}

/** Every live pid with its parent, read once per sample. */
function parents() {
  const map = new Map();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const f = statFields(name);
    if (f !== undefined) map.set(Number(name), Number(f[1]));
  }
  return map;
}

/** `roots` and all their live descendants. */
export function tree(roots) {
  const ppid = parents();
  const all = new Set(roots.filter((p) => ppid.has(p)));
  let grew = true;
  while (grew) {
    grew = false;
    for (const [pid, parent] of ppid)
      if (!all.has(pid) && all.has(parent)) {
        all.add(pid);
        grew = true;
      }
  }
  return [...all];
}

/**
 * CPU (µs, user + system, including reaped children's) and RSS (KiB) of the trees under `roots`.
 * A child that exited and was waited for is in its parent's cutime/cstime, so nothing is lost and
 * nothing is counted twice.
 */
export function sampleTree(roots) {
  let ticks = 0;
  let rssPages = 0;
  for (const pid of tree(roots)) {
    const f = statFields(pid);
    if (f === undefined) continue;
    // After ")": state(0) ppid(1) … utime(11) stime(12) cutime(13) cstime(14) … rss(21)
    ticks += Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
    rssPages += Number(f[21]);
  }
  return { cpuUs: ticks * TICK_US, rssKiB: rssPages * PAGE_KIB };
}
