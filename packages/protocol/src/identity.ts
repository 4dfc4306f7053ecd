import { createHash } from "node:crypto";
import { canonicalJson, canonicalJsonText } from "./canonical-json.js";

function sha256Hex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/** `hex(sha256(canonical_json(args)))` for a JS value (strict, see `toWireJson`). */
export function argsHash(args: unknown): string {
  return sha256Hex(canonicalJson(args));
}

/**
 * `hex(sha256(canonical_json(raw)))` for the raw `args` text of a request body; absent or empty →
 * the hash of `null`, as in the kernel. Invalid JSON → `ValidationError`.
 */
export function argsHashFromText(text: string | Uint8Array | undefined): string {
  return sha256Hex(text === undefined ? "null" : canonicalJsonText(text));
}

/**
 * Deterministic step id (protocol §5.1): sha256 over the length-prefixed fields
 * `len(utf8(f)) ":" f` for execution id, kind, target, args hash and decimal occurrence.
 */
export function computeStepId(
  executionId: string,
  kind: string,
  target: string,
  argsHash: string,
  occurrence: number,
): string {
  if (!Number.isSafeInteger(occurrence) || occurrence < 0) {
    throw new RangeError(`occurrence must be a non-negative integer, got ${occurrence}`);
  }
  const h = createHash("sha256");
  for (const field of [executionId, kind, target, argsHash, String(occurrence)]) {
    h.update(`${Buffer.byteLength(field, "utf8")}:`, "utf8").update(field, "utf8");
  }
  return h.digest("hex");
}
