/**
 * Reading command-line values that carry JSON or files: `--input '{"a":1}'`, `--input @file.json`,
 * `--input -` (stdin). Every failure is a {@link UsageError} naming the option and the cause.
 */
import { readFileSync } from "node:fs";
import { UsageError } from "./exit-codes.js";
import type { CliIo } from "./output.js";

/** The text of a file, or a UsageError naming the option it came from. */
export function readTextFile(path: string, option: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    const code = (error as { code?: string }).code ?? "unreadable";
    throw new UsageError(`${option}: cannot read ${JSON.stringify(path)} (${code})`);
  }
}

/** Parse JSON text, or a UsageError naming the option and where parsing stopped. */
export function parseJsonOption(text: string, option: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${option} is not valid JSON: ${(error as Error).message}`);
  }
}

/** Resolve `value`, `@file` or `-` (stdin) to JSON. */
export async function readJsonValue(value: string, option: string, io: CliIo): Promise<unknown> {
  if (value === "-") return parseJsonOption(await io.readStdin(), `${option} (stdin)`);
  if (value.startsWith("@"))
    return parseJsonOption(readTextFile(value.slice(1), option), `${option} ${value}`);
  return parseJsonOption(value, option);
}

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * `--since`: a duration back from now (`90s`, `15m`, `2h`, `7d`) or an RFC 3339 timestamp.
 * Returns epoch milliseconds.
 */
export function parseSince(value: string, now: number): number {
  const m = /^(\d+)([smhd])$/.exec(value.trim());
  if (m !== null) return now - Number(m[1]) * UNIT_MS[m[2]!]!;
  const at = Date.parse(value);
  if (/^\d{4}-\d{2}-\d{2}/.test(value) && Number.isFinite(at)) return at;
  throw new UsageError(
    `--since must be a duration such as 15m, 2h, 7d or an RFC 3339 time, got ${JSON.stringify(value)}`,
  );
}

/** A positive integer option. */
export function parsePositiveInt(value: string, option: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1)
    throw new UsageError(`${option} must be a positive integer, got ${JSON.stringify(value)}`);
  return Number(value);
}
