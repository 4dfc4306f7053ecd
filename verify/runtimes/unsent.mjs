// Run by verify/runtimes/run.mjs on Node, Deno and Bun: a POST to a closed loopback port must fail as an
// *unsent* failure (never reached the kernel), the one case where a non-idempotent call may be
// sent again. Each runtime reports it differently; the transport must classify all the same.
import { createHttpCore, isUnsentFailure } from "@rebuno/kernel-transport";

const port =
  (globalThis.Deno?.env.get("REBUNO_CLOSED_PORT") ?? globalThis.process?.env.REBUNO_CLOSED_PORT) || "";
const core = createHttpCore({
  baseUrl: `http://127.0.0.1:${port}`,
  retry: { attempts: 1 },
  logger: { warn() {}, error() {} },
});
let result;
try {
  await core.request({ method: "POST", path: "/v0/executions", body: "{}" });
  result = { unsent: false, error: "no error" };
} catch (error) {
  result = { unsent: isUnsentFailure(error), error: String(error?.message) };
}
await core.close();
console.log(JSON.stringify({ engine: core.engine, ...result }));
