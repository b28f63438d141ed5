"""The Agent's parts that never wait (agentstate.py) and the stream function's options."""

import unittest

from agentstate import AgentError, AgentState, current_system_message
from transcript import DEFAULT_IDENTITY, request_options


class RequestOptionsTest(unittest.TestCase):
    def test_the_default_identity_merged_field_by_field(self):
        self.assertEqual(request_options(None, None), {"identity": DEFAULT_IDENTITY})
        self.assertEqual(request_options("s-1", {"userAgent": "short", "version": "2.0"}),
                         {"sessionId": "s-1", "identity": {**DEFAULT_IDENTITY, "userAgent": "short", "version": "2.0"}})
        self.assertEqual(request_options(None, {"attribution": None}), {"identity": {"attribution": None}})


class AgentStateTest(unittest.TestCase):
    def test_reset_keeps_the_replayed_system_message(self):
        messages = [{"role": "system", "content": "A", "timestamp": 3, "sections": {"x": "1", "y": "2"}},
                    {"role": "user", "content": "hi", "timestamp": 4},
                    {"role": "system", "content": [{"type": "text", "text": "B"}], "timestamp": 5, "sections": {"y": None},
                     "toolsAdded": [{"name": "t", "description": "", "parameters": {}}]}]
        self.assertEqual(current_system_message(messages),
                         {"role": "system", "content": "A\n\nB", "sections": {"x": "1"},
                          "toolsAdded": [{"name": "t", "description": "", "parameters": {}}], "timestamp": 3})
        self.assertIsNone(current_system_message([{"role": "user", "content": "hi"}]))
        agent = AgentState(messages=messages)
        agent.steer({"role": "user", "content": "s"})
        agent.reset()
        self.assertEqual([m["role"] for m in agent.messages], ["system"])
        self.assertFalse(agent.has_queued_messages())

    def test_refusals_while_busy_and_continue_from_the_queues(self):
        agent = AgentState(steering_mode="all")
        with self.assertRaisesRegex(AgentError, "^No messages to continue from$"):
            agent.continue_plan()
        agent.messages.append({"role": "assistant", "content": []})
        agent.steer({"role": "user", "content": "a"})
        agent.steer({"role": "user", "content": "b"})
        self.assertEqual(agent.continue_plan(), ([{"role": "user", "content": "a"}, {"role": "user", "content": "b"}], True))
        with self.assertRaisesRegex(AgentError, "^Cannot continue from message role: assistant$"):
            agent.continue_plan()
        agent.begin_run()
        for refused in (agent.continue_plan, agent.reset, lambda: agent.prompts_for("x")):
            with self.assertRaisesRegex(AgentError, "^Agent is already processing"):
                refused()


if __name__ == "__main__":
    unittest.main()
