// Checks terminate_test.go: a batch terminates only when every result says terminate: true.
import { run, provider, says, calls, call, tool, show, queue, ok, user } from "./lib.mjs";

const done = (name) => ({ ...ok(`${name} ok`), terminate: true });
const tools = () => [tool("stop", async () => done("stop")), tool("echo"), tool("guard")];

async function scenario(name, replyCalls, config = {}) {
	const steering = queue();
	const followUp = queue();
	const p = provider(calls(...replyCalls), says("after"));
	const cfg = { getSteeringMessages: steering.poll, getFollowUpMessages: followUp.poll, ...config };
	// Messages queued while the tools run (from beforeToolCall), after poll A.
	if (config.queueDuringTools) cfg.beforeToolCall = async () => void config.queueDuringTools(steering, followUp);
	const r = await run({ provider: p, tools: tools(), config: cfg });
	show(`${name}: requests, steering polls, follow-up polls, roles`, [p.requests.length, steering.polls, followUp.polls, r.roles]);
	return r;
}

{
	const r = await scenario("all", [call("t1", "stop"), call("t2", "stop")]);
	show("all: lines", r.lines);
}
await scenario("some", [call("t1", "stop"), call("t2", "echo")]);
await scenario("none", [call("t1", "echo"), call("t2", "echo")]);
const blockGuard = (terminate) => async ({ toolCall }) => (toolCall.name === "guard" ? { block: true, reason: "no", terminate } : undefined);
await scenario("blocked with terminate", [call("t1", "stop"), call("t2", "guard")], { beforeToolCall: blockGuard(true) });
await scenario("blocked alone with terminate", [call("t1", "guard")], { beforeToolCall: blockGuard(true) });
await scenario("blocked without terminate", [call("t1", "stop"), call("t2", "guard")], { beforeToolCall: blockGuard(false) });
await scenario("afterToolCall sets terminate", [call("t1", "echo"), call("t2", "echo")], { afterToolCall: async () => ({ terminate: true }) });
await scenario("afterToolCall clears terminate", [call("t1", "stop")], { afterToolCall: async () => ({ terminate: false }) });
await scenario("terminate with steering", [call("t1", "stop")], { queueDuringTools: (s) => s.items.push(user("steer")) });
await scenario("terminate with follow-up", [call("t1", "stop")], { queueDuringTools: (_, f) => f.items.push(user("more")) });
