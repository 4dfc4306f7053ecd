/**
 * `rebuno policy …`: read and replace an agent's policy bundle, and evaluate a step against a
 * bundle file locally with the dev kernel's own policy engine (no kernel needed).
 */
import { compilePolicyBundle, evaluatePolicyStep, type PolicyStepKind } from "@rebuno/policy";
import { type Command, Option } from "commander";
import { readJsonValue, readTextFile } from "../input.js";
import { json, keyValues, paint } from "../output.js";
import type { Register } from "./executions.js";

const KINDS: readonly PolicyStepKind[] = ["tool_call", "llm_call", "local"];

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
      .description("evaluate one step against a policy file, locally, with the dev kernel's engine")
      .argument("<file>", "policy bundle YAML file")
      .requiredOption("--tool <id>", "the step's target (tool id, model, or local step name)")
      .option("--args <json>", "the step's arguments: JSON, @file.json, or - for stdin", "{}")
      .addOption(new Option("--kind <kind>", "step kind").choices(KINDS).default("tool_call"))
      .option("--agent <id>", "agent id, for rules with agent_id conditions"),
    async (ctx, o: { tool: string; args: string; kind: PolicyStepKind; agent?: string }, [file]) => {
      const text = readTextFile(file!, "policy file");
      const args = await readJsonValue(o.args, "--args", ctx.io);
      const compiled = compilePolicyBundle(text);
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
