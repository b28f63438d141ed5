// Checks events_test.go: event order and the run's new messages.
import { run, provider, says, calls, call, user, text, tool, show, queue } from "./lib.mjs";

{
	const r = await run({ provider: provider(says("hello")) });
	show("text-only all", r.all);
	show("text-only update kinds", r.events.filter((e) => e.type === "message_update").map((e) => e.assistantMessageEvent.type));
	const start = r.events.find((e) => e.type === "message_start" && e.message.role === "assistant");
	const end = r.events.find((e) => e.type === "message_end" && e.message.role === "assistant");
	show("text-only start/end content", [start.message.content.length, end.message.content.map((b) => b.text)]);
	show("text-only roles", r.roles);
}
{
	const r = await run({ provider: provider(calls(call("t1", "echo")), says("done")), tools: [tool("echo")] });
	show("tool turn lines", r.lines);
	show("tool turn roles", r.roles);
}
{
	const p = provider(calls(call("t1", "echo")), calls(call("t2", "echo")), says("done"));
	const r = await run({ provider: p, tools: [tool("echo")] });
	show("several turns lines", r.lines);
	show("several turns requests/turn_starts/turn_ends", [
		p.requests.length,
		r.lines.filter((l) => l === "turn_start").length,
		r.lines.filter((l) => l === "turn_end").length,
	]);
	show("several turns sent roles", p.requests.map((q) => q.roles));
}
{
	const history = [user("before"), says("earlier")];
	const r = await run({ provider: provider(says("now")), messages: history, prompts: [user("a"), user("b")] });
	show("history lines", r.lines);
	show("history agent_end roles", r.events.at(-1).messages.map((m) => m.role));
	show("history agent_end texts", r.events.at(-1).messages.map((m) => (typeof m.content === "string" ? m.content : m.content[0].text)));
}
{
	// agent_end.messages gathers every kind of new message.
	const steering = queue();
	const followUp = queue("one-at-a-time", user("follow"));
	let prepared = false;
	const echo = tool("echo", async () => (steering.items.push(user("steer")), { content: [text("echo ok")], details: {} }));
	const r = await run({
		provider: provider(calls(call("t1", "echo")), says("b"), says("c")),
		messages: [user("old")],
		tools: [echo],
		config: {
			getSteeringMessages: steering.poll,
			getFollowUpMessages: followUp.poll,
			prepareNextTurn: async () => (prepared ? undefined : ((prepared = true), { messages: [user("prepared")] })),
		},
	});
	const end = r.events.at(-1);
	show("every kind: agent_end roles", end.messages.map((m) => m.role));
	show("every kind: user texts", end.messages.filter((m) => m.role === "user").map((m) => (typeof m.content === "string" ? m.content : m.content[0].text)));
}
{
	// Emission is awaited: a slow listener holds the loop.
	const order = [];
	const echo = tool("echo", async () => (order.push("execute"), { content: [text("ok")], details: {} }));
	await run({
		provider: provider(calls(call("t1", "echo")), says("done")),
		tools: [echo],
		onEvent: async (e) => {
			if (e.type !== "tool_execution_start") return;
			await new Promise((resolve) => setTimeout(resolve, 20));
			order.push("listener done");
		},
	});
	show("awaited emission: order", order);
}
{
	// The JSON of every event of a tool turn, clocks fixed (Date.now() = 1000, durations 0):
	// testdata/pi/tool-turn.events.json holds this line's value.
	const realNow = Date.now;
	const realPerf = performance.now;
	Date.now = () => 1000;
	performance.now = () => 0;
	const echo = tool("echo", async (id, args, signal, onUpdate) => (onUpdate({ content: [text("half")], details: {} }), { content: [text("echo ok")], details: { n: 1 } }));
	const r = await run({ provider: provider(calls(text("let me"), call("t1", "echo", { q: "x" })), says("done")), tools: [echo] });
	Date.now = realNow;
	performance.now = realPerf;
	show("tool turn JSON", r.events);
}
