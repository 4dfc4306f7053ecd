import { RebunoError } from "@rebuno/protocol";

/** What a child process printed before the kit gave up on it (the tail of each stream). */
export interface ChildProcessOutput {
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * A child process a suite started did not do what the suite waited for: it exited first, or the
 * awaited output never came within the bound. Carries the command and the output for the failure
 * message, so a failed start explains itself.
 */
export class ChildProcessFailed extends RebunoError {
  static {
    ChildProcessFailed.prototype.name = "ChildProcessFailed";
  }
  /** The command line, for the message. */
  readonly command: string;
  /** What was awaited: a line prefix or an output pattern. */
  readonly awaited: string;
  /** Exit code or signal when the process ended first; undefined on a timeout. */
  readonly exit: { readonly code: number | null; readonly signal: NodeJS.Signals | null } | undefined;
  readonly output: ChildProcessOutput;

  constructor(fields: {
    command: string;
    awaited: string;
    exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    timeoutMs: number;
    output: ChildProcessOutput;
  }) {
    const why =
      fields.exit === undefined
        ? `not within ${fields.timeoutMs} ms`
        : `it exited first (code ${fields.exit.code}, signal ${fields.exit.signal})`;
    super(
      `${fields.command}: no ${fields.awaited}, ${why}\n--- stdout\n${fields.output.stdout}\n--- stderr\n${fields.output.stderr}`,
      { code: "child_process_failed" },
    );
    this.command = fields.command;
    this.awaited = fields.awaited;
    this.exit = fields.exit;
    this.output = fields.output;
  }
}
