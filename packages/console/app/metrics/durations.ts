/** Step duration quantiles by tool, from steps' `started_at`/`completed_at`. Pure. */
import type { Step } from "@rebuno/protocol";

export interface ToolQuantiles {
  readonly target: string;
  readonly count: number;
  readonly p50: number;
  readonly p99: number;
}

/** Nearest-rank quantile of sorted values. */
function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? 0;
}

export function quantilesByTool(steps: readonly Step[]): ToolQuantiles[] {
  const byTool = new Map<string, number[]>();
  for (const s of steps) {
    if (s.startedAt === undefined || s.completedAt === undefined) continue;
    const ms = Date.parse(s.completedAt) - Date.parse(s.startedAt);
    if (!Number.isFinite(ms) || ms < 0) continue;
    byTool.set(s.target, [...(byTool.get(s.target) ?? []), ms]);
  }
  return [...byTool.entries()]
    .map(([target, values]) => {
      const sorted = [...values].sort((a, b) => a - b);
      return { target, count: sorted.length, p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99) };
    })
    .sort((a, b) => a.target.localeCompare(b.target));
}
