/** `rebuno agents …`: list, show, register, remove agents. */
import type { Command } from "commander";
import { parsePositiveInt, readTextFile } from "../input.js";
import { json, keyValues, table } from "../output.js";
import type { Register } from "./executions.js";

export function registerAgentCommands(program: Command, register: Register): void {
  const agents = program.command("agents").description("registered agents: list, show, add, remove");

  register(agents.command("ls").description("list registered agents"), async (ctx) => {
    const list = await ctx.client().listAgents();
    if (ctx.json) return ctx.io.stdout(json(list));
    const rows = list.map((a) => [
      a.id,
      a.webhookUrl,
      a.registeredAt,
      a.policyBundle === undefined ? "none" : "set",
      String(a.leaseTimeoutSeconds ?? ""),
    ]);
    ctx.io.stdout(
      `${table(["ID", "WEBHOOK", "REGISTERED", "POLICY", "LEASE S"], rows, { color: ctx.color })}\n`,
    );
  });

  register(
    agents.command("get").description("show one agent").argument("<id>", "agent id"),
    async (ctx, _o, [id]) => {
      const a = await ctx.client().getAgent(id!);
      if (ctx.json) return ctx.io.stdout(json(a));
      ctx.io.stdout(
        `${keyValues([
          ["id", a.id],
          ["webhook", a.webhookUrl],
          ["registered", a.registeredAt],
          ["lease", a.leaseTimeoutSeconds === undefined ? undefined : `${a.leaseTimeoutSeconds}s`],
          ["policy", a.policyBundle === undefined ? "none" : `\n${a.policyBundle.trimEnd()}`],
        ])}\n`,
      );
    },
  );

  register(
    agents
      .command("add")
      .description("register an agent, or update it (same id)")
      .argument("<id>", "agent id")
      .requiredOption("--webhook-url <url>", "where the kernel delivers dispatches")
      .requiredOption("--secret <secret>", "shared HMAC secret (or @file to read it from a file)")
      .option("--lease-timeout <seconds>", "lease length for this agent's dispatches")
      .option("--policy <file>", "policy bundle YAML to set after registering"),
    async (ctx, o: { webhookUrl: string; secret: string; leaseTimeout?: string; policy?: string }, [id]) => {
      const secret = o.secret.startsWith("@") ? readTextFile(o.secret.slice(1), "--secret").trim() : o.secret;
      const policy = o.policy === undefined ? undefined : readTextFile(o.policy, "--policy");
      const client = ctx.client();
      const leaseTimeoutSeconds =
        o.leaseTimeout === undefined ? undefined : parsePositiveInt(o.leaseTimeout, "--lease-timeout");
      let agent = await client.registerAgent({
        id: id!,
        webhookUrl: o.webhookUrl,
        secret,
        leaseTimeoutSeconds,
      });
      if (policy !== undefined) {
        await client.setPolicy(id!, policy);
        agent = await client.getAgent(id!);
      }
      if (ctx.json) return ctx.io.stdout(json(agent));
      ctx.io.stdout(
        `registered ${agent.id} → ${agent.webhookUrl}${policy === undefined ? "" : " (policy set)"}\n`,
      );
    },
  );

  register(
    agents.command("rm").description("remove an agent").argument("<id>", "agent id"),
    async (ctx, _o, [id]) => {
      await ctx.client().deleteAgent(id!);
      if (ctx.json) return ctx.io.stdout(json({ id, removed: true }));
      ctx.io.stdout(`removed ${id}\n`);
    },
  );
}
