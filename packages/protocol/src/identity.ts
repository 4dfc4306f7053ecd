import { hash } from "node:crypto";
import { canonicalJson, canonicalJsonText } from "./canonical-json.js";

// One-shot crypto.hash (Node ≥ 20.12; engines requires 20.19) skips the Hash object and its
// update/digest calls: about half the cost of createHash() for the few hundred bytes of args.
function sha256Hex(text: string): string {
  return hash("sha256", text, "hex");
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
  // One string and one hash call: the same bytes as one update per field, since the ASCII length
  // prefixes between fields keep a lone surrogate at a field's edge from pairing with a neighbour.
  const occ = String(occurrence);
  const message =
    `${Buffer.byteLength(executionId, "utf8")}:${executionId}` +
    `${Buffer.byteLength(kind, "utf8")}:${kind}` +
    `${Buffer.byteLength(target, "utf8")}:${target}` +
    `${Buffer.byteLength(argsHash, "utf8")}:${argsHash}` +
    `${occ.length}:${occ}`;
  return hash("sha256", message, "hex");
}
