// Child process of bench/peers.mjs: one system's worker side (agent / service endpoint / DBOS app)
// plus the caller that starts workflows and waits for their results. The parent measures this
// process's CPU and RSS from /proc, so everything here is part of the system's cost.
//
// IPC: { setup: config } → { ready: true }; { phase: "seq", count } → { latenciesNs };
// { phase: "conc", concurrency, total } → { seconds, latenciesNs }; disconnect → close and exit.
import { SETUPS } from "./workflows.mjs";

const system = process.argv[2];
let subject;

async function sequential(count) {
  const latenciesNs = [];
  for (let i = 0; i < count; i++) {
    const t0 = process.hrtime.bigint();
    await subject.run();
    latenciesNs.push(Number(process.hrtime.bigint() - t0));
  }
  return { latenciesNs };
}

/** `concurrency` callers in a closed loop until `total` workflows finished. */
async function concurrent(concurrency, total) {
  const latenciesNs = [];
  let started = 0;
  const t0 = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (started < total) {
        started++;
        const s = process.hrtime.bigint();
        await subject.run();
        latenciesNs.push(Number(process.hrtime.bigint() - s));
      }
    }),
  );
  return { seconds: Number(process.hrtime.bigint() - t0) / 1e9, latenciesNs };
}

process.on("message", (m) => {
  const work = m.setup
    ? SETUPS[system](m.setup).then((s) => {
        subject = s;
        return { ready: true };
      })
    : m.phase === "seq"
      ? sequential(m.count)
      : concurrent(m.concurrency, m.total);
  work.then(
    (answer) => process.send(answer),
    (err) => process.send({ error: err instanceof Error ? (err.stack ?? err.message) : String(err) }),
  );
});
process.on("disconnect", () => {
  const done = () => process.exit(0);
  (subject?.close() ?? Promise.resolve()).then(done, done);
  setTimeout(done, 10_000).unref();
});
