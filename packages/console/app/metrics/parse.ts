/**
 * Parse the kernel's Prometheus text (`GET /metrics`, docs/protocol.md §13.3) into samples, and
 * group the ones the metrics page draws. Pure; unit-tested on a real dev kernel's answer.
 */

export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parseMetrics(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line.startsWith("#") || line.trim() === "") continue;
    const m = LINE.exec(line);
    if (m === null) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? "").matchAll(LABEL))
      labels[l[1]!] = l[2]!.replace(/\\n/g, "\n").replace(/\\(.)/g, "$1");
    const value = Number(m[3]);
    if (Number.isFinite(value)) out.push({ name: m[1]!, labels, value });
  }
  return out;
}

/** `label value → value` for every sample of `name` (no label: key `""`). */
export function byLabel(samples: readonly Sample[], name: string, label: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const s of samples)
    if (s.name === name) out.set(s.labels[label] ?? "", (out.get(s.labels[label] ?? "") ?? 0) + s.value);
  return out;
}

/** The single value of an unlabelled series, if the kernel reports it. */
export function scalar(samples: readonly Sample[], name: string): number | undefined {
  return samples.find((s) => s.name === name)?.value;
}
