import { type ChildProcess, spawn } from "node:child_process";
import { ChildProcessFailed } from "./errors.js";

/** How long a wait on a child's output lasts before it fails (processes start slowly under load). */
export const DEFAULT_WAIT_MS = 30_000;

export interface LineProcessOptions {
  readonly cwd?: string;
  /** The whole environment of the child (default: this process's). */
  readonly env?: NodeJS.ProcessEnv;
  /** Bound of every wait on this process's output, unless the wait names its own. */
  readonly timeoutMs?: number;
}

export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/**
 * A child process whose stdout is read as lines: waits on a line or a pattern resolve as soon as
 * it is printed and fail with `ChildProcessFailed` (the output attached) when the process exits
 * first or the bound passes. Conditions, not sleeps: nothing here waits a fixed time.
 */
export class LineProcess {
  readonly child: ChildProcess;
  /** Complete stdout lines so far, in order. */
  readonly lines: string[] = [];
  /** Settles when the process has exited (never rejects). */
  readonly exited: Promise<Exit>;
  readonly #command: string;
  readonly #timeoutMs: number;
  #stdout = "";
  #stderr = "";
  #partial = "";
  #exit: Exit | undefined;
  readonly #listeners = new Set<() => void>();

  constructor(command: string, args: readonly string[], options: LineProcessOptions = {}) {
    this.#command = [command, ...args].join(" ");
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_WAIT_MS;
    this.child = spawn(command, args, {
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      env: options.env ?? process.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.child.stdout!.on("data", (chunk: Buffer) => {
      const text = chunk.toString();
      this.#stdout += text;
      const parts = (this.#partial + text).split("\n");
      this.#partial = parts.pop() ?? "";
      this.lines.push(...parts);
      this.#notify();
    });
    this.child.stderr!.on("data", (chunk: Buffer) => {
      this.#stderr += chunk.toString();
    });
    this.exited = new Promise((resolve) => {
      // "close", not "exit": stdout may still deliver lines after the exit event.
      this.child.once("close", (code, signal) => {
        this.#exit = { code, signal };
        this.#notify();
        resolve(this.#exit);
      });
      // A command that cannot start at all (ENOENT) ends here, not in an unhandled error.
      this.child.once("error", (error) => {
        this.#stderr += String(error);
        if (this.#exit === undefined) {
          this.#exit = { code: null, signal: null };
          this.#notify();
          resolve(this.#exit);
        }
      });
    });
  }

  stdout(): string {
    return this.#stdout;
  }

  stderr(): string {
    return this.#stderr;
  }

  /** True until the process has exited. */
  get running(): boolean {
    return this.#exit === undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** The first stdout line starting with `prefix` (printed already or to come). */
  waitForLine(prefix: string, timeoutMs = this.#timeoutMs): Promise<string> {
    return this.#waitFor(`line "${prefix}…"`, timeoutMs, () => this.lines.find((l) => l.startsWith(prefix)));
  }

  /** The first match of `pattern` in everything printed on stdout so far (or to come). */
  waitForOutput(pattern: RegExp, timeoutMs = this.#timeoutMs): Promise<RegExpExecArray> {
    return this.#waitFor(`output ${pattern}`, timeoutMs, () => pattern.exec(this.#stdout) ?? undefined);
  }

  /** Send `signal` (SIGKILL by default) and resolve once the process has exited. */
  async kill(signal: NodeJS.Signals = "SIGKILL"): Promise<Exit> {
    if (this.running) this.child.kill(signal);
    return this.exited;
  }

  #notify(): void {
    for (const listener of [...this.#listeners]) listener();
  }

  #waitFor<T>(awaited: string, timeoutMs: number, check: () => T | undefined): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const finish = (settle: () => void) => {
        clearTimeout(timer);
        this.#listeners.delete(listener);
        settle();
      };
      const fail = (exit: Exit | undefined) =>
        new ChildProcessFailed({
          command: this.#command,
          awaited,
          exit,
          timeoutMs,
          output: { stdout: this.#stdout, stderr: this.#stderr },
        });
      const listener = () => {
        const found = check();
        if (found !== undefined) finish(() => resolve(found));
        else if (this.#exit !== undefined) finish(() => reject(fail(this.#exit)));
      };
      const timer = setTimeout(() => finish(() => reject(fail(undefined))), timeoutMs);
      this.#listeners.add(listener);
      listener();
    });
  }
}

/**
 * The child processes one test file started, killed together in its teardown (`afterEach` or
 * `afterAll`): a failed test never leaves a kernel or an agent running.
 */
export class ProcessGroup {
  readonly #processes = new Set<LineProcess>();

  spawn(command: string, args: readonly string[], options: LineProcessOptions = {}): LineProcess {
    return this.add(new LineProcess(command, args, options));
  }

  add(process: LineProcess): LineProcess {
    this.#processes.add(process);
    return process;
  }

  /** SIGKILL every process still running and wait for each to exit. */
  async killAll(): Promise<void> {
    const all = [...this.#processes];
    this.#processes.clear();
    await Promise.all(all.map((p) => p.kill("SIGKILL")));
  }
}
