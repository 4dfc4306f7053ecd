/** Approval routes (docs/protocol.md §4.15, §11). */
import { APPROVAL_STATUSES, DecideApprovalRequestSchema, validateRequest } from "@rebuno/protocol";
import { approvalView, decideApproval } from "../engine/approvals.js";
import type { KernelContext } from "../engine/context.js";
import { invalid, notFound } from "../errors.js";
import { parseBody } from "../http/core.js";
import { json, noContent } from "../http/respond.js";
import type { Route, RouteInput } from "../http/router.js";
import { APPROVALS_DEFAULT_STATUS } from "../inferences.js";
import type { ApprovalStatus } from "../store/types.js";

const STATUSES: ReadonlySet<string> = new Set(APPROVAL_STATUSES);

function list(ctx: KernelContext, input: RouteInput) {
  const status = input.query.get("status") || APPROVALS_DEFAULT_STATUS;
  if (status !== "all" && !STATUSES.has(status)) throw invalid(`unknown status ${JSON.stringify(status)}`);
  const rows = ctx.store.listApprovals(status === "all" ? undefined : (status as ApprovalStatus));
  return json(200, rows.map(approvalView));
}

function get(ctx: KernelContext, input: RouteInput) {
  const approval = ctx.store.getApproval(input.params[0]!);
  if (approval === undefined) throw notFound("approval");
  return json(200, approvalView(approval));
}

function decide(grant: boolean) {
  return (ctx: KernelContext, input: RouteInput) => {
    const { body } = parseBody(input.req, (v) => validateRequest(DecideApprovalRequestSchema, v));
    ctx.store.transaction(() =>
      decideApproval(ctx, {
        approvalId: input.params[0]!,
        grant,
        // Absent or null `decided_by` (the Python SDK omits an empty one) decides as "" (interop O2).
        decidedBy: body.decided_by ?? "",
        rationale: body.rationale ?? undefined,
      }),
    );
    return noContent();
  };
}

/** Routes of this family. */
export const approvalRoutes: readonly Route[] = [
  { method: "GET", path: "/v0/approvals", auth: "bearer", scopes: ["approvals:read"], handler: list },
  { method: "GET", path: "/v0/approvals/:uuid", auth: "bearer", scopes: ["approvals:read"], handler: get },
  {
    method: "POST",
    path: "/v0/approvals/:uuid/grant",
    auth: "bearer",
    scopes: ["approvals:write"],
    handler: decide(true),
  },
  {
    method: "POST",
    path: "/v0/approvals/:uuid/deny",
    auth: "bearer",
    scopes: ["approvals:write"],
    handler: decide(false),
  },
];
