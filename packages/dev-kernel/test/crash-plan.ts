// What iteration i of crash-child.ts writes, so the test can tell what a restart must find.

/** Iteration i creates `id`, appends an event to `late` and deletes `remove` (older executions). */
export interface CrashPlanStep {
  readonly id: string;
  readonly late?: string | undefined;
  readonly remove?: string | undefined;
}

export const crashId = (i: number) => `x${String(i).padStart(7, "0")}`;

export function crashPlan(i: number): CrashPlanStep {
  return {
    id: crashId(i),
    late: i >= 10 && i % 3 === 0 ? crashId(i - 10) : undefined,
    remove: i >= 10 && i % 7 === 0 ? crashId(i - 9) : undefined,
  };
}
