/**
 * How the CLI prints: tables for people, JSON for programs, colour only when stdout is a TTY and
 * `NO_COLOR` is unset (https://no-color.org).
 */
import { stripVTControlCharacters } from "node:util";

/** Where a command reads and writes; the process's streams in `main.ts`, anything in tests. */
export interface CliIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly readStdin: () => Promise<string>;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Whether stdout is a terminal. */
  readonly isTTY: boolean;
}

/** Colour is on only on a TTY, and never when NO_COLOR is set to anything non-empty. */
export function useColor(io: CliIo): boolean {
  const noColor = io.env.NO_COLOR;
  return io.isTTY && (noColor === undefined || noColor === "");
}

const CODES: Record<string, [number, number]> = {
  green: [32, 39],
  red: [31, 39],
  yellow: [33, 39],
  dim: [2, 22],
  bold: [1, 22],
};

export type Colour = "green" | "red" | "yellow" | "dim" | "bold";

export function paint(on: boolean, colour: Colour, text: string): string {
  if (!on) return text;
  const [open, close] = CODES[colour]!;
  return `\x1b[${open}m${text}\x1b[${close}m`;
}

/** The colour of a status word (execution, step, approval). */
export function statusColour(status: string): Colour | undefined {
  if (/^(completed|succeeded|granted|allowed|acked)$/.test(status)) return "green";
  if (/^(failed|denied|cancelled|expired)$/.test(status)) return "red";
  if (/^(blocked|pending|awaiting_approval|running|executing)$/.test(status)) return "yellow";
  return undefined;
}

/** Visible width of a cell (ANSI colour codes take no room). */
function width(text: string): number {
  return stripVTControlCharacters(text).length;
}

/** A left-aligned text table with a header row; `colourOf` picks a colour per cell. */
export function table(
  columns: readonly string[],
  rows: readonly (readonly string[])[],
  options: {
    readonly color?: boolean;
    readonly colourOf?: (column: number, cell: string) => Colour | undefined;
  } = {},
): string {
  if (rows.length === 0) return "(none)";
  const on = options.color === true;
  const widths = columns.map((c, i) => Math.max(c.length, ...rows.map((r) => width(r[i] ?? ""))));
  const line = (cells: readonly string[], colourOf: (i: number, cell: string) => Colour | undefined) =>
    cells
      .map((cell, i) => {
        const colour = colourOf(i, cell);
        const shown = colour === undefined ? cell : paint(on, colour, cell);
        return i === cells.length - 1 ? shown : shown + " ".repeat(widths[i]! - width(cell));
      })
      .join("  ")
      .trimEnd();
  const header = line(columns, () => "bold");
  return [header, ...rows.map((r) => line(r, (i, cell) => options.colourOf?.(i, cell)))].join("\n");
}

/** `key  value` lines, keys padded (for `get` commands). */
export function keyValues(pairs: readonly (readonly [string, string | undefined])[]): string {
  const shown = pairs.filter((p): p is readonly [string, string] => p[1] !== undefined && p[1] !== "");
  const w = Math.max(...shown.map(([k]) => k.length));
  return shown.map(([k, v]) => `${k.padEnd(w)}  ${v}`).join("\n");
}

/** JSON for `--json`: one document, two-space indent, newline-terminated. */
export function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}
