#!/usr/bin/env python3
"""The turnstile adapter of the example Python loop (agentloop.py), on the Python kit.

    go run ./cmd/turnstile conform --impl "python3 examples/python-loop/adapter.py" --profile semantic
    go run ./cmd/turnstile conform --impl "python3 examples/python-loop/adapter.py --sync" --profile semantic

--sync runs the synchronous twin of the loop (syncloop.py) in the kit's synchronous mode.
Agent scenarios (PROTOCOL.md §13.2) run the example's Agent (agent.py, or syncagent.py with
--sync) on the same loop.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_KIT = os.path.join(HERE, "..", "..", "kits", "python", "src")
sys.path[:0] = [HERE] + ([REPO_KIT] if os.path.isdir(REPO_KIT) else [])  # this repository's kit, else an installed one
import turnstile_kit as kit  # noqa: E402

SYNC = "--sync" in sys.argv[1:]
from agentstate import AgentError  # noqa: E402

if SYNC:
    from syncagent import SyncAgent as Agent
    from syncloop import Config, Context, Tool, run_agent_loop, run_agent_loop_continue
else:
    from agent import Agent
    from agentloop import Config, Context, Tool, run_agent_loop, run_agent_loop_continue

QUEUE_HOOKS = ("get_steering_messages", "get_follow_up_messages")  # an Agent answers these itself


def build(s: kit.Session):
    """The loop's context and config for the scenario; every hook and tool reaches the world."""
    setup = s.setup
    pool, hooks = tools_and_hooks(s)
    config = Config(model=setup["model"], clock=s.now, thinking_level=setup.get("thinkingLevel"),
                    api_key=setup.get("apiKey"), tool_execution=setup.get("toolExecution") or "parallel",
                    session_id=setup.get("sessionId"), identity=setup.get("identity"), **hooks)
    if SYNC:
        config.wait_any = s.wait_any
    context = Context(list(setup.get("messages") or []), [pool[n] for n in setup.get("activeTools") or [] if n in pool])
    return context, config


def tools_and_hooks(s: kit.Session):
    """The scenario's tools by name, and its installed hooks by Config field (awaitable for
    the asyncio loop)."""
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

    return pool, {name: f if SYNC else awaitable(f) for name, f in hooks.items()}


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


def stream_fn_for(s: kit.Session):
    """The loop's stream function: a provider request is a ``stream`` call, with its options."""
    def stream_fn(model, messages, thinking_level, api_key, _signal, options):
        return s.open_stream({"model": {k: model[k] for k in ("id", "api", "provider")}, "messages": messages,
                              "thinkingLevel": thinking_level, "apiKey": api_key}, options)
    return stream_fn if SYNC else awaitable(stream_fn)


async def run(s: kit.Session):
    """One loop scenario on the asyncio loop: the run's new messages."""
    context, config = build(s)

    async def emit(event):
        s.emit(event)

    stream_fn = stream_fn_for(s)

    if s.setup.get("entry") == "continue":
        return await run_agent_loop_continue(context, config, emit, s.signal, stream_fn)
    return await run_agent_loop(s.setup.get("prompts") or [], context, config, emit, s.signal, stream_fn)


def run_sync(s: kit.Session):
    """One loop scenario on the synchronous loop: the run's new messages."""
    context, config = build(s)
    stream_fn = stream_fn_for(s)

    if s.setup.get("entry") == "continue":
        return run_agent_loop_continue(context, config, s.emit, s.signal, stream_fn)
    return run_agent_loop(s.setup.get("prompts") or [], context, config, s.emit, s.signal, stream_fn)


class AgentOperations:
    """An Agent scenario (PROTOCOL.md §13.2): the Agent built from the setup, its listener the
    kit's, and each user operation applied to it, its outcome reported."""

    def __init__(self, s: kit.Session) -> None:
        setup, agent = s.setup, s.setup.get("agent") or {}
        self.s = s
        self.pool, hooks = tools_and_hooks(s)
        extra = {"wait_any": s.wait_any} if SYNC else {}
        self.agent = Agent(stream_fn=stream_fn_for(s), system_prompt=agent.get("systemPrompt"), model=setup.get("model"),
                           thinking_level=setup.get("thinkingLevel"), tools=self.tools(setup.get("activeTools")),
                           messages=setup.get("messages"), steering_mode=agent.get("steeringMode"),
                           follow_up_mode=agent.get("followUpMode"), tool_execution=setup.get("toolExecution"),
                           session_id=setup.get("sessionId"), identity=setup.get("identity"), clock=s.now,
                           hooks={k: f for k, f in hooks.items() if k not in QUEUE_HOOKS}, **extra)
        self.agent.subscribe(s.agent_event)

    def tools(self, names) -> list:
        """The setup's tools of these names, in this order."""
        return [self.pool[n] for n in names or [] if n in self.pool]

    def abort(self) -> None:
        """An answer's abort, and the stop: the Agent aborts its run."""
        self.agent.abort()

    def operate(self, op: dict) -> None:
        """Applies one operation; prompt, continue and waitForIdle report when they settle."""
        s, agent, kind = self.s, self.agent, op.get("op")
        if kind == "prompt":
            s.track(op, lambda: agent.prompt(op["messages"] if op.get("messages") is not None else op.get("text")))
        elif kind == "continue":
            s.track(op, agent.continue_)
        elif kind == "waitForIdle":
            if SYNC:
                agent.when_idle(lambda: s.outcome(op, "resolved"))
            else:
                s.track(op, agent.wait_for_idle())
        elif kind == "reset":
            try:
                agent.reset()
            except AgentError as err:
                return s.outcome(op, "refused", error=str(err))
            s.outcome(op, "accepted")
        elif kind == "state":
            s.outcome(op, "accepted", state=agent.state())
        elif kind in self.SIMPLE:
            self.SIMPLE[kind](self, op)
            s.outcome(op, "accepted")
        else:
            raise kit.DeliveryError(f"unknown Agent operation {kind!r}")

    SIMPLE = {  # the operations accepted at once
        "steer": lambda self, op: self.agent.steer(op["message"]),
        "followUp": lambda self, op: self.agent.follow_up(op["message"]),
        "abort": lambda self, op: self.agent.abort(),
        "setSteeringMode": lambda self, op: setattr(self.agent.steering, "mode", op["mode"]),
        "setFollowUpMode": lambda self, op: setattr(self.agent.follow_up_queue, "mode", op["mode"]),
        "clearQueues": lambda self, op: {"steering": self.agent.clear_steering_queue,
                                         "followUp": self.agent.clear_follow_up_queue}.get(op.get("queue"),
                                                                                            self.agent.clear_all_queues)(),
        "setTools": lambda self, op: setattr(self.agent, "tools", self.tools(op.get("tools"))),
    }


if __name__ == "__main__":
    kit.serve(run_sync if SYNC else run, name="python-example-loop" + ("-sync" if SYNC else ""), version="0.1.0",
              tracks="1.6.0", hooks=kit.ALL_HOOKS, agent=AgentOperations)
