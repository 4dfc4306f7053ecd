// `#crypto`: node:crypto's one-shot hash on Node, Deno and Bun; @noble/hashes elsewhere.
import { sha256Hex, utf8Length } from "#crypto";
import { canonicalJson, canonicalJsonText } from "./canonical-json.js";

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
 * Deterministic step id (docs/protocol.md §5.1): sha256 over the length-prefixed fields
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
    `${utf8Length(executionId)}:${executionId}` +
    `${utf8Length(kind)}:${kind}` +
    `${utf8Length(target)}:${target}` +
    `${utf8Length(argsHash)}:${argsHash}` +
    `${occ.length}:${occ}`;
  return sha256Hex(message);
}
