#!/usr/bin/env python3
"""The turnstile adapter of the example Python loop (agentloop.py), on the Python kit.

    go run ./cmd/turnstile conform --impl "python3 examples/python-loop/adapter.py" --profile semantic
    go run ./cmd/turnstile conform --impl "python3 examples/python-loop/adapter.py --sync" --profile semantic

--sync runs the synchronous twin of the loop (syncloop.py) in the kit's synchronous mode.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_KIT = os.path.join(HERE, "..", "..", "kits", "python", "src")
sys.path[:0] = [HERE] + ([REPO_KIT] if os.path.isdir(REPO_KIT) else [])  # this repository's kit, else an installed one
import turnstile_kit as kit  # noqa: E402

SYNC = "--sync" in sys.argv[1:]
if SYNC:
    from syncloop import Config, Context, Tool, run_agent_loop, run_agent_loop_continue
else:
    from agentloop import Config, Context, Tool, run_agent_loop, run_agent_loop_continue


def build(s: kit.Session):
    """The loop's context and config for the scenario; every hook and tool reaches the world."""
    setup = s.setup
    pool = {}
    for ts in setup.get("tools") or []:
        pool[ts["name"]] = make_tool(s, ts)
    by_name = lambda names: [pool[n] for n in names or [] if n in pool]  # noqa: E731

    def wire(c: Context) -> dict:
        return {"messages": c.messages, "tools": [t.name for t in c.tools]}

    def context_of(raw):
        return Context(raw.get("messages") or [], by_name(raw.get("tools"))) if raw else None

    def turn(t: dict) -> dict:
        return {**t, "context": wire(t["context"])}

    def update(a: dict, *keys: str) -> dict:
        out = {k: a[k] for k in keys if a.get(k) is not None}
        if a.get("context"):
            out["context"] = context_of(a["context"])
        return out

    hooks = {}
    if s.installed("convertToLlm"):
        hooks["convert_to_llm"] = lambda msgs: s.hook("convertToLlm", {"messages": msgs}).get("messages") or []
    if s.installed("transformContext"):
        hooks["transform_context"] = lambda msgs, _sig: s.hook("transformContext", {"messages": msgs}).get("messages") or []
    if s.installed("getApiKey"):
        hooks["get_api_key"] = lambda provider: s.hook("getApiKey", {"provider": provider}).get("apiKey")
    if s.installed("prepareRequest"):
        hooks["prepare_request"] = lambda req, _sig: update(s.hook("prepareRequest", {**req, "context": wire(req["context"])}),
                                                           "model", "thinkingLevel")
    if s.installed("prepareNextTurn"):
        hooks["prepare_next_turn"] = lambda t: update(s.hook("prepareNextTurn", {"turn": turn(t)}), "model", "thinkingLevel", "messages")
    if s.installed("finishTurn"):
        hooks["finish_turn"] = lambda t, _sig: s.hook("finishTurn", {"turn": turn(t)}).get("action")
    if s.installed("getSteeringMessages"):
        hooks["get_steering_messages"] = lambda: s.hook("getSteeringMessages", {}).get("messages") or []
    if s.installed("getFollowUpMessages"):
        hooks["get_follow_up_messages"] = lambda: s.hook("getFollowUpMessages", {}).get("messages") or []
    if s.installed("beforeToolCall"):
        def before(c, _sig):
            a = s.hook("beforeToolCall", {**c, "context": wire(c["context"])})
            if isinstance(a.get("setArgs"), dict) and isinstance(c["args"], dict):
                c["args"].update(a["setArgs"])  # in place: execute gets them unvalidated
            return a
        hooks["before_tool_call"] = before
    if s.installed("afterToolCall"):
        hooks["after_tool_call"] = lambda c, _sig: s.hook("afterToolCall", {**c, "context": wire(c["context"])})

    config = Config(model=setup["model"], clock=s.now, thinking_level=setup.get("thinkingLevel"),
                    api_key=setup.get("apiKey"), tool_execution=setup.get("toolExecution") or "parallel",
                    **{name: f if SYNC else awaitable(f) for name, f in hooks.items()})
    if SYNC:
        config.wait_any = s.wait_any
    context = Context(list(setup.get("messages") or []), by_name(setup.get("activeTools")))
    return context, config


def awaitable(f):
    """The loop awaits its hooks; the kit's calls are synchronous (answered at once)."""
    async def hook(*args):
        return f(*args)
    return hook


def make_tool(s: kit.Session, ts: dict) -> Tool:
    """A tool whose execution happens in the world; prepareArguments comes from the setup."""
    async def execute(tool_call_id, args, _signal, on_update):
        return await s.run_tool(tool_call_id, ts["name"], args, on_update)

    def start(tool_call_id, args, _signal, on_update):  # the synchronous loop's tools
        return s.start_tool(tool_call_id, ts["name"], args, on_update)

    prepare = None
    if ts.get("prepareArguments") is not None:
        prepare = lambda args: {**(args or {}), **ts["prepareArguments"]}  # noqa: E731
    return Tool(ts["name"], ts.get("description", ""), ts.get("parameters") or {}, start if SYNC else execute,
                ts.get("executionMode"), prepare)


async def run(s: kit.Session):
    context, config = build(s)

    async def emit(event):
        s.emit(event)

    async def stream_fn(model, messages, thinking_level, api_key, _signal):
        return s.open_stream({"model": {k: model[k] for k in ("id", "api", "provider")}, "messages": messages,
                              "thinkingLevel": thinking_level, "apiKey": api_key})

    if s.setup.get("entry") == "continue":
        return await run_agent_loop_continue(context, config, emit, s.signal, stream_fn)
    return await run_agent_loop(s.setup.get("prompts") or [], context, config, emit, s.signal, stream_fn)


def run_sync(s: kit.Session):
    context, config = build(s)

    def stream_fn(model, messages, thinking_level, api_key, _signal):
        return s.open_stream({"model": {k: model[k] for k in ("id", "api", "provider")}, "messages": messages,
                              "thinkingLevel": thinking_level, "apiKey": api_key})

    if s.setup.get("entry") == "continue":
        return run_agent_loop_continue(context, config, s.emit, s.signal, stream_fn)
    return run_agent_loop(s.setup.get("prompts") or [], context, config, s.emit, s.signal, stream_fn)


if __name__ == "__main__":
    kit.serve(run_sync if SYNC else run, name="python-example-loop" + ("-sync" if SYNC else ""), version="0.1.0",
              tracks="1.6.0", hooks=kit.ALL_HOOKS)
