/**
 * The default webhook transport: one `node:http(s)` POST on a keep-alive agent per kernel.
 *
 * Node's global `fetch` costs the kernel a `Request`, a `Headers`, a web stream for the body and
 * another for the answer per delivery; profiled under B5 (4 steps per execution) that was about a
 * fifth of the kernel's CPU. A webhook is a small body sent to a URL the kernel already holds, and
 * the answer's status is all the protocol reads, so a plain request does the same job.
 *
 * Same behaviour as the fetch delivery it replaces: redirects are not followed (a 3xx is a failed
 * delivery), the whole exchange (connect, answer, draining its body) is bounded by the timeout,
 * and the error a failure rejects with carries the socket `code` that `networkFailure` classifies.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";

/** Keep-alive connections to agents, owned by one dispatcher. */
export class WebhookPoster {
  private readonly http = new HttpAgent({ keepAlive: true });
  private readonly https = new HttpsAgent({ keepAlive: true });

  /**
   * POST `body` to `url`. Resolves with the answer's status once its body was read (so the socket
   * is reused); rejects with the socket error, or a `TimeoutError` after `timeoutMs`.
   */
  post(
    url: string,
    headers: Readonly<Record<string, string>>,
    body: string,
    timeoutMs: number,
  ): Promise<number> {
    return new Promise((resolve, reject) => {
      const target = new URL(url);
      const secure = target.protocol === "https:";
      if (!secure && target.protocol !== "http:") {
        reject(new TypeError(`webhook URL scheme ${target.protocol} is not http(s)`));
        return;
      }
      const send = secure ? httpsRequest : httpRequest;
      let timer: NodeJS.Timeout | undefined;
      const fail = (error: unknown): void => {
        clearTimeout(timer);
        reject(error);
      };
      const req = send(
        target,
        {
          method: "POST",
          agent: secure ? this.https : this.http,
          headers: { ...headers, "content-length": Buffer.byteLength(body) },
        },
        (res: IncomingMessage) => {
          res.on("error", fail);
          res.on("end", () => {
            clearTimeout(timer);
            resolve(res.statusCode ?? 0);
          });
          res.resume();
        },
      );
      req.on("error", fail);
      timer = setTimeout(() => {
        const error = new Error(`the agent did not answer within ${timeoutMs} ms`);
        error.name = "TimeoutError";
        fail(error);
        req.destroy(error);
      }, timeoutMs);
      timer.unref(); // like `AbortSignal.timeout`: a delivery in flight does not hold the process open
      req.end(body);
    });
  }

  /** Close every kept-alive connection (the kernel is closing). */
  close(): void {
    this.http.destroy();
    this.https.destroy();
  }
}
