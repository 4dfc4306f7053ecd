/**
 * The `rebuno` command's exit codes (documented in docs/cli.md) and the mapping from the Rebuno
 * error family to them. Scripts branch on these, so they never change meaning.
 */
import {
  ConfigurationError,
  ConflictError,
  ForbiddenError,
  KernelError,
  NetworkError,
  NotFoundError,
  NotSupportedByKernel,
  RebunoError,
  TimeoutError,
  UnauthorizedError,
  ValidationError,
} from "@rebuno/protocol";

export const EXIT = {
  /** The command did what it says (for `exec watch`: the execution completed). */
  ok: 0,
  /** Anything not covered below (an unexpected answer, a bug). */
  error: 1,
  /** Bad usage: unknown command or option, missing argument, invalid `--input` JSON, unreadable file, bad setting. */
  usage: 2,
  /** The kernel does not know the execution, approval, agent or step (404). */
  notFound: 3,
  /** The kernel refused the credentials (401) or the key lacks the scope (403). */
  auth: 4,
  /** The kernel could not be reached (connection refused, DNS, timeout). */
  unreachable: 5,
  /** The request conflicts with the current state (409), e.g. cancelling a finished execution. */
  conflict: 6,
  /** The kernel rejected the request as invalid (400), e.g. a policy bundle that does not compile. */
  invalid: 7,
  /** The kernel's protocol generation lacks the feature (e.g. API keys on a `legacy` kernel). */
  notSupported: 8,
  /** `exec watch`: the execution failed. */
  executionFailed: 10,
  /** `exec watch`: the execution was cancelled. */
  executionCancelled: 11,
  /** `policy test --executions` / `--execution`: at least one recorded decision would change. */
  decisionsChanged: 12,
} as const;

/** An error for bad command-line input (exit 2), with the message the user must read. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

/** The exit code for an error thrown by a command. */
export function exitCodeFor(error: unknown): number {
  if (error instanceof UsageError || ConfigurationError.isInstance(error)) return EXIT.usage;
  if (NotFoundError.isInstance(error)) return EXIT.notFound;
  if (UnauthorizedError.isInstance(error) || ForbiddenError.isInstance(error)) return EXIT.auth;
  if (NetworkError.isInstance(error) || TimeoutError.isInstance(error)) return EXIT.unreachable;
  if (ConflictError.isInstance(error)) return EXIT.conflict;
  if (ValidationError.isInstance(error)) return EXIT.invalid;
  if (NotSupportedByKernel.isInstance(error)) return EXIT.notSupported;
  // Other kernel answers by HTTP status: e.g. the older Go kernel's 409 `execution_terminal`
  // (a `Terminated`) for cancelling a finished execution is the same conflict as a 409 `conflict`.
  if (KernelError.isInstance(error)) {
    if (error.status === 409) return EXIT.conflict;
    if (error.status === 404) return EXIT.notFound;
    if (error.status === 401 || error.status === 403) return EXIT.auth;
    if (error.status === 400 || error.status === 422) return EXIT.invalid;
  }
  return EXIT.error;
}

/** One line for stderr: the error's message, plus its code when it is one of ours. */
export function errorMessage(error: unknown): string {
  if (RebunoError.isInstance(error)) {
    const status = error.status === undefined ? "" : ` ${error.status}`;
    return `${error.message} (${error.code}${status})`;
  }
  return error instanceof Error ? error.message : String(error);
}
