/**
 * The two-process quickstart as a user runs it: `rebuno-dev --config rebuno.yaml` in one process,
 * `tsx agent.ts` in another, then `rebuno exec create` and `rebuno exec watch` as commands. Every
 * process is a real child process; they talk only over loopback HTTP.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { freePorts, REBUNO_DEV_BIN } from "@rebuno/test-kit";
import { afterEach, describe, expect, it } from "vitest";

const run = promisify(execFile);
const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));
const ROOT = here("../../../");
const CLI_BIN = here("../../../packages/cli/bin/rebuno.js");
const children: ChildProcess[] = [];

afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
    await exited;
    clearTimeout(timer);
  }
});

/** Starts a process and resolves once its output contains `ready` (bounded). */
function start(args: string[], env: NodeJS.ProcessEnv, ready: RegExp): Promise<ChildProcess> {
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`not ready in 20 s: ${out}`)), 20_000);
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      if (ready.test(out)) {
        clearTimeout(timer);
        resolve(child);
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before ready: ${out}`));
    });
  });
}

describe("examples/two-process", () => {
  it("kernel and agent as two processes: an execution started from the CLI completes", async () => {
    const [kernelPort, agentPort] = await freePorts(2);
    const env = {
      ...process.env,
      REBUNO_URL: `http://127.0.0.1:${kernelPort}`,
      REBUNO_AGENT_SECRET: randomBytes(16).toString("hex"),
      AGENT_PORT: String(agentPort),
    };
    await start(
      [REBUNO_DEV_BIN, "--config", "examples/two-process/rebuno.yaml", "--listen", `127.0.0.1:${kernelPort}`],
      env,
      /listening on/,
    );
    await start(["--import", "tsx", "examples/two-process/agent.ts"], env, /agent greeter listening on/);

    const created = await run(
      process.execPath,
      [CLI_BIN, "exec", "create", "--agent", "greeter", "--input", '{"name":"Ada"}', "--json"],
      { cwd: ROOT, env, timeout: 20_000 },
    );
    const id = (JSON.parse(created.stdout) as { id: string }).id;
    const watched = await run(process.execPath, [CLI_BIN, "exec", "watch", id], {
      cwd: ROOT,
      env,
      timeout: 30_000,
    });
    expect(watched.stdout).toMatch(/greet/);
    const got = await run(process.execPath, [CLI_BIN, "exec", "get", id, "--json"], {
      cwd: ROOT,
      env,
      timeout: 20_000,
    });
    const execution = JSON.parse(got.stdout) as { status: string; output: unknown };
    expect(execution.status).toBe("completed");
    expect(execution.output).toMatch(/^hello, Ada \(ticket \d+\)$/);
    // A kernel, a tsx agent and three CLI processes start here: on a loaded machine that can take
    // longer than the 30 s default.
  }, 90_000);
});
