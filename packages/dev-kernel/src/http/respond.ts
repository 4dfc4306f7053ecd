import { type KernelError, stringifyJson } from "@rebuno/protocol";
import type { CoreBodyResponse } from "./types.js";

/** Headers of every JSON answer (one shared object, which the `node:http` adapter recognizes). */
export const JSON_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "content-type": "application/json; charset=utf-8",
});
const EMPTY_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

/** A JSON answer: one document followed by a newline, like Go's `json.Encoder`. */
export function json(status: number, value: unknown): CoreBodyResponse {
  return { status, headers: JSON_HEADERS, body: `${stringifyJson(value)}\n` };
}

/** A JSON answer from already-serialized JSON text. */
export function jsonText(status: number, text: string): CoreBodyResponse {
  return { status, headers: JSON_HEADERS, body: `${text}\n` };
}

/** `204 No Content` (no body, no content type). */
export function noContent(): CoreBodyResponse {
  return { status: 204, headers: EMPTY_HEADERS, body: "" };
}

/** The error envelope `{code, message, details?}` for a kernel error. */
export function errorResponse(err: KernelError, extraHeaders?: Record<string, string>): CoreBodyResponse {
  const envelope: { code: string; message: string; details?: string } = {
    code: err.code,
    message: err.message,
  };
  if (typeof err.details === "string" && err.details !== "") envelope.details = err.details;
  const headers = extraHeaders === undefined ? JSON_HEADERS : { ...JSON_HEADERS, ...extraHeaders };
  return { status: err.status, headers, body: `${JSON.stringify(envelope)}\n` };
}
