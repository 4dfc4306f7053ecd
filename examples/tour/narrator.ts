/**
 * Everything the tour prints goes through here, once as text for people and once as JSON lines
 * (`--json`) for programs: the same records, two renderings.
 */
import { formatEntry, type TimelineEntry } from "@rebuno/cli";
import type { ReplaySeen } from "./observe.js";

/** One record of the tour's output (the `--json` line format). */
export type TourRecord =
  | {
      readonly type: "stage";
      readonly stage: string;
      readonly n: number;
      readonly title: string;
      readonly explain: string;
    }
  | { readonly type: "note"; readonly stage: string; readonly text: string; readonly data?: unknown }
  | ({
      readonly type: "timeline";
      readonly stage: string;
      readonly label: string;
      readonly event: string;
    } & Omit<TimelineEntry, "type">)
  | ({ readonly type: "replay"; readonly stage: string; readonly label: string } & ReplaySeen)
  | { readonly type: "summary"; readonly stage: "summary"; readonly [key: string]: unknown };

export interface NarratorOptions {
  readonly json: boolean;
  readonly color: boolean;
  readonly write: (text: string) => void;
}

const BOLD = (s: string) => `\x1b[1m${s}\x1b[22m`;
const DIM = (s: string) => `\x1b[2m${s}\x1b[22m`;
const CYAN = (s: string) => `\x1b[36m${s}\x1b[39m`;

export class Narrator {
  readonly #options: NarratorOptions;
  #stage = "intro";
  #since: number | undefined;
  /** Lines seen live while a timeline is being followed, waiting to be merged in by time. */
  readonly #pending: { at: number; print: () => void }[] = [];
  #live = false;
  readonly records: TourRecord[] = [];

  constructor(options: NarratorOptions) {
    this.#options = options;
  }

  get stage(): string {
    return this.#stage;
  }

  #emit(record: TourRecord, text: string): void {
    this.records.push(record);
    this.#options.write(this.#options.json ? `${JSON.stringify(record)}\n` : `${text}\n`);
  }

  #paint(f: (s: string) => string, s: string): string {
    return this.#options.color ? f(s) : s;
  }

  /** Start a stage: a title and a one-line explanation. Timeline times restart from zero. */
  begin(stage: string, n: number, total: number, title: string, explain: string): void {
    this.#stage = stage;
    this.#since = undefined;
    const head = this.#paint(BOLD, `━━ ${n}/${total}  ${title}`);
    this.#emit({ type: "stage", stage, n, title, explain }, `\n${head}\n   ${this.#paint(DIM, explain)}`);
  }

  /**
   * While a timeline is followed, notes and replays are seen at once but the kernel's events reach
   * the tour by polling, a little later: `live` holds them back and merges them in by time.
   */
  setLive(live: boolean): void {
    this.#live = live;
    if (!live) this.flushPending();
  }

  #later(print: () => void): void {
    if (this.#live) this.#pending.push({ at: Date.now(), print });
    else print();
  }

  /** Print the held-back lines seen before `before` (epoch ms; all of them by default). */
  flushPending(before = Number.POSITIVE_INFINITY): void {
    while (this.#pending.length > 0 && this.#pending[0]!.at < before) this.#pending.shift()!.print();
  }

  note(text: string, data?: unknown): void {
    this.#later(() => this.#note(text, data));
  }

  #note(text: string, data?: unknown): void {
    const record: TourRecord =
      data === undefined
        ? { type: "note", stage: this.#stage, text }
        : { type: "note", stage: this.#stage, text, data };
    this.#emit(record, `   ${text}`);
  }

  /** A block of preformatted text (schemas), indented. */
  block(text: string, data: unknown): void {
    const indented = text
      .split("\n")
      .map((l) => `     ${this.#paint(DIM, l)}`)
      .join("\n");
    this.#emit({ type: "note", stage: this.#stage, text, data }, indented);
  }

  timeline(label: string, entry: TimelineEntry): void {
    const at = Date.parse(entry.occurredAt);
    this.flushPending(at);
    this.#since ??= at;
    const line = formatEntry(entry, { color: this.#options.color, since: this.#since, prefix: "   │ " });
    const { type: event, ...rest } = entry;
    this.#emit(
      { ...rest, type: "timeline", event, stage: this.#stage, label },
      `${line}${this.#paint(DIM, label === "" ? "" : `  [${label}]`)}`,
    );
  }

  /** A step the kernel answered with `replay`, seen by an agent (`label` names which one). */
  replay(label: string, seen: ReplaySeen): void {
    this.#later(() => this.#printReplay(label, seen));
  }

  #printReplay(label: string, seen: ReplaySeen): void {
    const what = seen.failed ? "recorded error" : "recorded result";
    const value = JSON.stringify(seen.value);
    const short = value.length > 80 ? `${value.slice(0, 79)}…` : value;
    const who = label === "" ? "" : this.#paint(DIM, `  [${label}]`);
    const text = `   │ ${this.#paint(CYAN, "  ↺ replay")}  ${`${seen.target} (${seen.kind})`.padEnd(28)}  body not run; ${what} ${short}${who}`;
    this.#emit({ type: "replay", stage: this.#stage, label, ...seen }, text);
  }

  summary(fields: Record<string, unknown>, text: string): void {
    this.#stage = "summary";
    this.#emit({ type: "summary", stage: "summary", ...fields }, text);
  }
}
