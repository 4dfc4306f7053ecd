// Runs SCENARIOS against our dev kernel and the Go kernel (`rebuno dev`) side by side and returns
// both normalised transcripts plus every label whose observations differ.
import { startGoDev } from "../../../scripts/real-kernel.mjs";
import { normaliser, startReceiver, World } from "./raw.mjs";
import { SCENARIOS, stepIdCheck } from "./scenarios.mjs";

const SHORT_LEASE_S = 3;

async function worldPair({ short, startDevKernel }) {
  const scenarios = SCENARIOS.filter((s) => Boolean(s.shortLease) === short);
  const secrets = new Map(scenarios.map((s) => [s.name, `${s.name}-secret`]));
  const devReceiver = await startReceiver(secrets);
  const goReceiver = await startReceiver(secrets);
  const agents = (receiver) =>
    scenarios.map((s) => ({
      id: s.name,
      webhookUrl: receiver.url(s.name),
      secret: secrets.get(s.name),
      policy: s.policy,
    }));
  const dev = await startDevKernel({
    agents: agents(devReceiver),
    devMode: true,
    onError: () => {},
    dispatch: short ? { leaseTimeoutSeconds: SHORT_LEASE_S, reapIntervalMs: 250 } : undefined,
  });
  const devUrl = await dev.listen();
  const go = await startGoDev({
    agents: agents(goReceiver),
    env: short ? { REBUNO_DISPATCH_LEASE_TIMEOUT: `${SHORT_LEASE_S}s` } : {},
  });
  return {
    scenarios,
    dev: new World({ name: "dev", generation: "v1", url: devUrl, receiver: devReceiver, secrets }),
    go: new World({ name: "go", generation: "legacy", url: go.url, receiver: goReceiver, secrets }),
    async close() {
      await Promise.allSettled([dev.close(), go.stop(), devReceiver.close(), goReceiver.close()]);
    },
  };
}

async function runOne(world, scenario, computeStepId) {
  const entries = [];
  const norm = normaliser();
  const rec = (label, value) => {
    const n = entries.filter(([l]) => l === label || l.startsWith(`${label} #`)).length;
    if (n > 0) label = `${label} #${n + 1}`;
    const v = value && typeof value === "object" && "status" in value && "body" in value ? value : { value };
    entries.push([label, norm(v)]);
  };
  const ids = (execId, decision, kind, target, argsHash) =>
    stepIdCheck(computeStepId, execId, decision, kind, target, argsHash);
  try {
    await scenario.run({ w: world, a: scenario.name, rec, ids });
  } catch (err) {
    entries.push(["scenario error", String(err?.stack ?? err)]);
  }
  return entries;
}

/**
 * Returns `{ results: [{ scenario, dev, go }], differences: [{ scenario, label, dev, go }] }`.
 * `startDevKernel` and `computeStepId` are passed in (the suite imports them from the sources).
 */
export async function runDifferential({ startDevKernel, computeStepId, only }) {
  const pairs = await Promise.all([false, true].map((short) => worldPair({ short, startDevKernel })));
  try {
    const jobs = [];
    for (const pair of pairs)
      for (const s of pair.scenarios) {
        if (only && !only.includes(s.name)) continue;
        jobs.push(
          Promise.all([runOne(pair.dev, s, computeStepId), runOne(pair.go, s, computeStepId)]).then(
            ([dev, go]) => ({ scenario: s.name, dev, go }),
          ),
        );
      }
    const results = await Promise.all(jobs);
    const differences = [];
    for (const r of results) {
      const labels = [...new Set([...r.dev.map(([l]) => l), ...r.go.map(([l]) => l)])];
      for (const label of labels) {
        const d = r.dev.find(([l]) => l === label)?.[1];
        const g = r.go.find(([l]) => l === label)?.[1];
        if (JSON.stringify(d) !== JSON.stringify(g))
          differences.push({ scenario: r.scenario, label, dev: d, go: g });
      }
    }
    return { results, differences };
  } finally {
    await Promise.all(pairs.map((p) => p.close()));
  }
}
