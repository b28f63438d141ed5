// Checks preparenextturn_test.go: prepareNextTurn runs before every turn but the first.
import { run, provider, says, calls, call, tool, show, user, model, queue } from "./lib.mjs";

async function scenario(name, replies, prepareNextTurn, extra = {}) {
	const p = provider(...replies);
	const seen = [];
	const r = await run({
		provider: p,
		tools: [tool("echo")],
		...extra,
		config: {
			...extra.config,
			prepareNextTurn: async (turn) => {
				seen.push({ stopReason: turn.message.stopReason, toolResults: turn.toolResults.length, requests: p.requests.length });
				return prepareNextTurn?.(turn, seen.length - 1);
			},
		},
	});
	show(`${name}: calls, requests`, [seen.length, p.requests.length]);
	return { r, p, seen };
}

{
	const { seen } = await scenario("one turn", [says("a")]);
	const { seen: seen2 } = await scenario("three turns", [calls(call("t1", "echo")), calls(call("t2", "echo")), says("done")]);
	show("three turns: seen", seen2);
}
{
	const { r, p } = await scenario("messages", [calls(call("t1", "echo")), says("done")], () => ({ messages: [user("prepared")] }));
	show("messages: lines", r.lines);
	show("messages: new messages, second request", [r.roles, p.requests[1].roles]);
}
{
	const steering = queue();
	const { r, p } = await scenario(
		"prepared before steering",
		[calls(call("t1", "echo")), says("done")],
		() => ({ messages: [user("prepared")] }),
		{ config: { getSteeringMessages: steering.poll, beforeToolCall: async () => void steering.items.push(user("steer")) } },
	);
	show("prepared before steering: texts", r.messages.filter((m) => m.role === "user").map((m) => m.content));
	show("prepared before steering: steering polls", steering.polls);
}
{
	const { p } = await scenario("context", [calls(call("t1", "echo")), says("done")], (turn) => ({
		context: { ...turn.context, messages: turn.context.messages.filter((m) => m.role !== "toolResult" && m.role !== "assistant") },
	}));
	show("context: second request", p.requests[1].roles);
}
{
	const { r, p } = await scenario(
		"model and thinking",
		[calls(call("t1", "echo")), calls(call("t2", "echo")), says("done")],
		(_, n) => (n === 0 ? { model: { ...model, id: "next" }, thinkingLevel: "medium" } : { thinkingLevel: "off" }),
		{ config: { reasoning: "low" } },
	);
	show("model and thinking: requests", p.requests.map((q) => [q.model, q.reasoning]));
	show("model and thinking: stamped", r.messages.filter((m) => m.role === "assistant").map((m) => m.thinkingLevel));
}
{
	const order = [];
	const steering = queue();
	const p = provider(calls(call("t1", "echo")), says("done"));
	await run({
		provider: p,
		tools: [tool("echo")],
		config: {
			getSteeringMessages: async () => (order.push("poll"), steering.poll()),
			prepareNextTurn: async () => void order.push("prepareNextTurn"),
		},
		onEvent: (e) => void (e.type.startsWith("turn_") ? order.push(e.type) : 0),
	});
	show("order", order);
}
