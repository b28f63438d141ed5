"""Protocol version 2 (PROTOCOL.md §13): Agent scenarios (operations, outcomes, barriers) and
stream options, for asyncio and synchronous Agents."""

import contextlib
import io
import types
import unittest

from tests.harness import HELLO, HELLO2, answer, brief, deliver, serve, start, stop
from turnstile_kit import DeliveryError

DONE = {"type": "done", "reason": "stop", "message": {}}
BUSY = "busy"


def agent_start(session=1, **agent):
    """The start of an Agent scenario with these agent settings."""
    return start(session, entry="agent", hooks=[], agent={"steeringMode": "all", "followUpMode": "all", **agent})


def op(now, op_id, **data):
    """An agent delivery: one user operation."""
    return deliver("agent", now, op_id, data)


def loop_never_runs(_s):
    raise AssertionError("run is not called for an Agent scenario")


async def async_loop_never_runs(_s):
    raise AssertionError("run is not called for an Agent scenario")


class AsyncToyAgent:
    """A toy asyncio Agent: prompt runs until a stream delivers; the listener is the kit's."""

    def __init__(self, s):
        self.s = s
        self.running = None
        self.idle = None  # resolved when the run is over, before the prompt's task completes
        self.aborted = 0

    def abort(self):
        self.aborted += 1

    async def listen(self, event):
        held = self.s.agent_event(event)
        if held is not None:
            await held

    async def run_once(self):
        try:
            await self.listen({"type": "agent_start"})
            stream = self.s.open_stream({"messages": []})
            async for ev in stream:
                await self.listen({"type": "message_update", "text": ev["type"]})
            await self.listen({"type": "agent_end"})
        finally:
            self.running = None
            self.idle.set_result(None)

    def prompt(self):
        if self.running is not None:
            raise RuntimeError(BUSY)
        self.idle = self.s.vloop.create_future()
        self.running = self.s.vloop.create_task(self.run_once())
        return self.running

    def operate(self, o):
        if o["op"] == "prompt":
            self.s.track(o, self.prompt)
        elif o["op"] == "waitForIdle":
            if self.running is not None:
                self.s.track(o, self.idle)
            else:
                self.s.outcome(o, "resolved")
        elif o["op"] == "state":
            self.s.outcome(o, "accepted", state={"isStreaming": self.running is not None, "aborted": self.aborted})
        else:
            raise DeliveryError(f"unknown operation {o['op']}")


class SyncToyAgent:
    """The same toy Agent, synchronous: prompt returns when the run is over; the operations
    that come meanwhile are applied inside it (the kit parks there)."""

    def __init__(self, s):
        self.s = s
        self.running = False
        self.waiters = []
        self.aborted = 0

    def abort(self):
        self.aborted += 1

    def prompt(self):
        if self.running:
            raise RuntimeError(BUSY)
        self.running = True
        try:
            self.s.agent_event({"type": "agent_start"})
            for ev in self.s.open_stream({"messages": []}):
                self.s.agent_event({"type": "message_update", "text": ev["type"]})
            self.s.agent_event({"type": "agent_end"})
        finally:
            self.running = False
            waiters, self.waiters = self.waiters, []
            for w in waiters:
                self.s.outcome(w, "resolved")

    def operate(self, o):
        if o["op"] == "prompt":
            self.s.track(o, self.prompt)
        elif o["op"] == "waitForIdle":
            if self.running:
                self.waiters.append(o)
            else:
                self.s.outcome(o, "resolved")
        elif o["op"] == "state":
            self.s.outcome(o, "accepted", state={"isStreaming": self.running, "aborted": self.aborted})
        else:
            raise DeliveryError(f"unknown operation {o['op']}")


BARRIER_SCRIPT = [
    HELLO2,
    agent_start(barriers=[{"id": "b1", "event": "agent_end"}]),
    op(0, "u1", op="prompt", text="hi"),
    answer(1, {"stream": "1"}),
    op(1, "u2", op="prompt", text="again"),
    op(2, "u3", op="waitForIdle"),
    op(3, "u4", op="release", barrier="b1"),
    deliver("streamEvent", 4, "1", DONE),
    op(5, "u5", op="state"),
    op(6, "u6", op="release", barrier="b1"),
    op(7, "u7", op="release", barrier="b1"),
    op(8, "final", op="state"),
    stop(),
]

BARRIER_EXPECTED = [
    "hello",
    "idle",
    "ev agent_start",
    "call 1 stream",
    "idle",
    "outcome u2 prompt refused busy",  # refused in its own delivery
    "idle",
    "idle",  # waitForIdle: nothing until the run is over
    "outcome u4 release refused barrier b1 is not held",  # not reached yet
    "idle",
    "ev message_update done",
    "ev agent_end",  # held here by b1
    "idle",
    "outcome u5 state accepted",
    "idle",
    "outcome u6 release accepted",
    "outcome u3 waitForIdle resolved",  # the run is over: its waiters, then its prompt
    "outcome u1 prompt resolved",
    "idle",
    "outcome u7 release refused barrier b1 is not held",  # released already
    "idle",
    "outcome final state accepted",
    "idle",
    "stopped",
]


class AgentScenarioTest(unittest.TestCase):
    def test_operations_outcomes_and_a_barrier_held_until_its_release(self):
        for run, toy in ((async_loop_never_runs, AsyncToyAgent), (loop_never_runs, SyncToyAgent)):
            with self.subTest(toy.__name__):
                status, out = serve(run, *BARRIER_SCRIPT, agent=toy)
                self.assertEqual(status, 0)
                self.assertEqual([brief(m) for m in out], BARRIER_EXPECTED)
                self.assertEqual(out[0]["capabilities"]["lacks"], ["toolResolvesNothing", "runToolCall", "defaultModel", "waitingHooks"])
                self.assertEqual(out[13]["notification"]["data"],
                                 {"id": "u5", "op": "state", "outcome": "accepted", "state": {"isStreaming": True, "aborted": 0}})
                self.assertEqual(out[21]["notification"]["data"],
                                 {"id": "final", "op": "state", "outcome": "accepted", "state": {"isStreaming": False, "aborted": 0}})

    def test_an_answers_abort_calls_the_handlers_abort_and_stop_lets_held_barriers_go(self):
        for mode in ("asyncio", "sync"):
            with self.subTest(mode):
                seen = {"aborts": 0, "wound": False}

                def agent(s):
                    def body():
                        s.hook("transformContext", {})
                        held = s.agent_event({"type": "agent_end"})
                        return held

                    async def run_async():
                        held = body()
                        if held is not None:
                            await held
                        seen["wound"] = True

                    def run_sync():
                        body()
                        seen["wound"] = True

                    def abort():
                        seen["aborts"] += 1

                    def operate(o):
                        s.track(o, run_async() if mode == "asyncio" else run_sync)

                    return types.SimpleNamespace(operate=operate, abort=abort)

                status, out = serve(async_loop_never_runs if mode == "asyncio" else loop_never_runs, HELLO2,
                                    agent_start(barriers=[{"id": "b", "event": "agent_end", "nth": 1}]),
                                    op(1, "u1", op="prompt", text="x"), answer(1, {}) | {"abort": True}, stop(), agent=agent)
                self.assertEqual(status, 0)
                self.assertEqual([brief(m) for m in out], ["hello", "idle", "call 1 hook:transformContext", "ev agent_end", "idle", "stopped"])
                self.assertEqual(seen, {"aborts": 2, "wound": True})  # the answer's abort, then the stop's

    def test_barriers_count_occurrences_and_two_on_one_event_both_hold_it(self):
        for mode in ("asyncio", "sync"):
            with self.subTest(mode):
                order = []

                def agent(s):
                    async def run_async():
                        for i in (1, 2, 3):
                            held = s.agent_event({"type": "turn_end", "text": str(i)})
                            if held is not None:
                                await held
                            order.append(i)

                    def run_sync():
                        for i in (1, 2, 3):
                            s.agent_event({"type": "turn_end", "text": str(i)})
                            order.append(i)

                    return types.SimpleNamespace(operate=lambda o: s.track(o, run_async() if mode == "asyncio" else run_sync))

                barriers = [{"id": "two", "event": "turn_end", "nth": 2}, {"id": "also-two", "event": "turn_end", "nth": 2}]
                status, out = serve(async_loop_never_runs if mode == "asyncio" else loop_never_runs, HELLO2,
                                    agent_start(barriers=barriers), op(1, "u1", op="prompt"),
                                    op(2, "r1", op="release", barrier="two"), op(3, "r2", op="release", barrier="also-two"),
                                    stop(), agent=agent)
                self.assertEqual(status, 0)
                self.assertEqual([brief(m) for m in out], [
                    "hello", "idle", "ev turn_end 1", "ev turn_end 2", "idle", "outcome r1 release accepted", "idle",
                    "outcome r2 release accepted", "ev turn_end 3", "outcome u1 prompt resolved", "idle", "stopped"])
                self.assertEqual(order, [1, 2, 3])

    def test_an_operation_the_agent_refuses_is_reported_with_its_text(self):
        def agent(s):
            def fail():
                raise ValueError("No messages to continue from")
            return types.SimpleNamespace(operate=lambda o: s.track(o, fail))

        status, out = serve(loop_never_runs, HELLO2, agent_start(), op(1, "u1", op="continue"), stop(), agent=agent)
        self.assertEqual(status, 0)
        self.assertEqual(out[2]["notification"]["data"],
                         {"id": "u1", "op": "continue", "outcome": "refused", "error": "No messages to continue from"})


class AgentErrorsTest(unittest.TestCase):
    """What the adapter author did wrong, said so."""

    def test_an_agent_scenario_without_an_agent_function(self):
        status, out = serve(loop_never_runs, HELLO2, agent_start())
        self.assertEqual(status, 1)
        self.assertEqual(out[0]["capabilities"]["lacks"], ["agent", "toolResolvesNothing", "runToolCall", "defaultModel", "waitingHooks"])
        self.assertEqual(out[-1], {"type": "error", "session": 1, "message":
                                   'session 1 is an Agent scenario (entry "agent"), but the adapter gave serve() no agent function'})

    def test_an_agent_function_returning_no_handler(self):
        status, out = serve(loop_never_runs, HELLO2, agent_start(), agent=lambda s: None)
        self.assertEqual(status, 1)
        self.assertEqual(out[-1]["message"], "agent(session) must return an object with operate(op) (and optionally abort()); got NoneType")

    def test_an_unknown_operation_and_an_agent_delivery_outside_an_agent_scenario(self):
        status, out = serve(async_loop_never_runs, HELLO2, agent_start(), op(1, "u1", op="dance"), stop(), agent=AsyncToyAgent)
        self.assertEqual([brief(m) for m in out], ["hello", "idle", "error unknown operation dance", "stopped"])

        async def forever(s):
            await s.vloop.create_future()

        status, out = serve(forever, HELLO2, start(), op(1, "u1", op="state"), stop(), agent=AsyncToyAgent)
        self.assertEqual([brief(m) for m in out],
                         ["hello", "idle", 'error an agent delivery ("state"), but session 1 is not an Agent scenario', "stopped"])

    def test_an_operate_that_raises_ends_the_adapter_naming_the_operation(self):
        def agent(_s):
            return types.SimpleNamespace(operate=lambda o: {}["missing"])

        with contextlib.redirect_stderr(io.StringIO()) as err:
            status, out = serve(loop_never_runs, HELLO2, agent_start(), op(1, "u1", op="steer"), stop(), agent=agent)
        self.assertEqual(status, 1)
        self.assertTrue(out[-1]["message"].startswith(
            "the agent handler's operate raised KeyError: 'missing' (operation u1, \"steer\")"), out[-1]["message"])
        self.assertIn("Traceback", err.getvalue())

    def test_version_one_has_no_agent_deliveries(self):
        status, out = serve(lambda s: [], HELLO, start(), op(1, "u1", op="state"), stop(), agent=SyncToyAgent)
        self.assertEqual(status, 0)
        self.assertNotIn("lacks", out[0]["capabilities"])
        self.assertIn('error unknown delivery kind "agent"', [brief(m) for m in out])


class StreamOptionsTest(unittest.TestCase):
    """§13.4: the stream function's options go into the call's data only when the setup asks."""

    @staticmethod
    def loop(s):
        s.open_stream({"messages": []}, {"sessionId": "s-1", "identity": {"attribution": None}, "dropped": None})
        return []

    def test_in_the_calls_data_only_when_the_setup_says_stream_options(self):
        status, out = serve(self.loop, HELLO2, start(streamOptions=True), answer(1, {"stream": "1"}), stop())
        self.assertEqual(status, 0)
        self.assertEqual(out[1]["call"]["data"], {"messages": [], "options": {"sessionId": "s-1", "identity": {"attribution": None}}})
        status, out = serve(self.loop, HELLO2, start(), answer(1, {"stream": "1"}), stop())
        self.assertEqual(out[1]["call"]["data"], {"messages": []})
        status, out = serve(self.loop, HELLO, start(streamOptions=True), answer(1, {"stream": "1"}), stop())
        self.assertEqual(out[1]["call"]["data"], {"messages": []}, "version 1 has no stream options")

    def test_a_stream_without_options_when_the_setup_asks_for_them_is_the_adapters_mistake(self):
        def loop(s):
            s.open_stream({"messages": []})
            return []

        status, out = serve(loop, HELLO2, start(streamOptions=True), stop())
        self.assertEqual(status, 1)
        self.assertEqual([brief(m) for m in out][:1], ["hello"])
        self.assertRegex(out[-1]["message"], r"^the setup asks for stream options \(streamOptions: true.*open_stream was given none")

    def test_the_hello_claims_stream_options_unless_the_adapter_lacks_them(self):
        out = io.BytesIO()
        from tests.harness import lines
        from turnstile_kit import Kit
        kit = Kit(self.loop, name="t", version="0", tracks="1.6.0", hooks=[], capabilities={"lacks": ["streamOptions"]},
                  reader=io.BytesIO(lines(HELLO2)), writer=out)
        self.assertEqual(kit.serve(), 0)
        self.assertIn(b'"lacks":["streamOptions","agent","toolResolvesNothing","runToolCall","defaultModel","waitingHooks"]', out.getvalue())


if __name__ == "__main__":
    unittest.main()
