/**
 * Kernel-side constructors for the protocol error family, with Go-style messages
 * (`"<sentinel>: <detail>"`, docs/protocol.md §2). Route code throws these; the core turns any
 * `KernelError` into the `{code, message}` envelope with its status.
 */
import {
  ConflictError,
  ForbiddenError,
  KernelError,
  LeaseSuperseded,
  NotFoundError,
  Terminated,
  UnauthorizedError,
  ValidationError,
} from "@rebuno/protocol";

/** 400 `validation_error: <detail>`. */
export function invalid(detail: string): ValidationError {
  return new ValidationError(`validation error: ${detail}`);
}

/** 401 `unauthorized`. */
export function unauthorized(detail?: string): UnauthorizedError {
  return new UnauthorizedError(detail === undefined ? "unauthorized" : `unauthorized: ${detail}`);
}

/** 403 `forbidden`. */
export function forbidden(detail?: string): ForbiddenError {
  return new ForbiddenError(detail === undefined ? "forbidden" : `forbidden: ${detail}`);
}

/** 404 `not found`. */
export function notFound(what?: string): NotFoundError {
  return new NotFoundError(what === undefined ? "not found" : `not found: ${what}`);
}

/** 409 `conflict: <detail>`. */
export function conflict(detail: string): ConflictError {
  return new ConflictError(`conflict: ${detail}`);
}

/** 409 `lease_superseded`. */
export function leaseSuperseded(): LeaseSuperseded {
  return new LeaseSuperseded("dispatch lease superseded");
}

/** 409 `execution_terminal`. */
export function executionTerminal(): Terminated {
  return new Terminated("execution terminal");
}

/** 405 with the generic kernel error class (no dedicated wire code exists). */
export function methodNotAllowed(): KernelError {
  return new KernelError("method not allowed", { status: 405, code: "method_not_allowed" });
}
