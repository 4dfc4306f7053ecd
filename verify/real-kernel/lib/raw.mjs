// Raw-HTTP worlds for the differential suite: one kernel (our dev kernel or the Go kernel), a
// webhook receiver recording every dispatch, and hand-rolled agent signing for the kernel's
// generation (independent of the SDK, so a shared SDK bug cannot hide a kernel difference).
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const HEX64 = /^[0-9a-f]{64}$/;

const hmacHex = (secret, bytes) => createHmac("sha256", secret).update(bytes).digest("hex");

/** Webhook receiver: `/hook/<agentId>`; verifies the `sha256=` signature and queues the body. */
export async function startReceiver(secrets) {
  const queues = new Map(); // agentId -> { items: [], waiters: [] }
  const queue = (id) => {
    let q = queues.get(id);
    if (!q) queues.set(id, (q = { items: [], waiters: [] }));
    return q;
  };
  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const id = decodeURIComponent(req.url.replace(/^\/hook\//, ""));
      const body = Buffer.concat(chunks);
      const secret = secrets.get(id);
      const want = secret === undefined ? "" : `sha256=${hmacHex(secret, body)}`;
      const got = String(req.headers["rebuno-signature"] ?? "");
      const ok =
        want !== "" && got.length === want.length && timingSafeEqual(Buffer.from(got), Buffer.from(want));
      if (!ok) {
        res.writeHead(401).end();
        return;
      }
      const hook = JSON.parse(body.toString("utf8"));
      res.writeHead(202).end();
      const q = queue(id);
      const w = q.waiters.shift();
      if (w) w(hook);
      else q.items.push(hook);
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address();
  return {
    url: (agentId) => `http://127.0.0.1:${port}/hook/${encodeURIComponent(agentId)}`,
    /** The next webhook for the agent (bounded wait). */
    next(agentId, timeoutMs = 20_000) {
      const q = queue(agentId);
      if (q.items.length) return Promise.resolve(q.items.shift());
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => {
          q.waiters.splice(q.waiters.indexOf(done), 1);
          reject(new Error(`no webhook for ${agentId} within ${timeoutMs} ms`));
        }, timeoutMs);
        const done = (hook) => {
          clearTimeout(t);
          resolve(hook);
        };
        q.waiters.push(done);
      });
    },
    /** Webhooks received and not consumed yet. */
    pending: (agentId) => queue(agentId).items.length,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections?.();
        server.close(() => r());
      }),
  };
}

/** One HTTP exchange: status, content type class, parsed JSON (or raw text) body. */
export async function exchange(url, { method = "GET", headers = {}, body } = {}) {
  const res = await fetch(url, {
    method,
    headers,
    body,
    redirect: "manual",
    signal: AbortSignal.timeout(15_000),
  });
  const text = await res.text();
  let parsed = text;
  const type = res.headers.get("content-type") ?? "";
  if (type.includes("json") && text !== "") {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
  }
  return { status: res.status, json: type.includes("json"), body: parsed };
}

/**
 * A kernel under test. `generation` selects the agent request signing: `legacy`
 * (`sha256=<HMAC(body)>`, Rebuno-Dispatch-Id) or `v1` (timestamped message with lease headers).
 */
export class World {
  constructor({ name, generation, url, receiver, secrets }) {
    Object.assign(this, { name, generation, url, receiver, secrets });
  }

  client(method, path, body) {
    const headers = body === undefined ? {} : { "content-type": "application/json" };
    return exchange(this.url + path, { method, headers, body });
  }

  /**
   * An agent request. `lease` is the webhook body ({dispatch_id, dispatch_attempt?});
   * `sign`: "good" (default), "bad" (wrong secret) or "none".
   */
  agent(agentId, method, path, body = "", { lease, sign = "good", secret } = {}) {
    const key = secret ?? this.secrets.get(agentId) ?? "unknown";
    const headers = { "rebuno-agent-id": agentId };
    if (body !== "") headers["content-type"] = "application/json";
    const signKey = sign === "bad" ? `${key}-wrong` : key;
    if (this.generation === "legacy") {
      if (lease) headers["rebuno-dispatch-id"] = lease.dispatch_id;
      if (sign !== "none") headers["rebuno-signature"] = `sha256=${hmacHex(signKey, Buffer.from(body))}`;
    } else {
      const ts = String(Math.floor(Date.now() / 1000));
      const dispatchId = lease?.dispatch_id ?? "";
      const attempt = lease?.dispatch_attempt === undefined ? "" : String(lease.dispatch_attempt);
      headers["rebuno-timestamp"] = ts;
      if (dispatchId) headers["rebuno-dispatch-id"] = dispatchId;
      if (attempt) headers["rebuno-dispatch-attempt"] = attempt;
      const message = `rebuno-request-v1\n${method}\n${path}\n${ts}\n${dispatchId}\n${attempt}\n${body}`;
      if (sign !== "none") headers["rebuno-signature"] = `v1=${hmacHex(signKey, Buffer.from(message))}`;
    }
    return exchange(this.url + path, { method, headers, body: body === "" ? undefined : body });
  }

  /** Every event of the execution, ascending. */
  async events(execId) {
    const r = await this.client("GET", `/v0/executions/${execId}/events?limit=1000`);
    return Array.isArray(r.body) ? r.body : [];
  }

  /** Poll until the execution's log holds an event of `type` (count `n`), bounded. */
  async waitEvent(execId, type, n = 1, timeoutMs = 20_000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const evs = await this.events(execId);
      if (evs.filter((e) => e.type === type).length >= n) return evs;
      if (Date.now() > deadline)
        throw new Error(`${this.name}: no ${n}× ${type} on ${execId} in ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** The next webhook for the agent, once the kernel has recorded its acknowledgement. */
  async dispatch(agentId, execId, acked = 1) {
    const hook = await this.receiver.next(agentId);
    if (hook.execution_id !== execId)
      throw new Error(`${this.name}: webhook for ${hook.execution_id}, expected ${execId}`);
    await this.waitEvent(execId, "dispatch.acked", acked);
    return hook;
  }
}

/**
 * Replace ids and times by stable placeholders (numbered by first appearance in this world), so
 * two kernels' transcripts compare field by field. Step ids (64 hex) also get placeholders: their
 * derivation is checked separately against the protocol's formula.
 */
export function normaliser() {
  const ids = new Map();
  const place = (kind, v) => {
    const k = `${kind}:${v}`;
    if (!ids.has(k))
      ids.set(k, `<${kind}${[...ids.keys()].filter((x) => x.startsWith(`${kind}:`)).length + 1}>`);
    return ids.get(k);
  };
  const walk = (v, key) => {
    if (typeof v === "string") {
      if (UUID.test(v)) return place("id", v.toLowerCase());
      if (TIME.test(v)) return "<time>";
      if (HEX64.test(v) && key !== "args_hash") return place("step", v);
      let s = v;
      s = s.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, (m) =>
        place("id", m.toLowerCase()),
      );
      return s;
    }
    if (Array.isArray(v)) return v.map((x) => walk(x, key));
    if (v && typeof v === "object") {
      const out = {};
      for (const k of Object.keys(v).sort()) out[k] = walk(v[k], k);
      return out;
    }
    return v;
  };
  return walk;
}
