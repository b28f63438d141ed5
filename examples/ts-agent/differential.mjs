#!/usr/bin/env node
// Cases the protocol cannot express (R-AGENT-LISTENERS: "the Go reference's listeners return
// nothing, so it cannot express this"), run in-process on pi's own Agent and on this example's,
// and compared: a listener that throws, at various events, and two listeners.
//
//	node examples/ts-agent/differential.mjs        # exit 1 and a diff when they differ

import { Agent as PiAgent } from "@earendil-works/pi-agent-core";
import { createAssistantMessageEventStream } from "@earendil-works/pi-ai";
import { Agent as MyAgent } from "./agent.mjs";

Date.now = () => 1000; // timestamps compare equal

const model = { id: "faux-1", name: "faux-1", api: "faux", provider: "faux" };
const usage = () => ({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } });

/** A stream function answering each request with the next text, or throwing for a null. */
function scripted(texts) {
	let n = 0;
	return () => {
		const text = texts[n++];
		if (text === null) throw new Error("provider exploded");
		const stream = createAssistantMessageEventStream();
		const message = { role: "assistant", content: [{ type: "text", text: text ?? "unscripted" }], api: model.api, provider: model.provider, model: model.id, usage: usage(), stopReason: "stop", timestamp: 1000 };
		queueMicrotask(() => {
			stream.push({ type: "start", partial: { ...message, content: [] } });
			stream.push({ type: "done", reason: "stop", message });
		});
		return stream;
	};
}

/** Runs one case on an Agent class; returns what an observer sees. */
async function observe(AgentClass, c) {
	const agent = new AgentClass({ initialState: { model, systemPrompt: "Be brief.", tools: [], messages: [] }, streamFn: scripted(c.texts) });
	const seen = [];
	const counts = {};
	for (let i = 0; i < (c.listeners ?? 1); i++) {
		agent.subscribe(async (event) => {
			counts[`${i}:${event.type}`] = (counts[`${i}:${event.type}`] ?? 0) + 1;
			seen.push(`${i} ${event.type}${event.message ? ` ${event.message.role}${event.message.errorMessage ? ` error=${event.message.errorMessage} ${event.message.stopReason}` : ""}` : ""}`);
			if (i === 0 && c.throwAt && event.type === c.throwAt.type && counts[`${i}:${event.type}`] === (c.throwAt.nth ?? 1)) throw new Error(`listener failed at ${event.type}`);
		});
	}
	let outcome;
	try {
		await agent.prompt("hello");
		outcome = "resolved";
	} catch (err) {
		outcome = `rejected: ${err.message}`;
	}
	let second;
	if (c.second) {
		try {
			await agent.prompt("again");
			second = "resolved";
		} catch (err) {
			second = `rejected: ${err.message}`;
		}
	}
	const st = agent.state;
	return {
		events: seen,
		outcome,
		second,
		isStreaming: st.isStreaming,
		errorMessage: st.errorMessage,
		messages: st.messages.map((m) => `${m.role}${m.errorMessage ? ` error=${m.errorMessage} ${m.stopReason}` : ""}`),
	};
}

const cases = [
	{ name: "listener throws at agent_start", texts: ["Hi."], throwAt: { type: "agent_start" } },
	{ name: "listener throws at the user message_end", texts: ["Hi."], throwAt: { type: "message_end" } },
	{ name: "listener throws at the assistant message_end", texts: ["Hi."], throwAt: { type: "message_end", nth: 2 } },
	{ name: "listener throws at turn_end", texts: ["Hi."], throwAt: { type: "turn_end" } },
	{ name: "listener throws at agent_end", texts: ["Hi."], throwAt: { type: "agent_end" } },
	{ name: "listener throws at agent_end, then a second prompt", texts: ["Hi.", "Again."], throwAt: { type: "agent_end" }, second: true },
	{ name: "listener throws in the error turn (message_end of the error message)", texts: [null], throwAt: { type: "message_end", nth: 2 } },
	{ name: "listener throws at the error turn's agent_end", texts: [null], throwAt: { type: "agent_end" } },
	{ name: "two listeners, the first throws at the assistant message_end", texts: ["Hi."], throwAt: { type: "message_end", nth: 2 }, listeners: 2 },
];

let failed = 0;
for (const c of cases) {
	const pi = JSON.stringify(await observe(PiAgent, c), null, 1);
	const mine = JSON.stringify(await observe(MyAgent, c), null, 1);
	if (pi === mine) {
		console.log(`same     ${c.name}`);
		continue;
	}
	failed++;
	console.log(`DIFFERS  ${c.name}\n--- pi\n${pi}\n--- example\n${mine}`);
}
process.exit(failed ? 1 : 0);
