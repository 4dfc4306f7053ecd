/** `POST /v0/executions/{id}/fork` (docs/protocol.md §1.9, §4.17). */
import { ForkRequestSchema, validateRequest } from "@rebuno/protocol";
import type { KernelContext } from "../engine/context.js";
import { executionView } from "../engine/executions.js";
import { forkExecution } from "../engine/forks.js";
import { requireScopes } from "../http/auth.js";
import { parseBody } from "../http/core.js";
import { json } from "../http/respond.js";
import type { Route, RouteInput } from "../http/router.js";
import { FORK_SCOPE } from "../inferences.js";

function fork(ctx: KernelContext, input: RouteInput) {
  const { body } = parseBody(input.req, (v) => validateRequest(ForkRequestSchema, v));
  const policyBundle = body.policy_bundle ?? undefined;
  if (policyBundle !== undefined) {
    // Overriding the policy is a policy change.
    requireScopes(input.caller, ["policies:write"]);
    ctx.policies.compile(policyBundle);
  }
  const session = body.session ?? undefined;
  const created = ctx.store.transaction(() =>
    forkExecution(ctx, {
      sourceId: input.params[0]!,
      atSeq: body.at_seq,
      session: session === "" ? undefined : session,
      policyBundle,
    }),
  );
  return json(201, executionView(created));
}

/** Routes of this family. */
export const forkRoutes: readonly Route[] = [
  { method: "POST", path: "/v0/executions/:uuid/fork", auth: "bearer", scopes: [FORK_SCOPE], handler: fork },
];
