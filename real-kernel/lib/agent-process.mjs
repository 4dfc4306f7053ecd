// Runs real-kernel/fixtures/agent.ts (an agent built with @rebuno/sdk) as a child process, as a
// deployment would: configured by environment, killed with SIGKILL to simulate a crash.
import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const FIXTURE = path.join(HERE, "..", "fixtures", "agent.ts");
const TSCONFIG = path.join(HERE, "..", "fixtures", "tsconfig.json");

/** Start the agent; resolves once it prints `LISTENING <url>`. */
export function startAgentProcess(env, { timeoutMs = 30_000 } = {}) {
  const child = spawn(process.execPath, ["--import", "tsx", FIXTURE], {
    env: { ...process.env, TSX_TSCONFIG_PATH: TSCONFIG, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines = [];
  let stderr = "";
  let partial = "";
  const waiters = [];
  child.stderr.on("data", (c) => {
    stderr = (stderr + c.toString()).slice(-8000);
  });
  child.stdout.on("data", (c) => {
    partial += c.toString();
    const parts = partial.split("\n");
    partial = parts.pop();
    for (const line of parts) {
      lines.push(line);
      for (const w of waiters.filter((x) => line.startsWith(x.prefix))) w.resolve(line);
    }
  });
  const exited = new Promise((r) => child.once("exit", r));
  const waitFor = (prefix, ms = timeoutMs) =>
    new Promise((resolve, reject) => {
      const hit = lines.find((l) => l.startsWith(prefix));
      if (hit) return resolve(hit);
      const t = setTimeout(
        () => reject(new Error(`agent printed no "${prefix}" in ${ms} ms; stderr: ${stderr}`)),
        ms,
      );
      waiters.push({
        prefix,
        resolve: (line) => {
          clearTimeout(t);
          resolve(line);
        },
      });
    });
  const proc = {
    child,
    lines,
    stderr: () => stderr,
    /** `BODY <tool> <execution> <key>` lines, parsed. */
    bodies: () =>
      lines
        .filter((l) => l.startsWith("BODY "))
        .map((l) => {
          const [, tool, executionId, key] = l.split(" ");
          return { tool, executionId, key };
        }),
    waitFor,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
  };
  return Promise.race([
    waitFor("LISTENING").then((line) => ({ ...proc, url: line.slice("LISTENING ".length) })),
    exited.then((code) => {
      throw new Error(`agent exited (${code}) before listening; stderr: ${stderr}`);
    }),
  ]).catch(async (err) => {
    await proc.kill();
    throw err;
  });
}
