// Code shown in docs/dev-kernel.md, compiled and run here so the docs cannot drift from the API.
import { expect, test } from "vitest";
import { startDevKernel } from "../src/index.js";

test("start, listen and close (docs/dev-kernel.md: starting it from code)", async () => {
  // #region start
  const kernel = await startDevKernel({
    agents: [{ id: "hello", webhookUrl: "http://127.0.0.1:5000/webhook", secret: "hello-secret" }],
  });
  const url = await kernel.listen(); // http://127.0.0.1:<random port>; or kernel.fetch(request) in process
  const health = await fetch(`${url}/v0/health`);
  await kernel.close(); // stops the loops, waits for deliveries and requests in flight, ends SSE streams
  // #endregion
  expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  expect(await health.json()).toEqual({ status: "ok" });
});
