import type { DispatchLease } from "../../src/index.js";

export const SECRET = "test-secret";
export const AGENT = "test-agent";
export const LEASE: DispatchLease = {
  dispatchId: "01920000-0000-7000-8000-000000000001",
  attempt: 3,
  timeoutMs: 120_000,
};

/** A clock that moves one whole second per reading, so each attempt signs a different timestamp. */
export function tickingClock(startSeconds = 1_700_000_000): () => number {
  let t = startSeconds * 1000;
  return () => {
    const now = t;
    t += 1000;
    return now;
  };
}

/** Collects log lines instead of printing them. */
export function memoryLogger() {
  const lines: { message: string; fields: Readonly<Record<string, unknown>> | undefined }[] = [];
  return {
    lines,
    warn(message: string, fields?: Readonly<Record<string, unknown>>) {
      lines.push({ message, fields });
    },
  };
}
