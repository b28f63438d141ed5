"""Hook answers that take time (PROTOCOL.md §13.6, feature waitingHooks): a ``wait`` returned at
its hookReturn delivery, an ``untilAbort`` once the signal the hook was given fires, both the
first of the two; for synchronous and asyncio loops, and Agent barriers held until the abort."""

import types
import unittest

from tests.harness import HELLO, HELLO2, answer, brief, deliver, serve, start, stop
from turnstile_kit import SessionStopped, now


def stepped(*steps):
    """Each step (hook name, data, whether the loop passes the hook the run's signal) called in
    turn, an event with the virtual time emitted once it returned; the run's messages are the
    answers. As a synchronous run (session.hook) and an asyncio run (session.hook_async)."""

    def sync_run(s):
        results = []
        for name, data, use_signal in steps:
            results.append(s.hook(name, data, s.signal if use_signal else None))
            s.emit({"type": "returned", "text": f"{name}@{now()}"})
        return results

    async def async_run(s):
        results = []
        for name, data, use_signal in steps:
            results.append(await s.hook_async(name, data, s.signal if use_signal else None))
            s.emit({"type": "returned", "text": f"{name}@{now()}"})
        return results

    return (("sync", sync_run), ("asyncio", async_run))


class WaitingHooksTest(unittest.TestCase):
    def test_the_hello_claims_waiting_hooks_only_when_the_adapter_serves_them(self):
        status, out = serve(lambda s: [], HELLO2)
        self.assertEqual(out[0]["capabilities"]["lacks"], ["agent", "toolResolvesNothing", "runToolCall", "defaultModel", "waitingHooks"])
        status, out = serve(lambda s: [], HELLO2, waiting_hooks=True)
        self.assertEqual(out[0]["capabilities"]["lacks"], ["agent", "toolResolvesNothing", "runToolCall", "defaultModel"])

    def test_a_delayed_answer_returns_at_its_hook_return(self):
        runs = stepped(("finishTurn", {}, True))
        for mode, run in runs:
            with self.subTest(mode):
                status, out = serve(run, HELLO2, start(hooks=["finishTurn"]), answer(1, {"action": "end"}) | {"wait": "h1"},
                                    deliver("hookReturn", 7, "h1"), stop(), waiting_hooks=True)
                self.assertEqual(status, 0)
                self.assertEqual([brief(m) for m in out],
                                 ["hello", "call 1 hook:finishTurn", "idle", "ev returned finishTurn@7",
                                  'end {"messages": [{"action": "end"}]}', "idle", "stopped"])

    def test_an_answer_held_until_the_abort_returns_when_the_hooks_signal_fires(self):
        runs = stepped(("beforeToolCall", {}, True), ("beforeToolCall", {}, True))
        for mode, run in runs:
            with self.subTest(mode):
                status, out = serve(run, HELLO2, start(hooks=["beforeToolCall"]), answer(1, {"block": True}) | {"untilAbort": True},
                                    deliver("abort", 3),
                                    answer(2, {}) | {"untilAbort": True, "wait": "h1"},  # the signal has fired: at once
                                    deliver("hookReturn", 9, "h1"),  # comes all the same, and changes nothing
                                    stop(), waiting_hooks=True)
                self.assertEqual(status, 0)
                self.assertEqual([brief(m) for m in out],
                                 ["hello", "call 1 hook:beforeToolCall", "idle", "ev returned beforeToolCall@3",
                                  "call 2 hook:beforeToolCall", "ev returned beforeToolCall@3",
                                  'end {"messages": [{"block": true}, {}]}', "idle", "idle", "stopped"])

    def test_a_hook_given_no_signal_is_not_returned_by_the_abort(self):
        runs = stepped(("getApiKey", {"provider": "p"}, False))
        for mode, run in runs:
            with self.subTest(mode):
                status, out = serve(run, HELLO2, start(hooks=["getApiKey"]), answer(1, {"apiKey": "k"}) | {"untilAbort": True, "wait": "h1"},
                                    deliver("abort", 3), deliver("hookReturn", 30, "h1"), stop(), waiting_hooks=True)
                self.assertEqual(status, 0)
                self.assertEqual([brief(m) for m in out],
                                 ["hello", "call 1 hook:getApiKey", "idle", "idle", "ev returned getApiKey@30",
                                  'end {"messages": [{"apiKey": "k"}]}', "idle", "stopped"])

    def test_a_signal_the_loop_only_sets_is_read_after_each_delivery(self):
        def run(s):
            mine = types.SimpleNamespace(aborted=False)  # a loop's own signal: no listeners
            s.signal.add_listener(lambda: setattr(mine, "aborted", True))
            s.hook("finishTurn", {}, mine)
            s.emit({"type": "returned", "text": f"finishTurn@{now()}"})
            return []

        status, out = serve(run, HELLO2, start(hooks=["finishTurn"]), answer(1, {}) | {"untilAbort": True},
                            deliver("abort", 4), stop(), waiting_hooks=True)
        self.assertIn("ev returned finishTurn@4", [brief(m) for m in out])

    def test_a_thrown_answer_that_waits_is_raised_when_it_returns(self):
        def run(s):
            try:
                s.hook("finishTurn", {}, s.signal)
            except Exception as err:
                s.emit({"type": "raised", "text": f"{type(err).__name__}:{err}@{now()}"})
            return []

        status, out = serve(run, HELLO2, start(hooks=["finishTurn"]), answer(1, error="boom") | {"wait": "h1"},
                            deliver("hookReturn", 4, "h1"), stop(), waiting_hooks=True)
        self.assertIn("ev raised CallError:boom@4", [brief(m) for m in out])

    def test_the_stop_ends_a_waiting_hook(self):
        seen = []

        def run(s):
            try:
                s.hook("finishTurn", {}, None)  # given the run's signal, the stop's abort would return it
            except SessionStopped:
                seen.append("stopped")
                raise

        async def arun(s):
            try:
                await s.hook_async("finishTurn", {}, None)
            except SessionStopped:
                seen.append("stopped")
                raise

        for r in (run, arun):
            status, out = serve(r, HELLO2, start(hooks=["finishTurn"]), answer(1, {}) | {"untilAbort": True}, stop(), waiting_hooks=True)
            self.assertEqual(status, 0)
            self.assertEqual([brief(m) for m in out], ["hello", "call 1 hook:finishTurn", "idle", "stopped"])
        self.assertEqual(seen, ["stopped", "stopped"])

    def test_an_unknown_hook_return_and_a_waiting_answer_to_a_plain_call_are_errors(self):
        status, out = serve(lambda s: s.hook("finishTurn", {}), HELLO2, start(hooks=["finishTurn"]), answer(1, {}),
                            deliver("hookReturn", 1, "h9"), stop(), waiting_hooks=True)
        self.assertIn('error hookReturn for unknown wait "h9"', [brief(m) for m in out])

        async def arun(s):
            return s.hook("finishTurn", {})  # not hook_async

        status, out = serve(arun, HELLO2, start(hooks=["finishTurn"]), answer(1, {}) | {"wait": "h1"}, waiting_hooks=True)
        self.assertEqual(status, 1)
        self.assertRegex(out[-1]["message"], r"^the answer to finishTurn waits \(PROTOCOL.md §13.6\), but the adapter called it with session.hook under asyncio")

    def test_version_one_answers_never_wait(self):
        runs = stepped(("finishTurn", {}, True))
        for mode, run in runs:
            with self.subTest(mode):
                status, out = serve(run, HELLO, start(hooks=["finishTurn"]), answer(1, {"action": "end"}) | {"wait": "h1"},
                                    stop(), waiting_hooks=True)
                self.assertEqual(status, 0)
                self.assertEqual([brief(m) for m in out][:3], ["hello", "call 1 hook:finishTurn", "ev returned finishTurn@0"])


class AgentBarrierUntilAbortTest(unittest.TestCase):
    def test_a_barrier_held_until_the_abort_lets_its_listener_go_when_the_signal_fires(self):
        for mode in ("asyncio", "sync"):
            with self.subTest(mode):
                order = []

                def agent(s):
                    async def run_async():
                        for i in (1, 2):
                            held = s.agent_event({"type": "turn_end", "text": str(i)}, s.signal)
                            if held is not None:
                                await held
                            order.append(f"{i}@{now()}")

                    def run_sync():
                        for i in (1, 2):
                            s.agent_event({"type": "turn_end", "text": str(i)}, s.signal)
                            order.append(f"{i}@{now()}")

                    def operate(o):
                        s.track(o, run_async() if mode == "asyncio" else run_sync)

                    return types.SimpleNamespace(operate=operate)

                def never(_s):
                    raise AssertionError("run is not called for an Agent scenario")

                async def anever(_s):
                    raise AssertionError("run is not called for an Agent scenario")

                barriers = [{"id": "b1", "event": "turn_end", "nth": 1, "untilAbort": True},
                            {"id": "b2", "event": "turn_end", "nth": 2, "untilAbort": True}]
                status, out = serve(anever if mode == "asyncio" else never, HELLO2,
                                    start(entry="agent", hooks=[], agent={"steeringMode": "all", "followUpMode": "all", "barriers": barriers}),
                                    deliver("agent", 1, "u1", {"op": "prompt"}), deliver("abort", 5), stop(),
                                    agent=agent, waiting_hooks=True)
                self.assertEqual(status, 0)
                # held at the first until the abort at 5ms; the second finds the signal fired
                self.assertEqual(order, ["1@5", "2@5"])
                self.assertIn("outcome u1 prompt resolved", [brief(m) for m in out])


if __name__ == "__main__":
    unittest.main()
