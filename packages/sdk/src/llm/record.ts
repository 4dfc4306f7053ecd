/** The recorded form of an LLM response, and rebuilding a Response from it (F29–F30). */

/** What an `llm_call` step records: status, content type and the whole body text. */
export interface LlmRecord {
  readonly status: number;
  readonly headers: { readonly "content-type": string };
  readonly body: string;
}

// Length and encoding describe the original bytes, not the decoded text we hand back.
const DROPPED_HEADERS = ["content-length", "content-encoding", "transfer-encoding"];

/** A Response carrying `text`, with the original status and headers minus length/encoding. */
export function responseWithText(text: string | ReadableStream<Uint8Array>, original: Response): Response {
  const headers = new Headers(original.headers);
  for (const name of DROPPED_HEADERS) headers.delete(name);
  return new Response(text, { status: original.status, statusText: original.statusText, headers });
}

function isRecord(value: unknown): value is LlmRecord {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as LlmRecord).status === "number" &&
    typeof (value as LlmRecord).body === "string"
  );
}

/**
 * Rebuilds the provider's response from a record: status, content type and body only (a
 * `text/event-stream` body is served as a stream). A legacy non-record value replays as a 200
 * JSON response of that value.
 */
export function responseFromRecord(value: unknown): Response {
  if (!isRecord(value)) {
    return new Response(JSON.stringify(value ?? null), {
      status: 200,
      headers: { "content-type": "application/json" },
    });
  }
  const contentType = value.headers?.["content-type"] || "application/json";
  // 1xx/204/304 cannot carry a body in a Response.
  const bodyless = value.status === 204 || value.status === 304;
  return new Response(bodyless ? null : value.body, {
    status: value.status,
    headers: { "content-type": contentType },
  });
}

/** True for `text/event-stream` (media type compared lowercase, parameters ignored). */
export function isEventStream(contentType: string | null): boolean {
  if (contentType === null) return false;
  const semi = contentType.indexOf(";");
  return (
    (semi === -1 ? contentType : contentType.slice(0, semi)).trim().toLowerCase() === "text/event-stream"
  );
}
