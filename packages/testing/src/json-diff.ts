/**
 * A structural JSON diff for divergence reports: every leaf where two JSON values differ, with
 * its path (`$.items[0].sku`). A key present on one side only is reported with the other side
 * absent.
 */

/** One difference. `recorded`/`submitted` are absent when that side has no value there. */
export interface JsonDifference {
  readonly path: string;
  readonly recorded?: unknown;
  readonly submitted?: unknown;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function walk(a: unknown, b: unknown, path: string, out: JsonDifference[]): void {
  if (isObject(a) && isObject(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    for (const key of keys) {
      const child = /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
      if (!(key in b)) out.push({ path: child, recorded: a[key] });
      else if (!(key in a)) out.push({ path: child, submitted: b[key] });
      else walk(a[key], b[key], child, out);
    }
    return;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      if (i >= b.length) out.push({ path: `${path}[${i}]`, recorded: a[i] });
      else if (i >= a.length) out.push({ path: `${path}[${i}]`, submitted: b[i] });
      else walk(a[i], b[i], `${path}[${i}]`, out);
    }
    return;
  }
  if (JSON.stringify(a) !== JSON.stringify(b)) out.push({ path, recorded: a, submitted: b });
}

/** The differences between two JSON values (empty when equal). */
export function jsonDiff(recorded: unknown, submitted: unknown): JsonDifference[] {
  const out: JsonDifference[] = [];
  walk(recorded, submitted, "$", out);
  return out;
}
