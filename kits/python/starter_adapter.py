#!/usr/bin/env python3
"""A starter turnstile adapter for a Python agent loop. Copy it next to your loop and fill the
places marked FILL (search for it). Then:

    go run ./cmd/turnstile conform --impl "python3 my_adapter.py" --profile semantic

Everything protocol-side (hello, sessions, calls, deliveries, the virtual clock, idle, stop)
is the kit's; this file only maps your loop's hooks, tools, stream function and events onto a
turnstile_kit.Session. The wire shapes are conformance/PROTOCOL.md §5; an answer field that is
absent means "leave pi's value as it is". examples/python-loop/adapter.py is a filled copy.
"""

import sys

try:
    import turnstile_kit as kit
except ModuleNotFoundError:
    sys.exit("starter_adapter: cannot import turnstile_kit. Install it (pip install ./kits/python, from the "
             "turnstile checkout) or put the checkout's kits/python/src on PYTHONPATH, e.g. "
             "--impl \"env PYTHONPATH=kits/python/src python3 my_adapter.py\"")

# FILL 1: import your loop.
# from my_agent import run_loop, continue_loop, Tool

NAME, VERSION = "my-loop", "0.1.0"  # FILL 2: your loop's name and version
TRACKS = "1.6.0"  # the pi release whose behaviour you claim

# FILL 3: the hooks your loop can install (pi's names); scenarios needing others are skipped.
HOOKS = kit.ALL_HOOKS
# and the optional features it lacks (docs/SEMANTICS.md, "Optional features"), e.g.
# ["continue", "customMessages", "throwingHooks"]: their scenarios are skipped, with the reason.
# streamOptions: remove it once your loop passes its stream function the session id and the
# identity (setup's sessionId / identity, PROTOCOL.md §13.4) and stream_fn below passes them on.
# Agent scenarios need serve(..., agent=...): kits/python/README.md, "Protocol version 2".
LACKS = ["streamOptions"]


def wire_context(messages, tools):
    """A context as the harness sees it: the messages and the names of the executable tools."""
    return {"messages": messages, "tools": [t["name"] if isinstance(t, dict) else t.name for t in tools]}


def hooks_for(s: kit.Session, tool_pool: dict):
    """Every installed hook as an async function taking and returning pi's shapes.

    Each makes a synchronous call (the harness answers at once) and raises kit.CallError with
    the answer's error text, which your loop must treat as the hook throwing.
    """
    def ctx(raw):  # a context in an answer: names back to your tools
        return None if raw is None else (raw.get("messages") or [], [tool_pool[n] for n in raw.get("tools") or [] if n in tool_pool])

    table = {
        "convertToLlm": lambda messages: s.hook("convertToLlm", {"messages": messages}).get("messages") or [],
        "transformContext": lambda messages: s.hook("transformContext", {"messages": messages}).get("messages") or [],
        "getApiKey": lambda provider: s.hook("getApiKey", {"provider": provider}).get("apiKey"),
        # data: {context: wire_context(...), model: {id, api, provider}, thinkingLevel}; a "messages" field must be ignored
        "prepareRequest": lambda data: {k: v for k, v in s.hook("prepareRequest", data).items() if k != "messages"},
        # data: {turn: {message, toolResults, context: wire_context(...), newMessages}}
        "prepareNextTurn": lambda data: s.hook("prepareNextTurn", data),
        "finishTurn": lambda data: s.hook("finishTurn", data).get("action"),  # "continue" / "end" / None
        "getSteeringMessages": lambda: s.hook("getSteeringMessages", {}).get("messages") or [],
        "getFollowUpMessages": lambda: s.hook("getFollowUpMessages", {}).get("messages") or [],
        # data: {assistantMessage, toolCall, args, context}; answer {block?, reason?, terminate?, setArgs?}:
        # assign setArgs onto your args object in place (they reach execute unvalidated)
        "beforeToolCall": lambda data: s.hook("beforeToolCall", data),
        # data: {assistantMessage, toolCall, args, result, isError, context}; answer: fields to override
        "afterToolCall": lambda data: s.hook("afterToolCall", data),
    }

    def make_async(f):
        async def hook(*args):
            return f(*args)
        return hook

    return {name: make_async(f) for name, f in table.items() if s.installed(name)}, ctx


async def run(s: kit.Session):
    """One scenario: build the loop from s.setup (PROTOCOL.md §4), run it, return its new messages."""
    setup = s.setup
    tool_pool = {}
    for ts in setup.get("tools") or []:
        async def execute(tool_call_id, args, signal=None, on_update=None, _name=ts["name"]):
            # the world runs the tool: the result (or a raised kit.ToolError) comes by delivery
            return await s.run_tool(tool_call_id, _name, args, on_update)

        prepare = None
        if ts.get("prepareArguments") is not None:  # pi's prepareArguments, applied locally
            prepare = lambda args, extra=ts["prepareArguments"]: {**(args or {}), **extra}  # noqa: E731
        # FILL 4: your tool object from ts["name"], ts["description"], ts["parameters"],
        # ts.get("executionMode"), prepare and execute.
        tool_pool[ts["name"]] = {"name": ts["name"], "execute": execute, "prepare": prepare}

    hooks, context_of = hooks_for(s, tool_pool)

    async def stream_fn(model, messages, thinking_level, api_key, options=None):
        # messages: exactly what goes to the provider (after transformContext, convertToLlm, and
        # pi-ai's normalizeContext); thinking_level "off" when none; api_key "" when none;
        # options: {sessionId, identity} as your loop gives them (needed unless LACKS has streamOptions).
        return s.open_stream({"model": {"id": model["id"], "api": model["api"], "provider": model["provider"]},
                              "messages": messages, "thinkingLevel": thinking_level, "apiKey": api_key}, options)
        # iterate it with `async for event in stream` (pi-ai AssistantMessageEvent dicts); then stream.result()

    async def emit(event):  # every loop event, at the moment it happens (serialised at once)
        s.emit(event)

    messages = list(setup.get("messages") or [])
    active = [tool_pool[n] for n in setup.get("activeTools") or [] if n in tool_pool]
    model, level, api_key = setup["model"], setup.get("thinkingLevel"), setup.get("apiKey")
    # time: s.now() (virtual milliseconds) for timestamps and durationMs; abort: s.signal.aborted
    # FILL 5: run your loop and return its new messages (raise to fail the run), e.g.
    # if setup.get("entry") == "continue":
    #     return await continue_loop(messages, active, model, level, api_key, hooks, emit, s.signal, stream_fn, clock=s.now)
    # return await run_loop(setup.get("prompts") or [], messages, active, model, level, api_key, hooks, emit, s.signal, stream_fn, clock=s.now)
    raise NotImplementedError("starter_adapter.py: fill the places marked FILL")


# A synchronous loop: make run a plain `def`, call hooks without await, iterate streams with
# `for`, and wait for tools with s.wait(s.start_tool(...)) or s.wait_any([...]).
if __name__ == "__main__":
    kit.serve(run, name=NAME, version=VERSION, tracks=TRACKS, hooks=HOOKS, lacks=LACKS)
