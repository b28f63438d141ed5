import asyncio
import unittest

from tests.harness import HELLO, answer, brief, deliver, serve, start, stop
from turnstile_kit import STOPPED, CallError, SessionStopped, ToolError

DONE = {"type": "done", "reason": "stop", "message": {"role": "assistant", "content": [], "stopReason": "stop"}}


# The same toy loop twice: under asyncio and synchronous. Both must speak identically.
async def async_loop(s):
    s.hook("getSteeringMessages", {})
    s.emit({"type": "agent_start", "at": s.now()})
    stream = s.open_stream({"messages": []})
    async for event in stream:
        s.emit({"type": "message_update", "event": event["type"], "at": s.now()})
    final = stream.result()
    a = s.start_tool("t1", "x", {}, on_update=lambda p: s.emit({"type": "tool_execution_update", "p": p}))
    b = s.start_tool("t2", "x", {})
    results = await asyncio.gather(a, b)
    return [final, {"results": results, "at": s.now()}]


def sync_loop(s):
    s.hook("getSteeringMessages", {})
    s.emit({"type": "agent_start", "at": s.now()})
    stream = s.open_stream({"messages": []})
    for event in stream:
        s.emit({"type": "message_update", "event": event["type"], "at": s.now()})
    final = stream.result()
    a = s.start_tool("t1", "x", {}, on_update=lambda p: s.emit({"type": "tool_execution_update", "p": p}))
    b = s.start_tool("t2", "x", {})
    results = [s.wait(a), s.wait(b)]
    return [final, {"results": results, "at": s.now()}]


SCRIPT = [
    HELLO,
    start(),
    answer(1, {"messages": []}),
    answer(2, {"stream": "1"}),
    deliver("streamEvent", 5, "1", {"type": "start", "partial": {}}),
    deliver("streamEvent", 6, "1", DONE),
    answer(3, {}),
    answer(4, {}),
    deliver("toolUpdate", 7, "t1", {"content": "half"}),
    deliver("toolResult", 8, "t2", {"result": "two"}),
    deliver("toolResult", 9, "t1", {"result": "one"}),
    stop(),
]

EXPECTED = [
    "hello",
    "call 1 hook:getSteeringMessages",
    "ev agent_start",
    "call 2 stream",
    "idle",  # after start: the stream waits
    "ev message_update",
    "idle",
    "ev message_update",  # done ends the iteration
    "call 3 tool",
    "call 4 tool",
    "idle",
    "ev tool_execution_update",
    "idle",
    "idle",  # t2's result: the loop still waits for t1
    'end {"messages": [{"content": [], "role": "assistant", "stopReason": "stop"}, {"at": 9, "results": ["one", "two"]}]}',
    "idle",
    "stopped",
]


class ConversationTest(unittest.TestCase):
    def test_asyncio_loop(self):
        status, out = serve(async_loop, *SCRIPT)
        self.assertEqual(status, 0)
        self.assertEqual([brief(m) for m in out], EXPECTED)
        self.assertEqual(out[0], {"type": "hello", "protocol": 1, "name": "test", "version": "0", "tracks": "1.6.0",
                                  "capabilities": {"hooks": ["getSteeringMessages"], "deliveriesAhead": True,
                                                                   "standingAnswers": True}})
        self.assertEqual(out[2]["notification"]["data"]["at"], 0, "the clock reads 0 until the first delivery")
        self.assertEqual(out[5]["notification"]["data"]["at"], 5, "the clock reads the delivery's now")
        self.assertEqual(out[11]["notification"]["data"]["p"], {"content": "half"})

    def test_synchronous_loop_speaks_the_same(self):
        status, out = serve(sync_loop, *SCRIPT)
        self.assertEqual(status, 0)
        self.assertEqual([brief(m) for m in out], EXPECTED)

    def test_deliveries_sent_ahead_wait_until_idle(self):
        # PROTOCOL.md §14: t1's update comes while call 4 waits for its answer; it is applied
        # once the loop is idle, so the conversation is the one of SCRIPT, line for line.
        i = SCRIPT.index(answer(4, {}))
        ahead = SCRIPT[:i] + [SCRIPT[i + 1], SCRIPT[i]] + SCRIPT[i + 2:]
        self.assertEqual(ahead[i]["delivery"]["kind"], "toolUpdate")
        for loop in (async_loop, sync_loop):
            status, out = serve(loop, *ahead)
            self.assertEqual(status, 0)
            self.assertEqual([brief(m) for m in out], EXPECTED, loop.__name__)
            self.assertEqual(out[11]["notification"]["data"]["p"], {"content": "half"}, loop.__name__)
        # A wrong delivery ahead names its own line.
        wrong = dict(ahead[i], session=2)
        status, out = serve(sync_loop, *ahead[:i], wrong, *ahead[i + 1:])
        self.assertEqual(status, 1)
        self.assertRegex(out[-1]["message"], rf'^protocol error at line {i + 1}: a "deliver" for session 2, but session 1 is running')

    def test_standing_answers_are_not_waited_for(self):
        # PROTOCOL.md §15: a promised hook's call is written marked standing and not waited for;
        # the loop gets a fresh copy each time; other hooks wait for their answers.
        def loop(s):
            first = s.hook("getSteeringMessages", {})
            first["messages"].append("mutated by the loop")
            second = s.hook("getSteeringMessages", {})
            other = s.hook("getFollowUpMessages", {})
            return [len(first["messages"]), len(second["messages"]), other]

        hooks = ("getSteeringMessages", "getFollowUpMessages")
        promised = dict(start(hooks=list(hooks)), standingAnswers={"getSteeringMessages": {"messages": []}})
        status, out = serve(loop, HELLO, promised, answer(3, {"messages": [7]}), stop(), hooks=hooks)
        self.assertEqual(status, 0)
        self.assertEqual([brief(m) for m in out], ["hello", "call 1 hook:getSteeringMessages", "call 2 hook:getSteeringMessages",
                                                    "call 3 hook:getFollowUpMessages", 'end {"messages": [1, 0, {"messages": [7]}]}',
                                                    "idle", "stopped"])
        self.assertEqual(out[1], {"type": "call", "id": 1, "session": 1, "standing": True,
                                  "call": {"kind": "hook", "data": {}, "name": "getSteeringMessages"}})
        self.assertNotIn("standing", out[3], "a hook without a promise is answered as always")
        # A start whose promises are not answer objects is a protocol error.
        status, out = serve(loop, HELLO, dict(start(), standingAnswers={"getSteeringMessages": []}))
        self.assertEqual(status, 1)
        self.assertRegex(out[-1]["message"], r"^protocol error at line 2: start's standingAnswers must be an object of answer data")

    def test_clock_restarts_at_zero_for_each_session(self):
        def loop(s):
            return [{"at": s.now()}]

        status, out = serve(loop, HELLO, start(1), deliver("abort", 40), stop(1), start(2), stop(2))
        ends = [m["notification"]["data"] for m in out if m["type"] == "notify"]
        self.assertEqual(ends, [{"messages": [{"at": 0}]}, {"messages": [{"at": 0}]}])
        self.assertEqual([brief(m) for m in out],
                         ["hello", 'end {"messages": [{"at": 0}]}', "idle", "idle", "stopped",
                          'end {"messages": [{"at": 0}]}', "idle", "stopped"])


    def test_an_async_update_callback_runs_on_the_virtual_loop(self):
        async def aloop(s):
            async def on_update(partial):  # a coroutine: the kit must schedule it on its own loop
                s.emit({"type": "tool_execution_update", "partial": partial})

            return [await s.run_tool("t1", "x", {}, on_update)]

        status, out = serve(aloop, HELLO, start(), answer(1, {}), deliver("toolUpdate", 1, "t1", {"n": 1}),
                            deliver("toolResult", 2, "t1", {"result": "r"}), stop())
        self.assertEqual([brief(m) for m in out], ["hello", "call 1 tool", "idle", "ev tool_execution_update", "idle",
                                                    'end {"messages": ["r"]}', "idle", "stopped"])

    def test_updates_after_the_result_reach_the_retained_callback(self):
        """The loop decides what to drop (PROTOCOL.md section 7): the kit passes a late update on."""
        seen = []

        async def aloop(s):
            return [await s.run_tool("t1", "x", {}, seen.append)]

        serve(aloop, HELLO, start(), answer(1, {}), deliver("toolResult", 2, "t1", {"result": "r"}),
              deliver("toolUpdate", 3, "t1", {"late": True}), stop())
        self.assertEqual(seen, [{"late": True}])


class StdoutTest(unittest.TestCase):
    def test_serve_print_goes_to_stderr_and_the_hello_says_what_the_loop_lacks(self):
        import subprocess
        import sys as _sys
        import os as _os

        src = _os.path.join(_os.path.dirname(__file__), "..", "src")
        program = (
            "import turnstile_kit as kit\n"
            "def run(s):\n"
            "    print('debugging output')\n"
            "    return []\n"
            "kit.serve(run, name='p', hooks=['finishTurn'], lacks=['continue'])\n"
        )
        from tests.harness import lines
        proc = subprocess.run([_sys.executable, "-c", program], input=lines(HELLO, start(), stop(), {"type": "shutdown"}),
                              capture_output=True, env={**_os.environ, "PYTHONPATH": src}, timeout=30)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual([brief(__import__("json").loads(x)) for x in proc.stdout.decode().splitlines()],
                         ["hello", 'end {"messages": []}', "idle", "stopped"])
        self.assertIn(b"debugging output", proc.stderr)
        hello = __import__("json").loads(proc.stdout.decode().splitlines()[0])
        self.assertEqual(hello["capabilities"], {"hooks": ["finishTurn"], "deliveriesAhead": True, "standingAnswers": True,
                                                "lacks": ["continue"]})


class FailureLogTest(unittest.TestCase):
    def stderr_of(self, raise_line: str) -> str:
        """The stderr of an adapter whose run raises, as raise_line says."""
        import subprocess
        import sys as _sys
        import os as _os

        src = _os.path.join(_os.path.dirname(__file__), "..", "src")
        program = (
            "import turnstile_kit as kit\n"
            "def run(s):\n"
            f"    {raise_line}\n"
            "kit.serve(run, name='p')\n"
        )
        from tests.harness import lines
        env = {k: v for k, v in _os.environ.items() if k != "TURNSTILE_KIT_DEBUG"}
        proc = subprocess.run([_sys.executable, "-c", program], input=lines(HELLO, start(), stop(), {"type": "shutdown"}),
                              capture_output=True, env={**env, "PYTHONPATH": src}, timeout=30)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return proc.stderr.decode()

    def test_a_scripted_error_is_quiet_a_bug_shows_its_traceback(self):
        # The harness's own error passed on: the scenario meant it, nothing to say.
        self.assertEqual(self.stderr_of("raise kit.CallError('provider exploded')"), "")
        # A bug: where it happened.
        bug = self.stderr_of("return {}['durationMs']")
        self.assertIn("the run failed with KeyError", bug)
        self.assertIn("Traceback (most recent call last)", bug)
        self.assertIn('File "<string>", line 3, in run', bug)
        # Anything else: one line.
        self.assertEqual(self.stderr_of("raise RuntimeError('Cannot continue')"),
                         "turnstile_kit: the run failed: RuntimeError: Cannot continue\n")


class FailureTest(unittest.TestCase):
    def both(self, make):
        """Runs make(mode) for an async and a sync loop; returns both outputs."""
        return [make(True), make(False)]

    def test_a_call_answered_with_an_error_raises_it_in_the_loop(self):
        seen = []

        async def aloop(s):
            try:
                s.hook("getSteeringMessages", {})
            except CallError as err:
                seen.append(str(err))
            raise ValueError("the run failed")

        status, out = serve(aloop, HELLO, start(), answer(1, error="hook broke"), stop())
        self.assertEqual(seen, ["hook broke"])
        self.assertEqual([brief(m) for m in out],
                         ["hello", "call 1 hook:getSteeringMessages", 'end {"error": "the run failed"}', "idle", "stopped"])

    def test_stop_fails_every_wait_and_silences_the_loop(self):
        for mode in ("async", "sync"):
            seen = []

            def wind_down(s, err):
                seen.append(str(err))
                s.emit({"type": "agent_end"})  # not reported after stop
                try:
                    s.hook("getSteeringMessages", {})  # not sent: fails locally
                except SessionStopped as again:
                    seen.append(f"call: {again}")
                seen.append(f"aborted={s.signal.aborted}")

            async def aloop(s):
                run = s.start_tool("t1", "x", {})
                try:
                    await run
                except ToolError:
                    raise
                except SessionStopped as err:
                    wind_down(s, err)
                return []

            def sloop(s):
                run = s.start_tool("t1", "x", {})
                try:
                    s.wait(run)
                except SessionStopped as err:
                    wind_down(s, err)
                return []

            status, out = serve(aloop if mode == "async" else sloop, HELLO, start(), answer(1, {}), stop())
            self.assertEqual(status, 0)
            self.assertEqual([brief(m) for m in out], ["hello", "call 1 tool", "idle", "stopped"], mode)
            self.assertEqual(seen, [STOPPED, f"call: {STOPPED}", "aborted=True"], mode)

    def test_a_failed_tool_and_a_failed_stream_raise_their_text(self):
        seen = []

        async def aloop(s):
            try:
                await s.run_tool("t1", "x", {})
            except ToolError as err:
                seen.append(f"tool: {err}")
            stream = s.open_stream({})
            try:
                async for _ in stream:
                    pass
            except CallError as err:
                seen.append(f"stream: {err}")
            return []

        serve(aloop, HELLO, start(), answer(1, {}), deliver("toolResult", 1, "t1", {"error": "disk full"}),
              answer(2, {"stream": "7"}), deliver("streamFail", 2, "7", {"error": "socket closed"}), stop())
        self.assertEqual(seen, ["tool: disk full", "stream: socket closed"])

    def test_abort_fires_the_signal_listeners(self):
        seen = []

        async def aloop(s):
            s.signal.add_listener(lambda: seen.append(("listener", s.now())))
            stream = s.open_stream({})
            async for _ in stream:
                pass
            seen.append(("aborted", s.signal.aborted))
            return []

        serve(aloop, HELLO, start(), answer(1, {"stream": "1"}), deliver("abort", 3),
              deliver("streamEnd", 4, "1", {"message": {"stopReason": "aborted"}}), stop())
        self.assertEqual(seen, [("listener", 3), ("aborted", True)])

    def test_an_abort_listener_can_use_asyncio(self):
        seen = []

        async def aloop(s):
            woken = asyncio.Event()
            s.signal.add_listener(woken.set)  # an asyncio.Event made inside the loop
            s.signal.add_listener(lambda: asyncio.ensure_future(note()))

            async def note():
                seen.append("task made by a listener ran")

            await woken.wait()
            seen.append("woken")
            return []

        status, out = serve(aloop, HELLO, start(), deliver("abort", 3), stop())
        self.assertEqual(seen, ["woken", "task made by a listener ran"])
        self.assertEqual([brief(m) for m in out], ["hello", "idle", 'end {"messages": []}', "idle", "stopped"])

    def test_a_delivery_for_an_unknown_target_is_reported(self):
        async def aloop(s):
            await s.run_tool("t1", "x", {})

        status, out = serve(aloop, HELLO, start(), answer(1, {}), deliver("toolResult", 1, "nope", {"result": 1}), stop())
        self.assertIn({"type": "error", "session": 1, "message": 'delivery for unknown tool call "nope"'}, out)
        self.assertEqual(out[-1]["type"], "stopped")

    def test_a_wrong_answer_is_a_protocol_error(self):
        for loop in (lambda s: s.hook("getSteeringMessages", {}),):
            async def aloop(s):
                loop(s)

            status, out = serve(aloop, HELLO, start(), answer(9, {}))
            self.assertEqual(status, 1)
            self.assertEqual(brief(out[-1]), "error protocol error at line 3: an answer for unknown call id 9 (the outstanding call is 1)")
            status, out = serve(lambda s: loop(s), HELLO, start(), stop())
            self.assertEqual(status, 1)
            self.assertEqual(brief(out[-1]), 'error protocol error at line 3: expected the answer to call 1, got a "stop" message')

    def test_shutdown_or_the_end_of_input_mid_call_exits_cleanly(self):
        for script in ([HELLO, start(), {"type": "shutdown"}], [HELLO, start()]):
            for run in (lambda s: s.hook("getSteeringMessages", {}),):
                async def aloop(s):
                    try:
                        run(s)
                    except Exception:  # a loop's broad except must not swallow the shutdown
                        s.emit({"type": "swallowed"})

                status, out = serve(aloop, *script)
                self.assertEqual(status, 0)
                self.assertEqual([brief(m) for m in out], ["hello", "call 1 hook:getSteeringMessages"])

    def test_an_event_that_is_not_json_ends_the_adapter_with_a_clear_error(self):
        class Message:  # a port's own class, not converted at the adapter's edge
            pass

        async def aloop(s):
            s.emit({"type": "message_start", "message": Message()})
            return []

        status, out = serve(aloop, HELLO, start())
        self.assertEqual(status, 1)
        self.assertEqual(out[-1]["type"], "error")
        self.assertEqual(out[-1]["session"], 1)
        self.assertTrue(out[-1]["message"].startswith(
            "the event message_start is not JSON: Object of type Message is not JSON serializable"), out[-1]["message"])

    def test_to_json_converts_the_loops_objects(self):
        import io
        import json
        from tests.harness import lines
        from turnstile_kit import Kit

        class Message:
            def __init__(self, text):
                self.text = text

        def loop(s):
            s.emit({"type": "message_start", "message": Message("hi")})
            return [Message("hi")]

        buf = io.BytesIO()
        kit = Kit(loop, name="t", version="0", tracks="1.6.0", hooks=[], reader=io.BytesIO(lines(HELLO, start(), stop())),
                  writer=buf, to_json=lambda m: {"role": "user", "content": m.text})
        self.assertEqual(kit.serve(), 0)
        out = [json.loads(x) for x in buf.getvalue().decode().splitlines()]
        self.assertEqual(out[1]["notification"]["data"]["message"], {"role": "user", "content": "hi"})
        self.assertEqual(out[2]["notification"]["data"], {"messages": [{"role": "user", "content": "hi"}]})

    def test_other_protocol_versions_are_refused(self):
        status, out = serve(lambda s: [], {"type": "hello", "protocol": 3})
        self.assertEqual(status, 1)
        self.assertEqual(out, [{"type": "error", "message": "the harness speaks protocol [3]; this adapter speaks 1 to 2"}])


class VersionTwoTest(unittest.TestCase):
    """PROTOCOL.md §13: the newest version both speak; an answer's abort (§13.5)."""

    HELLO2 = {"type": "hello", "protocol": 1, "protocols": [1, 2]}

    @staticmethod
    def aborts_in_hook(s):
        # What the loop sees right after the hook returns: the signal, fired before it did.
        s.hook("beforeToolCall", {})
        s.emit({"type": "seen", "aborted": s.signal.aborted})
        return []

    def test_a_version_two_harness_gets_version_two_and_what_the_kit_lacks(self):
        status, out = serve(lambda s: [], self.HELLO2)
        self.assertEqual(status, 0)
        self.assertEqual(out[0]["protocol"], 2)
        self.assertEqual(out[0]["capabilities"]["lacks"], ["agent", "toolResolvesNothing", "runToolCall", "defaultModel", "waitingHooks"])

    def test_an_answer_that_aborts_fires_the_signal_before_the_hook_returns(self):
        status, out = serve(self.aborts_in_hook, self.HELLO2, start(hooks=["beforeToolCall"]),
                            answer(1, {}) | {"abort": True}, stop(), hooks=("beforeToolCall",))
        self.assertEqual(status, 0)
        seen = [m["notification"]["data"] for m in out if m.get("type") == "notify" and m["notification"]["data"].get("type") == "seen"]
        self.assertEqual(seen, [{"type": "seen", "aborted": True}])

    def test_version_one_ignores_an_answers_abort(self):
        status, out = serve(self.aborts_in_hook, HELLO, start(hooks=["beforeToolCall"]),
                            answer(1, {}) | {"abort": True}, stop(), hooks=("beforeToolCall",))
        self.assertEqual(status, 0)
        seen = [m["notification"]["data"] for m in out if m.get("type") == "notify" and m["notification"]["data"].get("type") == "seen"]
        self.assertEqual(seen, [{"type": "seen", "aborted": False}])


if __name__ == "__main__":
    unittest.main()
