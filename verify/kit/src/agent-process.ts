import { LineProcess, type ProcessGroup } from "./line-process.js";

export interface AgentProcessOptions {
  /** The agent's TypeScript entry point, run through tsx. */
  readonly fixture: string;
  /** tsx's tsconfig (`TSX_TSCONFIG_PATH`): maps `@rebuno/*` to the packages' sources. */
  readonly tsconfig: string;
  /** Added to this process's environment (the agent is configured by environment, as deployed). */
  readonly env?: NodeJS.ProcessEnv;
  readonly group?: ProcessGroup;
  readonly timeoutMs?: number;
}

export interface AgentProcess {
  /** The webhook URL the agent printed (`LISTENING <url>`). */
  readonly url: string;
  readonly process: LineProcess;
}

/**
 * An agent in a child process, as a deployment runs one: it prints `LISTENING <url>` once it
 * serves, and the suite kills it with SIGKILL to play a crash. A failed start kills the process
 * and rejects with `ChildProcessFailed`.
 */
export async function startAgentProcess(options: AgentProcessOptions): Promise<AgentProcess> {
  const process_ = new LineProcess(process.execPath, ["--import", "tsx", options.fixture], {
    env: { ...process.env, TSX_TSCONFIG_PATH: options.tsconfig, ...options.env },
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
  });
  options.group?.add(process_);
  try {
    const line = await process_.waitForLine("LISTENING ");
    return { url: line.slice("LISTENING ".length), process: process_ };
  } catch (error) {
    await process_.kill();
    throw error;
  }
}
