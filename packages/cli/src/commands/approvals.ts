/** `rebuno approvals …`: list pending approvals, grant or deny one. */
import type { ApprovalStatus } from "@rebuno/protocol";
import { type Command, Option } from "commander";
import type { CommandContext } from "../context.js";
import { json, paint, statusColour, table } from "../output.js";
import type { Register } from "./executions.js";

const STATUSES: readonly ApprovalStatus[] = ["pending", "granted", "denied", "expired"];

function decider(ctx: CommandContext, by: string | undefined): string {
  return by ?? ctx.io.env.REBUNO_OPERATOR ?? ctx.io.env.USER ?? "rebuno-cli";
}

export function registerApprovalCommands(program: Command, register: Register): void {
  const approvals = program.command("approvals").description("human approvals: list, grant, deny");

  register(
    approvals
      .command("ls")
      .description("list approvals (pending by default), oldest first")
      .addOption(new Option("--status <status>", "approval status").choices(STATUSES).default("pending")),
    async (ctx, o: { status: ApprovalStatus }) => {
      const list = await ctx.client().listApprovals({ status: o.status });
      if (ctx.json) return ctx.io.stdout(json(list));
      const rows = list.map((a) => [
        a.id,
        a.executionId,
        a.status,
        a.createdAt,
        a.timeoutAt,
        a.message ?? "",
        a.approvers.join(","),
      ]);
      ctx.io.stdout(
        `${table(["ID", "EXECUTION", "STATUS", "CREATED", "TIMEOUT", "MESSAGE", "APPROVERS"], rows, {
          color: ctx.color,
          colourOf: (i, cell) => (i === 2 ? statusColour(cell) : undefined),
        })}\n`,
      );
    },
  );

  for (const verb of ["grant", "deny"] as const) {
    register(
      approvals
        .command(verb)
        .description(
          verb === "grant"
            ? "grant a pending approval: the step runs"
            : "deny a pending approval: the step is denied with the reason",
        )
        .argument("<id>", "approval id")
        .option(
          "--reason <text>",
          verb === "grant" ? "rationale, recorded with the decision" : "the denial reason the agent receives",
        )
        .option("--by <who>", "who decides (default $REBUNO_OPERATOR, else $USER)"),
      async (ctx, o: { reason?: string; by?: string }, [id]) => {
        const client = ctx.client();
        const options = { decidedBy: decider(ctx, o.by), rationale: o.reason };
        if (verb === "grant") await client.grantApproval(id!, options);
        else await client.denyApproval(id!, options);
        const a = await client.getApproval(id!);
        if (ctx.json) return ctx.io.stdout(json(a));
        ctx.io.stdout(
          `${a.id}  ${paint(ctx.color, statusColour(a.status) ?? "bold", a.status)}  by ${a.decidedBy ?? "?"}\n`,
        );
      },
    );
  }
}
