"""A scripted harness for the kit's tests: the lines the harness would send, in order.

The kit reads a line only when the protocol lets the harness speak (after a call, after an
idle, after stopped), so the whole conversation can be written down in advance and the kit's
output compared line by line.
"""

import io
import json
import sys
import os

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))

from turnstile_kit import Kit  # noqa: E402


def lines(*msgs):
    return b"".join(json.dumps(m).encode() + b"\n" for m in msgs)


def serve(run, *msgs, hooks=("getSteeringMessages",), agent=None, waiting_hooks=False):
    """Runs the kit on the scripted messages; returns (exit status, messages written)."""
    out = io.BytesIO()
    kit = Kit(run, name="test", version="0", tracks="1.6.0", hooks=hooks,
              reader=io.BytesIO(lines(*msgs)), writer=out, agent=agent, waiting_hooks=waiting_hooks)
    status = kit.serve()
    written = [json.loads(x) for x in out.getvalue().decode().splitlines()]
    return status, written


HELLO = {"type": "hello", "protocol": 1}
HELLO2 = {"type": "hello", "protocol": 1, "protocols": [1, 2]}


def start(session=1, **setup):
    return {"type": "start", "session": session, "setup": {"model": {"id": "m", "api": "a", "provider": "p"}, **setup}}


def answer(call_id, data=None, error=None):
    msg = {"type": "answer", "id": call_id}
    if error is not None:
        msg["error"] = error
    else:
        msg["data"] = data
    return msg


def deliver(kind, now, target=None, data=None, session=1):
    d = {"kind": kind, "now": now}
    if target is not None:
        d["target"] = target
    if data is not None:
        d["data"] = data
    return {"type": "deliver", "session": session, "delivery": d}


def stop(session=1):
    return {"type": "stop", "session": session}


def brief(msg):
    """A short text for a written message, for readable comparisons."""
    t = msg["type"]
    if t == "call":
        c = msg["call"]
        return f"call {msg['id']} {c['kind']}{':' + c['name'] if c.get('name') else ''}"
    if t == "notify":
        n = msg["notification"]
        if n["kind"] == "event":
            return f"ev {n['data']['type']}" + (f" {n['data']['text']}" if "text" in n["data"] else "")
        if n["kind"] == "outcome":
            d = n["data"]
            return f"outcome {d['id']} {d['op']} {d['outcome']}" + (f" {d['error']}" if "error" in d else "")
        return f"end {json.dumps(n['data'], sort_keys=True)}"
    if t == "error":
        return f"error {msg['message']}"
    return t
