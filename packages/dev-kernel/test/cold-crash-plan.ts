// What iteration i of cold-crash-child.ts writes, so the test can tell what a restart must find.

/** Iteration i creates `id`, appends an event to `late` and deletes `remove` (older executions). */
export interface ColdPlanStep {
  readonly id: string;
  readonly late?: string | undefined;
  readonly remove?: string | undefined;
}

export const coldId = (i: number) => `x${String(i).padStart(7, "0")}`;

export function coldPlan(i: number): ColdPlanStep {
  return {
    id: coldId(i),
    late: i >= 10 && i % 3 === 0 ? coldId(i - 10) : undefined,
    remove: i >= 10 && i % 7 === 0 ? coldId(i - 9) : undefined,
  };
}
