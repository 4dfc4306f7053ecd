"""The official Python bearer Client (rebuno==0.29.2) pointed at our kernel.

    .venv/bin/python pyclient.py inspect <execution_id>...   # parse everything the Python models read
    .venv/bin/python pyclient.py deny <approval_id>          # deny exactly as the SDK sends it
    .venv/bin/python pyclient.py grant <approval_id> [--by NAME] [--rationale TEXT]
    .venv/bin/python pyclient.py cancel <execution_id>
    .venv/bin/python pyclient.py create <agent_id> <input-json> [--session S] [--on-behalf-of SUBJECT]

Prints one JSON document on stdout. Exit status 1 (with the error on stderr) when the SDK raises,
which is how a kernel answer the official models cannot parse (e.g. `null` in a str field) shows up.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from rebuno import Client


async def inspect(client: Client, ids: list[str]) -> dict[str, Any]:
    report: dict[str, Any] = {}
    for eid in ids:
        ex = await client.get(eid)
        steps = await client.list_steps(eid)
        terminal = await client.list_steps(eid, status="terminal")
        events = []
        after = 0
        while True:
            page = await client.events(eid, after_seq=after, limit=100)
            if not page:
                break
            events.extend(page)
            after = page[-1].event_seq
            if len(page) < 100:
                break
        approvals = []
        for e in events:
            if e.type == "approval.requested" and isinstance(e.payload, dict):
                approvals.append((await client.get_approval(e.payload["approval_id"])).model_dump())
        for s in steps:
            await client.get_step(eid, s.step_id)
        report[eid] = {
            "execution": ex.model_dump(mode="json"),
            "steps": [s.model_dump(mode="json") for s in steps],
            "terminal_steps": len(terminal),
            "event_types": [e.type for e in events],
            "event_seqs": [e.event_seq for e in events],
            "approvals": approvals,
        }
    pending = await client.list_approvals()
    report["_pending_approvals"] = [a.id for a in pending]
    return report


async def main() -> int:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    i = sub.add_parser("inspect")
    i.add_argument("ids", nargs="+")
    d = sub.add_parser("deny")
    d.add_argument("approval_id")
    g = sub.add_parser("grant")
    g.add_argument("approval_id")
    g.add_argument("--by", default="")
    g.add_argument("--rationale", default="")
    x = sub.add_parser("cancel")
    x.add_argument("execution_id")
    c = sub.add_parser("create")
    c.add_argument("agent_id")
    c.add_argument("input")
    c.add_argument("--session", default="")
    c.add_argument("--on-behalf-of", default="")
    args = ap.parse_args()
    async with Client() as client:  # REBUNO_URL, REBUNO_API_KEY from the environment
        if args.cmd == "inspect":
            out: Any = await inspect(client, args.ids)
        elif args.cmd == "deny":
            await client.deny_approval(args.approval_id)  # sends {"rationale": ""}, no decided_by
            out = {"denied": args.approval_id}
        elif args.cmd == "cancel":
            await client.cancel(args.execution_id)
            out = {"cancelled": args.execution_id}
        elif args.cmd == "create":
            ex = await client.create(
                args.agent_id, json.loads(args.input), session=args.session, on_behalf_of=args.on_behalf_of
            )
            out = ex.model_dump(mode="json")
        else:
            await client.grant_approval(args.approval_id, decided_by=args.by, rationale=args.rationale)
            out = {"granted": args.approval_id}
    json.dump(out, sys.stdout, default=str)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(asyncio.run(main()))
    except Exception as e:  # report how the official SDK failed, for the harness to assert on
        sys.stderr.write(f"{type(e).__name__}: {e}\n")
        sys.exit(1)
