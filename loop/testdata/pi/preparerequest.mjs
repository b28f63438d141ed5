// Checks preparerequest_test.go: prepareRequest runs before every request and may replace
// context, model and thinking level, but adds no message.
import { run, provider, says, calls, call, tool, show, user, model } from "./lib.mjs";

{
	const seen = [];
	const p = provider(calls(call("t1", "echo")), says("done"));
	const r = await run({
		provider: p,
		tools: [tool("echo")],
		config: {
			prepareRequest: async (req, signal) => {
				seen.push({ roles: req.context.messages.map((m) => m.role), model: req.model.id, thinkingLevel: req.thinkingLevel, requestsSoFar: p.requests.length, signal: signal === undefined ? "none" : "given" });
			},
		},
	});
	show("every request: calls/requests", [seen.length, p.requests.length]);
	show("every request: seen", seen);
}
{
	const seen = [];
	await run({ provider: provider(says("a")), config: { reasoning: "high", prepareRequest: async (req) => void seen.push(req.thinkingLevel) } });
	show("thinking level seen with reasoning high", seen);
}
{
	const p = provider(calls(call("t1", "echo")), says("done"));
	let n = 0;
	const r = await run({
		provider: p,
		tools: [tool("echo")],
		config: {
			prepareRequest: async (req) => (n++ === 0 ? { context: { ...req.context, messages: [...req.context.messages, user("extra")] } } : undefined),
		},
	});
	show("context with an extra message: lines", r.lines);
	show("context with an extra message: new messages, sent", [r.roles, p.requests.map((q) => q.roles)]);
}
{
	const p = provider(says("a"), says("b"));
	let n = 0;
	const r = await run({
		provider: p,
		messages: [user("old"), says("old answer")],
		config: {
			finishTurn: async () => (n === 1 ? { action: "continue" } : undefined),
			prepareRequest: async (req) => (n++ === 0 ? { context: { ...req.context, messages: req.context.messages.slice(2) } } : undefined),
		},
	});
	show("context replacement persists: sent", p.requests.map((q) => q.roles));
}
{
	const p = provider(says("a"), says("b"), says("c"));
	let n = 0;
	const levels = [{ thinkingLevel: "high", model: { ...model, id: "other" } }, { thinkingLevel: "off" }, undefined];
	const r = await run({
		provider: p,
		config: {
			reasoning: "low",
			finishTurn: async () => (n < 3 ? { action: "continue" } : undefined),
			prepareRequest: async () => levels[n++],
		},
	});
	show("model/thinking replacement: requests model/reasoning", p.requests.map((q) => [q.model, q.reasoning]));
	show("model/thinking replacement: stamped", r.messages.filter((m) => m.role === "assistant").map((m) => m.thinkingLevel));
}
