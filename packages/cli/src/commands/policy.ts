/**
 * `rebuno policy …`: read and replace an agent's policy bundle, and evaluate a step against a
 * bundle file locally with the dev kernel's own policy engine (no kernel needed).
 */
import { compilePolicyBundle, evaluatePolicyStep, type PolicyStepKind } from "@rebuno/policy";
import { type Command, Option } from "commander";
import type { CommandContext } from "../context.js";
import { EXIT, UsageError } from "../exit-codes.js";
import { parsePositiveInt, parseSince, readJsonValue, readTextFile } from "../input.js";
import { json, keyValues, paint, table } from "../output.js";
import type { Register } from "./executions.js";

const KINDS: readonly PolicyStepKind[] = ["tool_call", "llm_call", "local"];

interface PolicyTestOptions {
  readonly tool?: string;
  readonly args: string;
  readonly kind: PolicyStepKind;
  readonly agent?: string;
  readonly executions?: boolean;
  readonly execution?: string;
  readonly session?: string;
  readonly since?: string;
  readonly limit?: string;
}

/** One row of the kernel's policy-test answer (docs/protocol.md §16.13). */
interface PolicyTestRow {
  readonly execution_id?: string;
  readonly kind?: string;
  readonly target?: string;
  readonly decision?: string;
  readonly rule_id?: string;
  readonly reason?: string;
  readonly expect?: string;
  readonly matched?: boolean;
}

/**
 * The kernel re-decides every recorded step with the bundle (docs/protocol.md §9.10); a row whose
 * recorded decision (`expect`) differs from the new one is a change. Exit 12 when any changed.
 */
async function backtest(ctx: CommandContext, o: PolicyTestOptions, bundle: string): Promise<void> {
  if (o.executions === true && o.execution !== undefined) {
    throw new UsageError("pass --executions or --execution <id>, not both");
  }
  const client = ctx.client();
  // The route is per agent: for one execution, the agent is the execution's own.
  const agentId = o.execution === undefined ? o.agent : (o.agent ?? (await client.get(o.execution)).agentId);
  if (agentId === undefined) throw new UsageError("policy test --executions needs --agent <id>");
  const answer = await client.testPolicy(agentId, {
    bundle,
    ...(o.execution === undefined
      ? {
          executions: {
            session: o.session,
            since:
              o.since === undefined ? undefined : new Date(parseSince(o.since, Date.now())).toISOString(),
            limit: o.limit === undefined ? undefined : parsePositiveInt(o.limit, "--limit"),
          },
        }
      : { executionId: o.execution }),
  });
  const rows = (Array.isArray(answer.results) ? answer.results : []) as PolicyTestRow[];
  const changed = rows.filter((r) => r.matched === false);
  ctx.setExitCode(changed.length === 0 ? EXIT.ok : EXIT.decisionsChanged);
  if (ctx.json) return ctx.io.stdout(json({ agentId, evaluated: rows.length, changed }));
  const lines = changed.map((r) => [
    r.execution_id ?? "",
    `${r.target ?? ""} (${r.kind ?? "tool_call"})`,
    `${r.expect ?? "?"} → ${r.decision ?? "?"}`,
    r.rule_id ?? "",
    r.reason ?? "",
  ]);
  const summary = `${changed.length} of ${rows.length} recorded steps would change decision`;
  ctx.io.stdout(
    changed.length === 0
      ? `${summary}\n`
      : `${table(["EXECUTION", "STEP", "DECISION", "RULE", "REASON"], lines, { color: ctx.color })}\n${summary}\n`,
  );
}

export function registerPolicyCommands(program: Command, register: Register): void {
  const policy = program.command("policy").description("policy bundles: show, replace, test locally");

  register(
    policy.command("get").description("print an agent's policy bundle").argument("<agent>", "agent id"),
    async (ctx, _o, [agentId]) => {
      const agent = await ctx.client().getAgent(agentId!);
      if (ctx.json) return ctx.io.stdout(json({ agentId: agent.id, policy: agent.policyBundle ?? null }));
      ctx.io.stdout(
        agent.policyBundle === undefined
          ? `# ${agent.id} has no policy bundle\n`
          : `${agent.policyBundle.trimEnd()}\n`,
      );
    },
  );

  register(
    policy
      .command("set")
      .description("replace an agent's policy bundle (the kernel compiles it first)")
      .argument("<agent>", "agent id")
      .argument("<file>", "policy bundle YAML file"),
    async (ctx, _o, [agentId, file]) => {
      const bundle = readTextFile(file!, "policy file");
      await ctx.client().setPolicy(agentId!, bundle);
      if (ctx.json) return ctx.io.stdout(json({ agentId, policySet: true }));
      ctx.io.stdout(`policy set for ${agentId}\n`);
    },
  );

  register(
    policy
      .command("test")
      .description(
        "evaluate a policy file: one step locally (--tool), or the kernel's recorded steps (--executions, --execution); " +
          "with recorded steps, exit 12 when a decision would change",
      )
      .argument("<file>", "policy bundle YAML file")
      .option("--tool <id>", "the step's target (tool id, model, or local step name)")
      .option("--args <json>", "the step's arguments: JSON, @file.json, or - for stdin", "{}")
      .addOption(new Option("--kind <kind>", "step kind").choices(KINDS).default("tool_call"))
      .option("--agent <id>", "agent id: for rules with agent_id conditions; whose executions to backtest")
      .option("--executions", "backtest over the agent's recorded executions (needs --agent)")
      .option("--execution <id>", "backtest over one recorded execution")
      .option("--session <name>", "with --executions: only this session")
      .option("--since <duration>", "with --executions: created at or after (15m, 2h, 7d, or RFC 3339)")
      .option("--limit <n>", "with --executions: at most this many, newest first (kernel default 100)"),
    async (ctx, o: PolicyTestOptions, [file]) => {
      const text = readTextFile(file!, "policy file");
      const compiled = compilePolicyBundle(text); // a bundle that does not compile fails here, locally
      if (o.executions === true || o.execution !== undefined) return backtest(ctx, o, text);
      if (o.tool === undefined) {
        throw new UsageError(
          "policy test needs --tool <id> (one step) or --executions / --execution <id> (a backtest)",
        );
      }
      const args = await readJsonValue(o.args, "--args", ctx.io);
      const verdict = evaluatePolicyStep(compiled, { target: o.tool, kind: o.kind, args, agentId: o.agent });
      if (ctx.json) return ctx.io.stdout(json(verdict));
      const colour = verdict.decision === "allow" ? "green" : verdict.decision === "deny" ? "red" : "yellow";
      ctx.io.stdout(
        `${keyValues([
          ["decision", paint(ctx.color, colour, verdict.decision)],
          ["rule", verdict.ruleId],
          ["reason", verdict.reason],
        ])}\n`,
      );
    },
  );
}
