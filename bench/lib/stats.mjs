import { cpus } from "node:os";

// Small statistics helpers shared by the benchmarks: every figure is reported with its baseline
// from the same run, so machines of different speed give comparable ratios.

/** Summarize a list of durations in nanoseconds (as numbers) into µs figures. */
export function summarize(samplesNs) {
  const sorted = Float64Array.from(samplesNs).sort();
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] / 1000;
  const mean = sorted.reduce((a, b) => a + b, 0) / sorted.length / 1000;
  return { n: sorted.length, meanUs: round(mean), p50Us: round(at(0.5)), p99Us: round(at(0.99)) };
}

export function round(x, digits = 2) {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

export function ratio(subject, baseline) {
  return round(subject / baseline, 3);
}

/** Time `iterations` sequential awaits of `fn`, returning per-call ns samples. */
export async function timeSequential(fn, iterations) {
  const samples = new Array(iterations);
  for (let i = 0; i < iterations; i++) {
    const t0 = process.hrtime.bigint();
    await fn(i);
    samples[i] = Number(process.hrtime.bigint() - t0);
  }
  return samples;
}

/** Run `workers` concurrent loops of `perWorker` calls; returns calls per second. */
export async function throughput(workers, perWorker, fn) {
  const t0 = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      for (let i = 0; i < perWorker; i++) await fn(w, i);
    }),
  );
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  return (workers * perWorker) / seconds;
}

export function environment() {
  return { node: process.version, cpus: cpus().length, platform: process.platform };
}

/** Print a human table line and a machine JSON line for bench/run.mjs to collect. */
export function report(id, result) {
  console.log(`${id}: ${JSON.stringify(result)}`);
  console.log(`BENCH_JSON ${JSON.stringify({ id, ...result })}`);
}
