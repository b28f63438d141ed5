"""An agent loop in Python (asyncio), written from turnstile's contract of pi 1.6.0's loop.

Messages are plain dicts in pi's JSON shape ({"role": "user", "content": ..., "timestamp": ...}).
A run asks the model, runs the tools it asked for, feeds the results back and polls the user's
steering and follow-up queues, until nothing requires another request; every step is reported
as an event through ``emit``. The optional hooks of :class:`Config` let an application change
each request, each turn and each tool call.

This module knows nothing of turnstile: ``adapter.py`` plugs it into the conformance kit.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Optional

from jsonschema_lite import message as validation_message
from jsonschema_lite import validate
from transcript import (ABORTED, BLOCKED, LLM_ROLES, LoopError, Message, declare_tool_changes, declared_tools, request_options,
                        tool_changes, truncated_text)
from transcript import Outcome as _Outcome
from transcript import Prepared as _Prepared
from transcript import error_result as _error_result

Hook = Optional[Callable[..., Awaitable[Any]]]

@dataclass
class Tool:
    """An executable tool. ``execute(tool_call_id, args, signal, on_update)`` returns a result
    dict {content, details?, isError?, terminate?, …} or raises."""

    name: str
    description: str
    parameters: dict[str, Any]
    execute: Callable[..., Awaitable[dict[str, Any]]]
    execution_mode: Optional[str] = None  # "sequential" forces the whole batch sequential
    prepare_arguments: Optional[Callable[[Any], Any]] = None  # synchronous, before validation

    def declaration(self) -> dict[str, Any]:
        """What the model is told: name, description, parameters."""
        return json.loads(json.dumps({"name": self.name, "description": self.description, "parameters": self.parameters}))


@dataclass
class Context:
    """The transcript and the executable tools."""

    messages: list[Message]
    tools: list[Tool] = field(default_factory=list)


@dataclass
class Config:
    """A run's model and hooks. Every hook is an async callable, or None when not installed."""

    model: dict[str, Any]
    clock: Callable[[], int | float]  # milliseconds: timestamps and durationMs
    thinking_level: Optional[str] = None  # None or "off": no reasoning
    api_key: Optional[str] = None
    tool_execution: str = "parallel"
    session_id: Optional[str] = None  # given to the stream function (R-PROVIDER-OPTIONS)
    identity: Optional[dict[str, Any]] = None  # merged over pi's default identity, given to the stream function
    convert_to_llm: Hook = None  # (messages) -> messages; default keeps the LLM roles
    transform_context: Hook = None  # (messages, signal) -> messages, a view for one request
    get_api_key: Hook = None  # (provider) -> key
    prepare_request: Hook = None  # ({context, model, thinkingLevel}, signal) -> {context?, model?, thinkingLevel?}
    prepare_next_turn: Hook = None  # (turn) -> {context?, messages?, model?, thinkingLevel?}
    finish_turn: Hook = None  # (turn, signal) -> "continue" | "end" | None
    get_steering_messages: Hook = None  # () -> messages
    get_follow_up_messages: Hook = None  # () -> messages
    before_tool_call: Hook = None  # ({assistantMessage, toolCall, args, context}, signal) -> {block?, reason?, terminate?}
    after_tool_call: Hook = None  # ({…, result, isError, context}, signal) -> overrides


class _Run:
    def __init__(self, context: Context, config: Config, emit, signal, stream_fn) -> None:
        self.context = Context(list(context.messages), list(context.tools))
        self.cfg = config
        self.model = config.model
        self.level = config.thinking_level if config.thinking_level not in (None, "", "off") else None
        self.emit = emit
        self.signal = signal
        self.stream_fn = stream_fn
        self.new: list[Message] = []

    def level_text(self) -> str:
        return self.level or "off"

    def wire_context(self) -> Context:
        return Context(list(self.context.messages), list(self.context.tools))

    async def add(self, messages: list[Message]) -> None:
        for m in messages:
            await self.emit({"type": "message_start", "message": m})
            await self.emit({"type": "message_end", "message": m})
            self.context.messages.append(m)
            self.new.append(m)

    async def poll(self, hook: Hook) -> list[Message]:
        return list(await hook() or []) if hook else []

    def apply(self, update: Optional[dict[str, Any]]) -> None:
        if not update:
            return
        if update.get("context") is not None:
            self.context = update["context"]
        if update.get("model") is not None:
            self.model = update["model"]
        level = update.get("thinkingLevel")
        if level is not None:
            self.level = None if level in ("", "off") else level

    def turn(self, message: Message, results: list[Message]) -> dict[str, Any]:
        return {"message": message, "toolResults": results, "context": self.wire_context(), "newMessages": list(self.new)}

    # the loop proper
    async def loop(self) -> list[Message]:
        cfg = self.cfg
        pending = await self.poll(cfg.get_steering_messages)  # poll A
        last_turn = None
        explicit = False
        while True:
            more_tools = True
            while more_tools or pending:
                prepared: list[Message] = []
                if last_turn is not None:
                    if cfg.prepare_next_turn:
                        update = await cfg.prepare_next_turn(last_turn)
                        self.apply(update)
                        prepared = list((update or {}).get("messages") or [])
                    if not pending:
                        pending = await self.poll(cfg.get_steering_messages)  # poll B
                    await self.emit({"type": "turn_start"})
                await self.add(declare_tool_changes(self.context.messages, self.context.tools, prepared + pending, cfg.clock()))
                pending = []
                if cfg.prepare_request:
                    update = await cfg.prepare_request({"context": self.wire_context(), "model": self.model,
                                                        "thinkingLevel": self.level_text()}, self.signal)
                    self.apply({k: v for k, v in (update or {}).items() if k != "messages"})
                message = await self.stream()
                self.new.append(message)
                if message.get("stopReason") in ("error", "aborted"):
                    if cfg.finish_turn:
                        await cfg.finish_turn(self.turn(message, []), self.signal)  # its answer is ignored
                    await self.emit({"type": "turn_end", "message": message, "toolResults": []})
                    await self.emit({"type": "agent_end", "messages": list(self.new)})
                    return self.new
                calls = [b for b in message.get("content") or [] if isinstance(b, dict) and b.get("type") == "toolCall"]
                results: list[Message] = []
                more_tools = False
                if calls:
                    if message.get("stopReason") == "length":
                        results, terminate = await self.truncated(calls), False
                    else:
                        results, terminate = await self.execute(message, calls)
                    more_tools = not terminate
                    for r in results:
                        self.context.messages.append(r)
                        self.new.append(r)
                turn = self.turn(message, results)
                action = await cfg.finish_turn(turn, self.signal) if cfg.finish_turn else None
                await self.emit({"type": "turn_end", "message": message, "toolResults": results})
                if action == "end":
                    await self.emit({"type": "agent_end", "messages": list(self.new)})
                    return self.new
                last_turn = turn
                explicit = action == "continue"
                pending = await self.poll(cfg.get_steering_messages)  # poll C
                if more_tools or pending:
                    explicit = False
            follow_up = await self.poll(cfg.get_follow_up_messages)
            if follow_up:
                pending = follow_up
                continue
            if explicit:
                explicit = False
                continue
            break
        await self.emit({"type": "agent_end", "messages": list(self.new)})
        return self.new

    # one provider request
    async def stream(self) -> Message:
        cfg = self.cfg
        messages = list(self.context.messages)
        if cfg.transform_context:
            messages = list(await cfg.transform_context(messages, self.signal))
        if cfg.convert_to_llm:
            llm = list(await cfg.convert_to_llm(messages))
        else:
            llm = [m for m in messages if m.get("role") in LLM_ROLES]
        key = (await cfg.get_api_key(self.model.get("provider"))) if cfg.get_api_key else None
        key = key or cfg.api_key or ""
        options = request_options(cfg.session_id, cfg.identity)
        stream = await self.stream_fn(self.model, llm, self.level_text(), key, self.signal, options)
        started = False
        async for event in stream:
            kind = event.get("type")
            if kind == "start":
                partial = event.get("partial") or {}
                self.context.messages.append(partial)
                started = True
                await self.emit({"type": "message_start", "message": dict(partial)})
            elif kind in ("done", "error"):
                break
            elif started:
                partial = event.get("partial") or {}
                self.context.messages[-1] = partial
                await self.emit({"type": "message_update", "assistantMessageEvent": event, "message": dict(partial)})
        final = dict(stream.result() or {})
        final["thinkingLevel"] = self.level_text()
        if started:
            self.context.messages[-1] = final
        else:
            self.context.messages.append(final)
            await self.emit({"type": "message_start", "message": dict(final)})
        await self.emit({"type": "message_end", "message": final})
        return final

    # tool calls
    async def truncated(self, calls: list[dict[str, Any]]) -> list[Message]:
        results = []
        for call in calls:
            await self.emit_start(call)
            outcome = _Outcome(call, _error_result(truncated_text(call.get("name"))), True)
            await self.emit_end(outcome)
            results.append(await self.emit_result(outcome))
        return results

    async def execute(self, message: Message, calls: list[dict[str, Any]]) -> tuple[list[Message], bool]:
        by_name = {t.name: t for t in self.context.tools}
        sequential = self.cfg.tool_execution == "sequential" or any(
            by_name.get(c.get("name")) is not None and by_name[c.get("name")].execution_mode == "sequential" for c in calls)
        outcomes: list[Optional[_Outcome]] = [None] * len(calls)
        results: list[Message] = []
        if sequential:
            for i, call in enumerate(calls):
                await self.emit_start(call)
                p = await self.prepare(message, call)
                outcomes[i] = p.immediate or await self.finalize(message, call, p, await self.run_tool(call, p))
                await self.emit_end(outcomes[i])
                results.append(await self.emit_result(outcomes[i]))
        else:
            ready = []
            for i, call in enumerate(calls):
                await self.emit_start(call)
                p = await self.prepare(message, call)
                if p.immediate:
                    outcomes[i] = p.immediate
                    await self.emit_end(p.immediate)
                else:
                    ready.append((i, call, p))

            async def one(i: int, call: dict[str, Any], p: _Prepared) -> None:
                if self.signal.aborted:
                    outcomes[i] = _Outcome(call, _error_result(ABORTED), True)
                else:
                    outcomes[i] = await self.finalize(message, call, p, await self.run_tool(call, p))
                await self.emit_end(outcomes[i])

            await asyncio.gather(*(one(i, c, p) for i, c, p in ready))
            for o in outcomes:
                results.append(await self.emit_result(o))
        terminate = bool(outcomes) and all(o.result.get("terminate") is True for o in outcomes)
        return results, terminate

    async def prepare(self, message: Message, call: dict[str, Any]) -> _Prepared:
        def fail(text: str, terminate: bool = False) -> _Prepared:
            result = _error_result(text)
            if terminate:
                result["terminate"] = True
            return _Prepared(immediate=_Outcome(call, result, True))

        if self.signal.aborted:
            return fail(ABORTED)
        tool = next((t for t in self.context.tools if t.name == call.get("name")), None)
        if tool is None:
            return fail(f"Tool {call.get('name')} not found")
        try:
            raw = call.get("arguments")
            if tool.prepare_arguments:
                raw = tool.prepare_arguments(raw)
            if call.get("argumentsError"):
                return fail(f'Invalid arguments for tool "{call.get("name")}": {call["argumentsError"]}')
            raw = raw if raw is not None else {}
            args, errors = validate(tool.parameters, raw)
            if errors:
                return fail(validation_message(tool.name, errors, raw))
        except Exception as err:  # a throwing prepareArguments
            return fail(str(err))
        if self.cfg.before_tool_call:
            try:
                answer = await self.cfg.before_tool_call({"assistantMessage": message, "toolCall": call, "args": args,
                                                          "context": self.wire_context()}, self.signal)
            except Exception as err:
                return fail(str(err))
            if self.signal.aborted:
                return fail(ABORTED)
            if answer and answer.get("block"):
                return fail(answer.get("reason") or BLOCKED, answer.get("terminate") is True)
        return _Prepared(tool=tool, args=args)

    async def run_tool(self, call: dict[str, Any], p: _Prepared) -> _Outcome:
        accepting = True

        def on_update(partial: Any) -> None:
            if accepting:
                self.emit_now({"type": "tool_execution_update", "toolCallId": call.get("id"), "toolName": call.get("name"),
                               "args": call.get("arguments"), "partialResult": partial})

        started = self.cfg.clock()
        try:
            result = await p.tool.execute(call.get("id"), p.args, self.signal, on_update)
            result = result if isinstance(result, dict) else {"content": None}
            is_error = result.get("isError") is True
        except Exception as err:
            result, is_error = _error_result(str(err)), True
        accepting = False
        return _Outcome(call, result, is_error, round(self.cfg.clock() - started))

    async def finalize(self, message: Message, call: dict[str, Any], p: _Prepared, ex: _Outcome) -> _Outcome:
        if not self.cfg.after_tool_call:
            return ex
        result, is_error = dict(ex.result), ex.is_error
        try:
            over = await self.cfg.after_tool_call({"assistantMessage": message, "toolCall": call, "args": p.args,
                                                   "result": ex.result, "isError": ex.is_error,
                                                   "context": self.wire_context()}, self.signal)
        except Exception as err:
            return _Outcome(call, _error_result(str(err)), True, ex.duration_ms)
        if over:
            structured = over.get("structuredContent")
            if structured is None and over.get("content") is None:
                structured = result.get("structuredContent")
            for key in ("content", "details", "usage", "terminate"):
                if over.get(key) is not None:
                    result[key] = over[key]
            result.pop("structuredContent", None)
            if structured is not None:
                result["structuredContent"] = structured
            if over.get("isError") is not None:
                is_error = over["isError"] is True
        return _Outcome(call, result, is_error, ex.duration_ms)

    async def emit_start(self, call: dict[str, Any]) -> None:
        await self.emit({"type": "tool_execution_start", "toolCallId": call.get("id"), "toolName": call.get("name"),
                         "args": call.get("arguments")})

    async def emit_end(self, o: _Outcome) -> None:
        event = {"type": "tool_execution_end", "toolCallId": o.call.get("id"), "toolName": o.call.get("name"),
                 "result": o.result, "isError": o.is_error}
        if o.duration_ms is not None:
            event["durationMs"] = o.duration_ms
        await self.emit(event)

    async def emit_result(self, o: _Outcome) -> Message:
        m: Message = {"role": "toolResult", "toolCallId": o.call.get("id"), "toolName": o.call.get("name"),
                      "content": o.result.get("content") if o.result.get("content") is not None else []}
        for key in ("details", "usage"):
            if o.result.get(key) is not None:
                m[key] = o.result[key]
        m["isError"] = o.is_error
        if o.duration_ms is not None:
            m["durationMs"] = o.duration_ms
        m["timestamp"] = self.cfg.clock()
        await self.emit({"type": "message_start", "message": m})
        await self.emit({"type": "message_end", "message": m})
        return m

    def emit_now(self, event: dict[str, Any]) -> None:
        """Emits from a synchronous callback (a tool's on_update)."""
        out = self.emit(event)
        if asyncio.iscoroutine(out):
            asyncio.ensure_future(out)


async def run_agent_loop(prompts: list[Message], context: Context, config: Config, emit, signal, stream_fn) -> list[Message]:
    """Runs the loop from new prompts; returns the run's new messages.

    ``emit(event)`` is awaited for every event; ``signal.aborted`` tells an abort;
    ``stream_fn(model, messages, thinking_level, api_key, signal, options)`` opens a response: an async
    iterable of pi-ai stream events with ``result()``, the final assistant message.
    """
    r = _Run(context, config, emit, signal, stream_fn)
    batch = declare_tool_changes(r.context.messages, r.context.tools, list(prompts), config.clock())
    await emit({"type": "agent_start"})
    await emit({"type": "turn_start"})
    await r.add(batch)
    return await r.loop()


async def run_agent_loop_continue(context: Context, config: Config, emit, signal, stream_fn) -> list[Message]:
    """Continues from the transcript as it is (its last message must not be the assistant's)."""
    if not context.messages:
        raise LoopError("Cannot continue: no messages in context")
    if context.messages[-1].get("role") == "assistant":
        raise LoopError("Cannot continue from message role: assistant")
    r = _Run(context, config, emit, signal, stream_fn)
    await emit({"type": "agent_start"})
    await emit({"type": "turn_start"})
    return await r.loop()
