// Checks stream_test.go: streaming a response into events, the final message's thinkingLevel,
// transformContext / convertToLlm / API key resolution.
import { core, model, run, provider, says, reply, text, show, user } from "./lib.mjs";

{
	const r = await run({ provider: provider(says("a")) });
	const end = r.events.find((e) => e.type === "message_end" && e.message.role === "assistant");
	show("no reasoning: stamped, on message_end", [r.messages.at(-1).thinkingLevel, end.message.thinkingLevel]);
	const r2 = await run({ provider: provider(says("a")), config: { reasoning: "high" } });
	show("reasoning high: stamped", r2.messages.at(-1).thinkingLevel);
}
{
	const r = await run({ provider: provider({ message: says("a"), opts: { start: false } }) });
	show("no start: all lines", r.all);
	const start = r.events.find((e) => e.type === "message_start" && e.message.role === "assistant");
	const end = r.events.find((e) => e.type === "message_end" && e.message.role === "assistant");
	show("no start: start is a copy", [start.message !== end.message, start.message.content.length, start.message.thinkingLevel]);
}
{
	const r = await run({ provider: provider({ message: says("a"), opts: { terminal: "none" } }) });
	show("no terminal event: all lines, stamped", [r.all, r.messages.at(-1).thinkingLevel]);
}
{
	const r = await run({ provider: provider(reply("stop", { type: "thinking", thinking: "hmm" }, text("a"))) });
	show("thinking: update kinds", r.events.filter((e) => e.type === "message_update").map((e) => e.assistantMessageEvent.type));
	show(
		"thinking: update content lengths",
		r.events.filter((e) => e.type === "message_update").map((e) => e.message.content.length),
	);
	const updates = r.events.filter((e) => e.type === "message_update");
	show("thinking: update message is a copy of the partial", updates[0].message !== updates[0].assistantMessageEvent.partial);
}
{
	const p = provider(reply("stop", text("a")), says("b"));
	let transformed = 0;
	let converted;
	let n = 0;
	const r = await run({
		provider: p,
		messages: [user("old"), says("old answer"), { role: "note", text: "custom", timestamp: 0 }],
		config: {
			finishTurn: async () => (n++ === 0 ? { action: "continue" } : undefined),
			transformContext: async (messages) => (transformed++, messages.slice(2)),
			convertToLlm: async (messages) => ((converted = messages.map((m) => m.role)), messages.filter((m) => m.role !== "note")),
		},
	});
	show("transform: calls, last converted, sent", [transformed, converted, p.requests.map((q) => q.roles)]);
	show("transform: new messages", r.roles);
}
{
	const p = provider(says("a"), says("b"));
	const asked = [];
	let n = 0;
	await run({
		provider: p,
		config: {
			apiKey: "fallback",
			getApiKey: async (prov) => (asked.push(prov), n++ === 0 ? "resolved" : undefined),
			finishTurn: async () => (n === 1 ? { action: "continue" } : undefined),
		},
	});
	show("api key: asked, sent", [asked, p.requests.map((q) => q.apiKey)]);
}
{
	// pi's Agent supplies the default convertToLlm.
	const p = provider(says("a"));
	const agent = new core.Agent({ initialState: { model, tools: [], messages: [{ role: "note", text: "custom", timestamp: 0 }, user("x")] }, streamFn: p.streamFn });
	await agent.prompt("y");
	show("default convert drops custom roles: sent", p.requests[0].roles);
}
{
	// A provider that reuses one partial object, as pi-ai's providers do, mutating it as the
	// response grows: message_start's copy keeps its top-level fields (content is a shared
	// array in pi's shallow copy, so a pushed block shows there; SPEC asks for a snapshot).
	const final = says("");
	const partial = { ...final, content: [] };
	const streamFn = () => ({
		async *[Symbol.asyncIterator]() {
			yield { type: "start", partial };
			partial.content.push(text("a"));
			partial.responseId = "r1";
			yield { type: "text_start", contentIndex: 0, partial };
			Object.assign(final, partial, { content: [text("a")] });
			yield { type: "done", reason: "stop", message: final };
		},
		result: async () => final,
	});
	const r = await run({ provider: { streamFn } });
	const start = r.events.find((e) => e.type === "message_start" && e.message.role === "assistant");
	const update = r.events.find((e) => e.type === "message_update");
	show("reused partial: start responseId, start content length, update responseId", [start.message.responseId ?? null, start.message.content.length, update.message.responseId]);
}
