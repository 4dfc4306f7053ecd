// Everything a store serves for the format-3 fixtures, as plain JSON: written next to each fixture by
// fixtures/format3/write-format3.mjs (with the store that wrote the file) and compared by
// sqlite-migration.test.ts with what the converted store serves.
import type { Store } from "../src/store/types.js";

/** Call identities and dispatch ids whose occurrence counters the fixtures set. */
export const FIXTURE_OCCURRENCES = [
  ["d-run", "tool_call", "search", "h-search"],
  ["d-run", "llm_call", "gpt", "h-gpt"],
] as const;

export function dumpStore(store: Store, dispatchIds: readonly string[]): unknown {
  const executions = store.listExecutions({ limit: 1000 });
  return {
    count: store.countExecutions(),
    executions: executions.map((e) => ({
      row: e,
      events: store.listEvents(e.id, 0, 1000),
      lastSeq: store.lastEventSeq(e.id),
      steps: store.listSteps(e.id),
      activeDispatches: store.listActiveDispatches(e.id),
      pendingApprovals: store.listPendingApprovals(e.id),
      children: store.listChildExecutions(e.id).map((c) => c.id),
      resources: store.listResources(e.id),
      checkpoints: store.listCheckpoints(e.id, undefined),
    })),
    sessions: [...new Set(executions.map((e) => e.session).filter((s) => s !== undefined))].map((s) => ({
      session: s,
      ids: store.listSessionExecutions(s).map((e) => e.id),
    })),
    dispatches: dispatchIds.map((id) => store.getDispatch(id) ?? null),
    occurrences: FIXTURE_OCCURRENCES.map(([d, k, t, h]) => store.getOccurrence(d, k, t, h) ?? null),
    approvals: store.listApprovals(undefined),
    agents: store.listAgents(),
    apiKeys: store.listApiKeys(),
    unsettled: store.listUnsettledSubagents().map((e) => e.id),
    nextDue: store.nextDispatchDueAt() ?? null,
  };
}
