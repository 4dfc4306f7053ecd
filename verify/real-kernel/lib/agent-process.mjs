// Runs verify/real-kernel/fixtures/agent.ts (an agent built with @rebuno/sdk) as a child process, as a
// deployment would: configured by environment, killed with SIGKILL to simulate a crash. The process
// handling is the test kit's; this adds the fixture's `BODY` lines.
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startAgentProcess as startKitAgent } from "@rebuno/test-kit";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const FIXTURE = path.join(HERE, "..", "fixtures", "agent.ts");
const TSCONFIG = path.join(HERE, "..", "fixtures", "tsconfig.json");

/** Start the agent; resolves once it prints `LISTENING <url>`. */
export async function startAgentProcess(env, { timeoutMs = 30_000 } = {}) {
  const { url, process: agent } = await startKitAgent({
    fixture: FIXTURE,
    tsconfig: TSCONFIG,
    env,
    timeoutMs,
  });
  return {
    url,
    child: agent.child,
    lines: agent.lines,
    stderr: () => agent.stderr(),
    /** `BODY <tool> <execution> <key>` lines, parsed. */
    bodies: () =>
      agent.lines
        .filter((l) => l.startsWith("BODY "))
        .map((l) => {
          const [, tool, executionId, key] = l.split(" ");
          return { tool, executionId, key };
        }),
    waitFor: (prefix, ms = timeoutMs) => agent.waitForLine(prefix, ms),
    async kill() {
      await agent.kill();
    },
  };
}
