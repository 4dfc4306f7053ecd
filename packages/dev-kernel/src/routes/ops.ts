/** Operational endpoints (docs/protocol.md §13.3): health, readiness, Prometheus metrics. */
import type { KernelContext } from "../engine/context.js";
import { json } from "../http/respond.js";
import type { Route } from "../http/router.js";
import type { GaugeSample } from "../metrics.js";

function metrics(ctx: KernelContext) {
  const now = ctx.clock();
  const gauges: GaugeSample[] = [
    {
      name: "rebuno_dispatch_queue_depth",
      help: "Dispatches due for delivery now.",
      value: ctx.store.listDueDispatches(now, Number.MAX_SAFE_INTEGER).length,
    },
    { name: "rebuno_stream_subscribers", help: "Open SSE subscribers.", value: ctx.bus.size },
    {
      name: "rebuno_approvals_pending",
      help: "Pending approvals.",
      value: ctx.store.listApprovals("pending").length,
    },
  ];
  return {
    status: 200,
    headers: { "content-type": "text/plain; version=0.0.4; charset=utf-8" },
    body: ctx.metrics.render(gauges),
  };
}

/** Routes of this family. */
export const opsRoutes: readonly Route[] = [
  { method: "GET", path: "/v0/health", auth: "none", handler: () => json(200, { status: "ok" }) },
  // The dev kernel has no external dependency to ping: it is ready while it runs, and answers
  // 503 once close() began (requests in flight still finish, new work should go elsewhere).
  {
    method: "GET",
    path: "/v0/ready",
    auth: "none",
    handler: (ctx) =>
      ctx.isClosing() ? json(503, { status: "unavailable" }) : json(200, { status: "ready" }),
  },
  { method: "GET", path: "/metrics", auth: "none", handler: metrics },
];
