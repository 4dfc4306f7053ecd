/**
 * The tour's crash-and-redeliver case (examples/tour/stages.ts, stage 4) against a given dev
 * kernel: a fulfilment agent in a child process is SIGKILLed while print_label and charge_card
 * both run; a replacement agent is registered; after the lease expires the kernel redelivers,
 * print_label runs again, charge_card comes back indeterminate and the agent calls find_charge.
 * Used by the waterfall's unit test (derive.test.ts) and the console's browser test.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { Client } from "@rebuno/client";
import type { DevKernel } from "@rebuno/dev-kernel";
import type { Execution } from "@rebuno/protocol";

const fixture = fileURLToPath(new URL("./fixtures/crash-agent.ts", import.meta.url));
const tsconfig = fileURLToPath(new URL("./fixtures/tsconfig.json", import.meta.url));

/** Dispatch settings that make the lease expire within a second of the crash. */
export const FAST_LEASE = {
  leaseTimeoutSeconds: 1,
  reapIntervalMs: 100,
  pollMs: 20,
  backoffBaseMs: 50,
  backoffMaxMs: 200,
};

interface AgentProcess {
  readonly child: ChildProcess;
  readonly url: Promise<string>;
  started(tool: string): Promise<void>;
}

function startAgent(kernelUrl: string, secret: string, hang: boolean): AgentProcess {
  const child = spawn(process.execPath, ["--import", "tsx", fixture], {
    env: {
      ...process.env,
      REBUNO_URL: kernelUrl,
      REBUNO_AGENT_SECRET: secret,
      HANG: hang ? "1" : "0",
      TSX_TSCONFIG_PATH: tsconfig,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  const listeners: (() => void)[] = [];
  let stderr = "";
  child.stderr?.on("data", (c: Buffer) => (stderr += c.toString()));
  child.stdout?.on("data", (c: Buffer) => {
    lines.push(...c.toString().split("\n").filter(Boolean));
    for (const l of listeners) l();
  });
  const waitFor = (prefix: string) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        const line = lines.find((l) => l.startsWith(prefix));
        if (line !== undefined) resolve(line);
      };
      child.once("exit", (code, signal) => {
        if (signal !== "SIGKILL")
          reject(new Error(`crash agent exited (${code ?? signal}) before "${prefix}": ${stderr}`));
      });
      listeners.push(check);
      check();
    });
  return {
    child,
    url: waitFor("LISTENING ").then((l) => l.slice("LISTENING ".length)),
    started: (tool) => waitFor(`STARTED ${tool}`).then(() => undefined),
  };
}

/** Run the crash case to completion; returns the execution and the agent processes to stop. */
export async function runCrashAndRedeliver(
  kernel: DevKernel,
  kernelUrl: string,
  client: Client,
  secret: string,
): Promise<{ execution: Execution; children: ChildProcess[] }> {
  const first = startAgent(kernelUrl, secret, true);
  const children = [first.child];
  kernel.registerAgent({ id: "fulfilment", webhookUrl: await first.url, secret });
  const created = await client.create("fulfilment", { order: "A-1001" });
  await first.started("print_label");
  await first.started("charge_card");
  const second = startAgent(kernelUrl, secret, false);
  children.push(second.child);
  kernel.registerAgent({ id: "fulfilment", webhookUrl: await second.url, secret });
  first.child.kill("SIGKILL");
  const execution = await client.waitForTerminal(created.id);
  return { execution, children };
}
