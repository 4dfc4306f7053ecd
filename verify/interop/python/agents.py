"""Agents written with the official Python SDK (rebuno==0.29.2), driven by verify/interop/scenarios/*.mjs.

Run one agent per process:

    REBUNO_URL=http://127.0.0.1:8080 REBUNO_AGENT_SECRET=... \
        .venv/bin/python agents.py <kind> --agent-id <id> --port <port>

Every agent returns what it observed (tool results, caught errors, dispatch attempt) as its output so
the Node harness can assert on it through our @rebuno/client. Nothing here fakes a kernel answer.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import httpx2
from rebuno import (
    Agent,
    Result,
    ToolError,
    execution,
    previous,
    step,
    subagent,
    tool,
    wrap_tool,
)
from rebuno._kernel import DispatchLease, KernelClient
from rebuno.errors import APIError, RebunoError

log = logging.getLogger("interop")

# Tool bodies that really ran in this process, per execution (a replay never increments these).
_CALLS: dict[str, dict[str, int]] = {}


def ran(name: str) -> None:
    per = _CALLS.setdefault(execution().id, {})
    per[name] = per.get(name, 0) + 1


def calls() -> dict[str, int]:
    return dict(_CALLS.get(execution().id, {}))


def lease_facts() -> dict[str, Any]:
    ctx = execution()
    return {"dispatch_id": ctx.dispatch_id, "attempt": ctx.dispatch_attempt}


# --------------------------------------------------------------------------------------------
# tools: every @tool form, sync bodies, wrap_tool, step(), a denied tool, a failing tool
# --------------------------------------------------------------------------------------------


@tool
async def add(a: int, b: int = 2) -> int:
    ran("add")
    return a + b


@tool()
def shout(text: str) -> str:  # sync body: the SDK offloads it to a thread
    ran("shout")
    return text.upper()


@tool("lookup_user")
async def find_user(user_id: str, verbose: bool = False) -> dict[str, Any]:
    ran("lookup_user")
    return {"id": user_id, "name": "Ada", "verbose": verbose}


@tool("send_note", idempotency="at_most_once")
async def send_note(to: str, body: str) -> dict[str, Any]:
    ran("send_note")
    return {"sent": True, "to": to, "chars": len(body)}


@tool(idempotency="at_most_once")
async def archive(item: str) -> None:
    ran("archive")
    return None


@tool
async def explode(msg: str) -> str:
    ran("explode")
    raise ValueError(msg)


@tool
async def transfer(amount: float) -> str:
    ran("transfer")  # must never run: policy denies it
    return "transferred"


def _kv_invoke(args: dict[str, Any]) -> dict[str, Any]:
    ran("kv_get")
    return {"key": args["key"], "value": 42, "seen": sorted(args)}


kv_get = wrap_tool(
    "kv_get",
    _kv_invoke,
    description="read a key",
    args_schema={
        "type": "object",
        "properties": {"key": {"type": "string"}, "missing": {"type": "string"}},
        "required": ["key"],
    },
    transform_args=lambda a: {k: v for k, v in a.items() if v is not None},
    to_result=lambda r: {"value": r["value"], "seen": r["seen"]},
)


async def tools_process(text: str, n: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    out["add"] = await add(n, 3)
    out["add_default"] = await add(n)
    out["add_again"] = await add(n, 3)  # same args again: occurrence 1
    out["shout"] = await shout(text)
    out["user"] = await find_user("u-1")
    out["note"] = await send_note("ops@example.com", "héllo wörld ✓")
    out["archive"] = await archive("box-7")
    out["kv"] = await kv_get(key="k1", missing=None)
    out["pick"] = await step("pick", lambda: 7)
    out["scale"] = await step("scale", lambda x, factor: x * factor, {"x": 1.5, "factor": 2})
    # Concurrent identical calls: the kernel hands out occurrences 0, 1, 2 under its lock.
    out["gathered"] = list(await asyncio.gather(add(1, 1), add(1, 1), add(1, 1)))
    out["denied"] = await transfer(100.0)
    try:
        await explode("kaput")
        out["explode"] = "no error"
    except ToolError as e:
        out["explode"] = {"str": str(e), "tool_id": e.tool_id, "step_id": e.step_id}
    out["calls"] = calls()
    out["lease"] = lease_facts()
    return out


# --------------------------------------------------------------------------------------------
# probe: v1 request signatures and lease headers, checked from inside a live dispatch
# --------------------------------------------------------------------------------------------


class _Probe:
    def __init__(self, base_url: str) -> None:
        self.http = httpx2.AsyncClient(base_url=base_url, timeout=10.0)

    async def send(
        self,
        method: str,
        path: str,
        body: bytes = b"",
        *,
        agent_id: str,
        secret: str,
        lease: DispatchLease | None = None,
        lease_headers: dict[str, str] | None = None,
        ts_offset: int = 0,
        send_body: bytes | None = None,
        signature: str | None = None,
    ) -> dict[str, Any]:
        """Signs with the SDK's own KernelClient._sign, then optionally breaks one thing."""
        signer = KernelClient(agent_id=agent_id, secret=secret, http=self.http)
        headers = {"Content-Type": "application/json"}
        if lease is not None:
            headers.update(lease.headers())
        if lease_headers is not None:
            headers.update(lease_headers)
        req = self.http.build_request(method, path, content=body, headers=headers)
        req.headers["Rebuno-Agent-Id"] = agent_id
        req.headers["Rebuno-Timestamp"] = str(int(time.time()) + ts_offset)
        req.headers["Rebuno-Signature"] = signature or signer._sign(req)
        if send_body is not None:
            signed = dict(req.headers)
            signed.pop("content-length", None)
            req = self.http.build_request(method, path, content=send_body, headers=signed)
        resp = await self.http.send(req, follow_redirects=False)
        try:
            data = resp.json()
        except Exception:
            data = None
        code = data.get("code") if isinstance(data, dict) else None
        return {"status": resp.status_code, "code": code}


async def _sdk_call(coro: Any) -> dict[str, Any]:
    """Run an official KernelClient call and report how the SDK surfaced the answer."""
    try:
        value = await coro
        return {"ok": True, "value": value if isinstance(value, (bool, type(None))) else "set"}
    except APIError as e:
        return {"ok": False, "cls": type(e).__name__, "status": e.status_code, "code": e.code}
    except RebunoError as e:
        return {"ok": False, "cls": type(e).__name__}


async def probe_process(note: str = "") -> dict[str, Any]:
    ctx = execution()
    eid = ctx.id
    agent_id = ctx.agent_id
    secret = os.environ["REBUNO_AGENT_SECRET"]
    base = os.environ["REBUNO_URL"]
    lease: DispatchLease = ctx._lease  # the webhook's (dispatch_id, attempt)
    p = _Probe(base)
    out: dict[str, Any] = {"lease": lease_facts()}
    steps_body = b'{"kind": "tool_call", "target": "probe_target", "args": {}, "idempotency": "safe_to_retry", "resources": []}'

    def kc(aid: str = agent_id, sec: str = secret) -> KernelClient:
        return KernelClient(agent_id=aid, secret=sec, http=p.http)

    out["get_ok"] = await _sdk_call(kc().get_execution(eid))
    out["heartbeat_ok"] = await _sdk_call(kc().heartbeat(eid, lease=lease))
    out["query_signed"] = await p.send("GET", f"/v0/executions/{eid}/steps?status=terminal", agent_id=agent_id, secret=secret)
    out["wrong_secret"] = await _sdk_call(kc(sec=secret + "x").get_execution(eid))
    out["unknown_agent"] = await _sdk_call(kc(aid="no-such-agent", sec=secret).get_execution(eid))
    out["other_agent"] = await _sdk_call(
        kc(aid=os.environ["PROBE_OTHER_ID"], sec=os.environ["PROBE_OTHER_SECRET"]).get_execution(eid)
    )
    out["ts_past_400"] = await p.send("GET", f"/v0/executions/{eid}", agent_id=agent_id, secret=secret, ts_offset=-400)
    out["ts_future_400"] = await p.send("GET", f"/v0/executions/{eid}", agent_id=agent_id, secret=secret, ts_offset=400)
    out["ts_past_200"] = await p.send("GET", f"/v0/executions/{eid}", agent_id=agent_id, secret=secret, ts_offset=-200)
    out["tampered_body"] = await p.send(
        "POST", f"/v0/executions/{eid}/steps", steps_body, agent_id=agent_id, secret=secret, lease=lease,
        send_body=steps_body.replace(b"probe_target", b"other_target"),
    )
    out["sha256_scheme"] = await p.send(
        "GET", f"/v0/executions/{eid}", agent_id=agent_id, secret=secret, signature="sha256=" + "0" * 64
    )
    out["submit_no_lease"] = await p.send("POST", f"/v0/executions/{eid}/steps", steps_body, agent_id=agent_id, secret=secret)
    out["submit_attempt_zero"] = await p.send(
        "POST", f"/v0/executions/{eid}/steps", steps_body, agent_id=agent_id, secret=secret,
        lease_headers={"Rebuno-Dispatch-Id": lease.dispatch_id, "Rebuno-Dispatch-Attempt": "0"},
    )
    out["submit_attempt_text"] = await p.send(
        "POST", f"/v0/executions/{eid}/steps", steps_body, agent_id=agent_id, secret=secret,
        lease_headers={"Rebuno-Dispatch-Id": lease.dispatch_id, "Rebuno-Dispatch-Attempt": "one"},
    )
    future = DispatchLease(lease.dispatch_id, lease.attempt + 1, lease.timeout)
    other = DispatchLease(str(uuid.uuid4()), lease.attempt, lease.timeout)
    out["heartbeat_next_attempt"] = await _sdk_call(kc().heartbeat(eid, lease=future))
    out["heartbeat_other_dispatch"] = await _sdk_call(kc().heartbeat(eid, lease=other))
    out["submit_next_attempt"] = await _sdk_call(
        kc().submit_step(eid, lease=future, kind="tool_call", target="probe_target", args={}, idempotency="safe_to_retry")
    )
    out["complete_exec_next_attempt"] = await _sdk_call(kc().complete_execution(eid, lease=future, output="nope"))
    # A real step under the live lease; its outcome writes are fenced by attempt.
    dec = await kc().submit_step(
        eid, lease=lease, kind="tool_call", target="probe_target", args={"n": 1}, idempotency="safe_to_retry"
    )
    out["submit_ok"] = {"decision": dec.decision, "step_id_len": len(dec.step_id)}
    out["complete_step_next_attempt"] = await _sdk_call(kc().complete_step(eid, dec.step_id, lease=future, result="stale"))
    out["complete_step_ok"] = await _sdk_call(kc().complete_step(eid, dec.step_id, lease=lease, result="probed"))
    out["complete_step_again"] = await _sdk_call(kc().complete_step(eid, dec.step_id, lease=lease, result="again"))
    out["fail_step_after_complete"] = await _sdk_call(kc().fail_step(eid, dec.step_id, lease=lease, error={"message": "late"}))
    out["get_step_done"] = (await kc().get_step(eid, dec.step_id)).model_dump(include={"status", "result", "target"})
    out["get_step_missing"] = await _sdk_call(kc().get_step(eid, "0" * 64))
    out["previous_none"] = await _sdk_call(kc().previous_state(eid))
    await p.http.aclose()
    out["note"] = note
    return out


# --------------------------------------------------------------------------------------------
# crash: at_most_once body killed mid-flight → redelivery → indeterminate ToolError
# --------------------------------------------------------------------------------------------


@tool("charge_card", idempotency="at_most_once")
async def charge_card(amount: int) -> str:
    ran("charge_card")
    marker = os.environ.get("INTEROP_MARKER")
    if marker:
        Path(marker).write_text(f"{os.getpid()}\n")
    await asyncio.sleep(float(os.environ.get("CHARGE_SECONDS", "120")))
    return "charged"


@tool("refund_card")
async def refund_card(amount: int) -> str:
    ran("refund_card")
    return f"refunded {amount}"


async def crash_process(amount: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    try:
        out["first"] = await charge_card(amount)
    except ToolError as e:
        out["first_error"] = {"str": str(e), "tool_id": e.tool_id, "step_id": e.step_id}
    out["retry"] = await charge_card(amount)
    out["refund"] = await refund_card(amount)
    out["calls"] = calls()
    out["lease"] = lease_facts()
    return out


# --------------------------------------------------------------------------------------------
# slow: a tool longer than the lease, kept alive by the SDK's heartbeats
# --------------------------------------------------------------------------------------------


@tool("slow_job")
async def slow_job(seconds: float) -> dict[str, Any]:
    ran("slow_job")
    started = time.monotonic()
    await asyncio.sleep(seconds)
    return {"slept": round(time.monotonic() - started, 1)}


async def slow_process(seconds: float) -> dict[str, Any]:
    res = await slow_job(seconds)
    return {"job": res, "calls": calls(), "lease": lease_facts()}


@tool("starve_once")
async def starve_once(seconds: float) -> dict[str, Any]:
    """First run blocks the event loop (no heartbeats, no webhooks served) past the lease."""
    ran("starve_once")
    marker = Path(os.environ["INTEROP_MARKER"])
    if not marker.exists():
        marker.write_text(f"{os.getpid()}\n")
        time.sleep(seconds)  # deliberately synchronous inside an async tool
        return {"blocked": True}
    return {"blocked": False}


async def starve_process(seconds: float) -> dict[str, Any]:
    res = await starve_once(seconds)
    return {"result": res, "calls": calls(), "lease": lease_facts()}


# --------------------------------------------------------------------------------------------
# approval: require_approval, resumed after a grant; a denied approval becomes the refusal string
# --------------------------------------------------------------------------------------------


@tool("read_balance")
async def read_balance(account: str) -> int:
    ran("read_balance")
    return 1200


@tool("wire_money", idempotency="at_most_once")
async def wire_money(amount: int, to: str) -> dict[str, Any]:
    ran("wire_money")
    return {"wired": amount, "to": to}


async def approval_process(amount: int, to: str) -> dict[str, Any]:
    balance = await read_balance("acc-1")
    wire = await wire_money(amount, to)
    return {"balance": balance, "wire": wire, "calls": calls(), "lease": lease_facts()}


# --------------------------------------------------------------------------------------------
# rate limits: a refused call raises RateLimited (not caught by @tool); a parked call blocks
# --------------------------------------------------------------------------------------------


@tool("ping")
async def ping(n: int) -> str:
    ran("ping")
    return f"pong {n}"


async def ratelimit_process(count: int) -> dict[str, Any]:
    pongs = [await ping(i) for i in range(count)]
    return {"pongs": pongs, "calls": calls(), "lease": lease_facts()}


# --------------------------------------------------------------------------------------------
# subagents: parent tool bodies call subagent() with and without session=
# --------------------------------------------------------------------------------------------


@tool("delegate")
async def delegate(topic: str, shared_session: bool = False) -> Any:
    ran("delegate")
    child = os.environ["CHILD_AGENT_ID"]
    session = f"{child}:{execution().id}" if shared_session else ""
    return await subagent(child, {"topic": topic}, session=session)


@tool("delegate_fail")
async def delegate_fail(topic: str) -> Any:
    ran("delegate_fail")
    return await subagent(os.environ["CHILD_AGENT_ID"], {"topic": topic, "fail": True})


async def parent_process(
    topics: list[str], shared_session: bool = False, with_failure: bool = True, parallel: bool = False
) -> dict[str, Any]:
    if parallel:  # every call in flight waits → one suspend for all of them
        results = list(await asyncio.gather(*(delegate(t, shared_session) for t in topics)))
    else:
        results = []
        for t in topics:
            results.append(await delegate(t, shared_session))
    out: dict[str, Any] = {"results": results}
    if with_failure:
        try:
            out["failure"] = await delegate_fail("doomed")
        except ToolError as e:
            out["failure_error"] = {"str": str(e), "tool_id": e.tool_id}
    out["calls"] = calls()
    out["lease"] = lease_facts()
    return out


@tool("summarize")
async def summarize(topic: str) -> str:
    ran("summarize")
    return f"summary of {topic}"


async def child_process(topic: str, fail: bool = False) -> Any:
    prev = await previous()
    if fail:
        raise RuntimeError(f"child failed on purpose ({topic})")
    summary = await summarize(topic)
    n = prev["n"] + 1 if isinstance(prev, dict) and "n" in prev else 1
    return Result(output={"topic": topic, "summary": summary, "n": n, "prev": prev}, state={"n": n, "last": topic})


# --------------------------------------------------------------------------------------------
# session: turns carry state; previous() returns the last completed turn's state (or output)
# --------------------------------------------------------------------------------------------


@tool("slow_echo")
async def slow_echo(text: str) -> str:
    ran("slow_echo")
    await asyncio.sleep(0.4)
    return text


async def session_process(text: str, plain: bool = False) -> Any:
    prev = await previous()
    history = list(prev.get("history", [])) if isinstance(prev, dict) else []
    reply = await slow_echo(text)
    history.append(reply)
    out = {"turn": len(history), "prev": prev, "history": history}
    if plain:
        return out  # no Result: the next turn's previous() is this output
    return Result(output=out, state={"history": history})


# --------------------------------------------------------------------------------------------
# resources: resource() + @tool(resources=) with checkpoints; a fork restores from a checkpoint
# --------------------------------------------------------------------------------------------


class SandboxDriver:
    """A fake sandbox whose checkpoint ref encodes its files, so a restore is observable."""

    driver_id = "interop.sandbox"
    configuration = {"image": "python:3.11"}
    coverage_reuse = False

    def create(self, checkpoint_ref: str | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
        files = [f for f in (checkpoint_ref or "ckpt:").split(":", 1)[1].split(",") if f]
        handle = {"files": set(files), "restored_from": checkpoint_ref}
        return handle, {"sandbox_id": f"sb-{uuid.uuid4().hex[:8]}"}

    def open(self, binding: Any) -> dict[str, Any]:
        return {"files": set(), "restored_from": None, "opened": binding}

    def checkpoint(self, handle: dict[str, Any]) -> str:
        return "ckpt:" + ",".join(sorted(handle["files"]))


SANDBOXES: dict[str, dict[str, Any]] = {}


@tool("write_file", resources=["sandbox"])
async def write_file(name: str) -> str:
    ran("write_file")
    SANDBOXES[execution().id]["files"].add(name)
    return f"wrote {name}"


async def resources_process(files: list[str]) -> dict[str, Any]:
    from rebuno import CheckpointPolicy, resource

    sb = await resource("sandbox", driver=SandboxDriver(), checkpoints=CheckpointPolicy(every_steps=1))
    SANDBOXES[execution().id] = sb
    wrote = [await write_file(f) for f in files]
    return {
        "wrote": wrote,
        "files": sorted(sb["files"]),
        "restored_from": sb["restored_from"],
        "calls": calls(),
        "lease": lease_facts(),
    }


# --------------------------------------------------------------------------------------------
# llm: rebuno.http_client() records provider calls as llm_call steps (plain, streamed, refused)
# --------------------------------------------------------------------------------------------


@tool("confirm")
async def confirm(what: str) -> str:
    ran("confirm")
    return f"confirmed {what}"


async def llm_process(prompt: str) -> dict[str, Any]:
    from rebuno import http_client

    base = os.environ["LLM_URL"]
    out: dict[str, Any] = {}
    async with http_client(timeout=10.0) as llm:
        r = await llm.post(f"{base}/v1/chat", json={"model": "fake-1", "messages": [{"role": "user", "content": prompt}]})
        out["plain"] = {"status": r.status_code, "json": r.json(), "content_type": r.headers.get("content-type")}
        chunks = []
        async with llm.stream("POST", f"{base}/v1/chat", json={"model": "fake-1", "stream": True, "prompt": prompt}) as sr:
            async for text in sr.aiter_text():
                chunks.append(text)
            out["stream"] = {"status": sr.status_code, "text": "".join(chunks)}
        refused = await llm.post(f"{base}/v1/chat", json={"model": "forbidden-model", "messages": []})
        out["refused"] = {"status": refused.status_code, "json": refused.json()}
    out["confirm"] = await confirm(prompt)  # needs approval: forces a second dispatch that replays the LLM calls
    out["calls"] = calls()
    out["lease"] = lease_facts()
    return out


# --------------------------------------------------------------------------------------------
# noop: the benchmark agent (1,000 no-op tool calls inside one execution)
# --------------------------------------------------------------------------------------------


@tool("noop")
async def noop(i: int) -> int:
    return i


async def bench_process(calls: int) -> dict[str, Any]:
    started = time.perf_counter()
    for i in range(calls):
        await noop(i)
    elapsed = time.perf_counter() - started
    return {"calls": calls, "seconds": elapsed}


# --------------------------------------------------------------------------------------------

KINDS = {
    "tools": tools_process,
    "probe": probe_process,
    "crash": crash_process,
    "slow": slow_process,
    "starve": starve_process,
    "approval": approval_process,
    "parent": parent_process,
    "ratelimit": ratelimit_process,
    "resources": resources_process,
    "llm": llm_process,
    "child": child_process,
    "session": session_process,
    "bench": bench_process,
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("kind", choices=sorted(KINDS))
    ap.add_argument("--agent-id", required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--description", default=None)
    args = ap.parse_args()
    logging.basicConfig(
        level=logging.INFO if args.kind != "bench" else logging.WARNING,
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    agent = Agent(args.agent_id, description=args.description)
    # A standby process (crash scenario) imports everything first, then binds once told to.
    go = os.environ.get("INTEROP_WAIT_FOR")
    if go:
        Path(go + ".ready").write_text(f"{os.getpid()}\n")
        while not Path(go).exists():
            time.sleep(0.02)
    agent.run(KINDS[args.kind], host="127.0.0.1", port=args.port)

if __name__ == "__main__":
    main()
