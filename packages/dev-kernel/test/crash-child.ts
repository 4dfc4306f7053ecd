// Child process of sqlite-crash.test.ts: writes executions to a SQLite store (created, completed,
// later given a late event, deleted) and prints `ack N` once iteration N is durable, until it is
// killed.
import { SqliteStore } from "../src/store/sqlite.js";
import { crashPlan } from "./crash-plan.js";
import { execution, step } from "./store-rows.js";

const [path, startText] = process.argv.slice(2);
const store = new SqliteStore(path!);

async function run(): Promise<void> {
  for (let i = Number(startText); i < 1_000_000; i++) {
    const plan = crashPlan(i);
    store.transaction(() => {
      store.insertExecution(execution(plan.id, { createdAt: i }));
      store.appendEvent(plan.id, "execution.created", `{"i":${i}.0}`, i);
      store.insertStep(step(plan.id, "s1"));
    });
    store.transaction(() => {
      store.updateStep(step(plan.id, "s1", { status: "succeeded", resultJson: `{"r":${i}.50}` }));
      store.appendEvent(plan.id, "execution.completed", "{}", i);
      store.updateExecution(execution(plan.id, { createdAt: i, status: "completed", updatedAt: i }));
    });
    if (plan.late !== undefined) store.appendEvent(plan.late, "late", `{"from":${i}}`, i);
    if (plan.remove !== undefined) store.deleteExecution(plan.remove);
    await store.whenDurable();
    process.stdout.write(`ack ${i}\n`);
    if (i % 8 === 0) await new Promise((r) => setTimeout(r, 1)); // let timers interleave with commits
  }
}

void run();
