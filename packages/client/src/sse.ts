/**
 * Server-sent events decoding for `GET /v0/executions/{id}/stream` (docs/protocol.md §4.5).
 *
 * The kernel writes frames `data: {"step_id":"…","seq":N,"data":"…"}\n\n` and a comment
 * `: keep-alive\n\n` every 15 s. Network chunks do not respect any of those boundaries: a frame,
 * a line ending (`\r` | `\n` | `\r\n`) or even a multi-byte UTF-8 character can be split across two
 * chunks, so the decoder below keeps the unfinished tail between `push` calls.
 */

/** One dispatched SSE message (the fields the WHATWG event-stream format defines). */
export interface SseMessage {
  /** The `event:` field; `"message"` when the frame named none. */
  readonly event: string;
  /** All `data:` lines of the frame joined with `\n`. */
  readonly data: string;
  /** The last `id:` seen on the stream so far, when there was one. */
  readonly lastEventId?: string;
}

/**
 * Incremental decoder for the `text/event-stream` format. Feed it raw bytes (or already-decoded
 * text) with {@link SseDecoder.push}; it returns every message completed by that chunk. Comment
 * lines (`: keep-alive`) are consumed silently, as the format requires.
 */
export class SseDecoder {
  // `stream: true` keeps a split multi-byte character until its remaining bytes arrive.
  readonly #utf8 = new TextDecoder("utf-8");
  #buffer = "";
  // A chunk that ended with `\r` may be followed by a chunk starting with `\n`: that pair is one
  // line break, so the `\n` must not end a second (empty) line and dispatch a frame early.
  #skipLeadingLf = false;
  #data: string[] = [];
  #hasData = false;
  #event = "";
  #lastEventId: string | undefined;

  /** Decode one chunk and return the messages it completed (possibly none). */
  push(chunk: Uint8Array | string): SseMessage[] {
    let text = typeof chunk === "string" ? chunk : this.#utf8.decode(chunk, { stream: true });
    if (this.#skipLeadingLf && text.length > 0) {
      if (text.startsWith("\n")) text = text.slice(1);
      this.#skipLeadingLf = false;
    }
    this.#buffer += text;
    const out: SseMessage[] = [];
    let start = 0;
    for (let i = 0; i < this.#buffer.length; i++) {
      const ch = this.#buffer.charCodeAt(i);
      if (ch !== 10 /* \n */ && ch !== 13 /* \r */) continue;
      this.#line(this.#buffer.slice(start, i), out);
      if (ch === 13) {
        if (i + 1 < this.#buffer.length) {
          if (this.#buffer.charCodeAt(i + 1) === 10) i++;
        } else {
          this.#skipLeadingLf = true;
        }
      }
      start = i + 1;
    }
    this.#buffer = this.#buffer.slice(start);
    return out;
  }

  /**
   * Signal the end of the stream. Per the format an unterminated final frame is discarded (the
   * server closed mid-frame), so this returns nothing; it only flushes decoder state.
   */
  end(): void {
    this.#utf8.decode();
    this.#buffer = "";
    this.#resetFrame();
  }

  #line(line: string, out: SseMessage[]): void {
    if (line === "") {
      this.#dispatch(out);
      return;
    }
    if (line.startsWith(":")) return; // comment, e.g. the kernel's `: keep-alive`
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    switch (field) {
      case "data":
        this.#data.push(value);
        this.#hasData = true;
        break;
      case "event":
        this.#event = value;
        break;
      case "id":
        // The format ignores ids containing NUL.
        if (!value.includes("\0")) this.#lastEventId = value;
        break;
      default:
        // `retry:` and unknown fields carry nothing this client uses.
        break;
    }
  }

  #dispatch(out: SseMessage[]): void {
    if (this.#hasData) {
      const message: SseMessage = {
        event: this.#event === "" ? "message" : this.#event,
        data: this.#data.join("\n"),
        ...(this.#lastEventId === undefined ? {} : { lastEventId: this.#lastEventId }),
      };
      out.push(message);
    }
    this.#resetFrame();
  }

  #resetFrame(): void {
    this.#data = [];
    this.#hasData = false;
    this.#event = "";
  }
}

/** Deltas a subscriber did not receive for one step (the kernel drops deltas for slow readers). */
export interface StreamGap {
  /** The `seq` this step should have had next. */
  readonly expectedSeq: number;
  /** How many deltas are missing before this one (`seq - expectedSeq`). */
  readonly missed: number;
}

/** One live stream delta published by a step (an LLM token chunk, tool progress…). */
export interface StreamDelta {
  /** The step that published it. */
  readonly stepId: string;
  /** Per-step sequence number; the SDKs number each step's deltas from 0. */
  readonly seq: number;
  /** The delta text as published. */
  readonly data: string;
  /**
   * Set when deltas of this step were missed before this one: the kernel keeps a 64-delta buffer
   * per subscriber and drops deltas for a slow one, and there is no replay, so a subscriber that
   * connected after a step started also sees a gap on that step's first delta.
   */
  readonly gap?: StreamGap;
}

/**
 * Tracks the next expected `seq` of every step and annotates deltas with {@link StreamGap}s.
 * A delta whose `seq` is lower than expected (a duplicate or a reordering) is passed through
 * without moving the expectation back.
 */
export class StreamSequencer {
  readonly #next = new Map<string, number>();

  /** Annotate one delta with its gap, if any, and remember its step's position. */
  accept(delta: { stepId: string; seq: number; data: string }): StreamDelta {
    const expected = this.#next.get(delta.stepId) ?? 0;
    if (delta.seq < expected) return { stepId: delta.stepId, seq: delta.seq, data: delta.data };
    this.#next.set(delta.stepId, delta.seq + 1);
    if (delta.seq === expected) return { stepId: delta.stepId, seq: delta.seq, data: delta.data };
    return {
      stepId: delta.stepId,
      seq: delta.seq,
      data: delta.data,
      gap: { expectedSeq: expected, missed: delta.seq - expected },
    };
  }
}

/**
 * Parse the JSON payload of one stream frame. Returns `undefined` for a payload that is not a
 * `{step_id: string, seq: integer, data: string}` object, so the caller can log and skip it.
 */
export function parseStreamFrame(data: string): { stepId: string; seq: number; data: string } | undefined {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const v = value as Record<string, unknown>;
  if (typeof v.step_id !== "string" || typeof v.data !== "string") return undefined;
  if (typeof v.seq !== "number" || !Number.isSafeInteger(v.seq) || v.seq < 0) return undefined;
  return { stepId: v.step_id, seq: v.seq, data: v.data };
}
