/** `rebuno exec …`: list, read, create, watch, cancel executions. */
import type { Client } from "@rebuno/client";
import type { Event, Execution, ExecutionStatus, Step } from "@rebuno/protocol";
import { type Command, Option } from "commander";
import type { CommandContext } from "../context.js";
import { EXIT } from "../exit-codes.js";
import { parsePositiveInt, parseSince, readJsonValue } from "../input.js";
import { json, keyValues, paint, statusColour, table } from "../output.js";
import { excerpt, followTimeline, formatEntry } from "../timeline.js";

/** Attach an action: it gets the context, the command's own options and its arguments. */
export type Register = <O>(
  command: Command,
  action: (ctx: CommandContext, opts: O, args: readonly string[]) => Promise<void>,
) => Command;

const STATUSES: readonly ExecutionStatus[] = [
  "pending",
  "running",
  "blocked",
  "completed",
  "failed",
  "cancelled",
];

function outcomeOf(e: Execution): string {
  if (e.status === "completed") return excerpt(e.output ?? null, 60);
  return e.failureReason === undefined ? "" : excerpt(e.failureReason, 60);
}

function executionRows(list: readonly Execution[]): string[][] {
  return list.map((e) => [e.id, e.agentId, e.status, e.createdAt, e.session ?? "", outcomeOf(e)]);
}

const byStatus = (column: number) => (i: number, cell: string) =>
  i === column ? statusColour(cell) : undefined;

/** Steps in the order they were first recorded (the kernel lists them by id, a hash). */
export function inRecordingOrder(steps: readonly Step[], events: readonly Event[]): Step[] {
  const first = new Map<string, number>();
  for (const e of events) {
    const id = e.payload.step_id;
    if (typeof id === "string" && !first.has(id)) first.set(id, e.eventSeq);
  }
  const seq = (s: Step) => first.get(s.stepId) ?? Number.MAX_SAFE_INTEGER;
  return [...steps].sort((a, b) => seq(a) - seq(b));
}

async function allEvents(client: Client, id: string): Promise<Event[]> {
  const out: Event[] = [];
  for (;;) {
    const page = await client.events(id, { afterSeq: out.at(-1)?.eventSeq ?? 0, limit: 1000 });
    out.push(...page);
    if (page.length < 1000) return out;
  }
}

function duration(step: Step): string {
  if (step.startedAt === undefined || step.completedAt === undefined) return "";
  const ms = Date.parse(step.completedAt) - Date.parse(step.startedAt);
  return Number.isFinite(ms) ? `${ms}ms` : "";
}

/** Registers `exec …` and returns the group, so other files can add subcommands to it. */
export function registerExecCommands(program: Command, register: Register): Command {
  const exec = program.command("exec").description("executions: list, inspect, create, watch, cancel");

  register(
    exec
      .command("ls")
      .description("list executions, newest first")
      .addOption(new Option("--status <status>", "only this status").choices(STATUSES))
      .option("--agent <id>", "only this agent's executions")
      .option("--session <name>", "only this session")
      .option(
        "--since <when>",
        "created at or after: a duration back from now (15m, 2h, 7d) or an RFC 3339 time",
      )
      .option("--limit <n>", "at most this many", "50"),
    async (
      ctx,
      o: {
        status?: ExecutionStatus;
        agent?: string;
        session?: string;
        since?: string;
        limit: string;
      },
    ) => {
      const limit = parsePositiveInt(o.limit, "--limit");
      const since = o.since === undefined ? undefined : parseSince(o.since, Date.now());
      const found: Execution[] = [];
      const pages = ctx.client().listAll({
        agentId: o.agent,
        status: o.status,
        session: o.session,
        limit: Math.min(limit, 200),
      });
      for await (const e of pages) {
        // Newest first: once one is older than --since, the rest are too.
        if (since !== undefined && Date.parse(e.createdAt) < since) break;
        found.push(e);
        if (found.length >= limit) break;
      }
      if (ctx.json) return ctx.io.stdout(json(found));
      ctx.io.stdout(
        `${table(["ID", "AGENT", "STATUS", "CREATED", "SESSION", "OUTPUT / REASON"], executionRows(found), {
          color: ctx.color,
          colourOf: byStatus(2),
        })}\n`,
      );
    },
  );

  register(
    exec.command("get").description("show one execution").argument("<id>", "execution id"),
    async (ctx, _o, [id]) => {
      const e = await ctx.client().get(id!);
      if (ctx.json) return ctx.io.stdout(json(e));
      ctx.io.stdout(
        `${keyValues([
          ["id", e.id],
          ["agent", e.agentId],
          ["status", paint(ctx.color, statusColour(e.status) ?? "bold", e.status)],
          ["created", e.createdAt],
          ["updated", e.updatedAt],
          ["session", e.session],
          ["parent", e.parentExecutionId],
          [
            "spawned by",
            e.spawnedBy === undefined ? undefined : `${e.spawnedBy.executionId} step ${e.spawnedBy.stepId}`,
          ],
          ["forked from", e.forkedFrom],
          ["deadline", e.deadlineAt],
          ["input", JSON.stringify(e.input)],
          ["output", e.status === "completed" ? JSON.stringify(e.output ?? null) : undefined],
          ["failure", e.failureReason],
        ])}\n`,
      );
    },
  );

  register(
    exec
      .command("create")
      .description("start an execution of an agent")
      .requiredOption("--agent <id>", "agent id")
      .option("--input <json>", "input as JSON, @file.json, or - to read stdin", "null")
      .option("--session <name>", "join this session")
      .option("--idempotency-key <key>", "a repeat with the same key returns the first execution"),
    async (
      ctx,
      o: {
        agent: string;
        input: string;
        session?: string;
        idempotencyKey?: string;
      },
    ) => {
      const input = await readJsonValue(o.input, "--input", ctx.io);
      const e = await ctx
        .client()
        .create(o.agent, input, { session: o.session, idempotencyKey: o.idempotencyKey });
      if (ctx.json) return ctx.io.stdout(json(e));
      ctx.io.stdout(
        `${e.id}  ${e.agentId}  ${paint(ctx.color, statusColour(e.status) ?? "bold", e.status)}\n`,
      );
    },
  );

  register(
    exec
      .command("watch")
      .description(
        "follow an execution live, one line per step and event; exit code = its outcome (0 completed, 10 failed, 11 cancelled)",
      )
      .argument("<id>", "execution id")
      .option("--poll-ms <ms>", "poll interval once caught up", "250"),
    async (ctx, o: { pollMs: string }, [id]) => {
      const client = ctx.client();
      await client.get(id!); // an unknown id fails here, before any output
      for await (const entry of followTimeline(client, id!, {
        pollMs: parsePositiveInt(o.pollMs, "--poll-ms"),
      })) {
        ctx.io.stdout(
          ctx.json ? `${JSON.stringify(entry)}\n` : `${formatEntry(entry, { color: ctx.color })}\n`,
        );
      }
      const done = await client.get(id!);
      ctx.setExitCode(
        done.status === "completed"
          ? EXIT.ok
          : done.status === "cancelled"
            ? EXIT.executionCancelled
            : EXIT.executionFailed,
      );
    },
  );

  register(
    exec
      .command("events")
      .description("an execution's event log")
      .argument("<id>", "execution id")
      .option("--after <seq>", "only events after this sequence number", "0"),
    async (ctx, o: { after: string }, [id]) => {
      const after = o.after === "0" ? 0 : parsePositiveInt(o.after, "--after");
      const events = (await allEvents(ctx.client(), id!)).filter((e) => e.eventSeq > after);
      if (ctx.json) return ctx.io.stdout(json(events));
      const rows = events.map((e) => [String(e.eventSeq), e.occurredAt, e.type, excerpt(e.payload, 100)]);
      ctx.io.stdout(`${table(["SEQ", "TIME", "TYPE", "PAYLOAD"], rows, { color: ctx.color })}\n`);
    },
  );

  register(
    exec
      .command("steps")
      .description("an execution's steps, in recording order")
      .argument("<id>", "execution id"),
    async (ctx, _o, [id]) => {
      const client = ctx.client();
      const steps = inRecordingOrder(await client.listSteps(id!), await allEvents(client, id!));
      if (ctx.json) return ctx.io.stdout(json(steps));
      const rows = steps.map((s, i) => [
        String(i + 1),
        s.kind,
        s.target,
        s.status,
        s.idempotency,
        duration(s),
        excerpt(s.status === "succeeded" ? (s.result ?? null) : (s.error ?? null), 60),
      ]);
      ctx.io.stdout(
        `${table(["#", "KIND", "TARGET", "STATUS", "IDEMPOTENCY", "TIME", "RESULT / ERROR"], rows, {
          color: ctx.color,
          colourOf: byStatus(3),
        })}\n`,
      );
    },
  );

  register(
    exec.command("cancel").description("cancel a running execution").argument("<id>", "execution id"),
    async (ctx, _o, [id]) => {
      await ctx.client().cancel(id!);
      const e = await ctx.client().get(id!);
      if (ctx.json) return ctx.io.stdout(json(e));
      ctx.io.stdout(`${e.id}  ${paint(ctx.color, statusColour(e.status) ?? "bold", e.status)}\n`);
    },
  );
  return exec;
}
