// Checks noturncap_test.go: no turn limit — 1,000 tool turns run to the end.
import { run, says, calls, call, tool, show, responseEvents } from "./lib.mjs";

let requests = 0;
const streamFn = () => {
	requests++;
	const final = requests <= 1000 ? calls(call(`t${requests}`, "echo")) : says("finally");
	const events = responseEvents(final);
	return { async *[Symbol.asyncIterator]() { yield* events; }, result: async () => final };
};
const r = await run({ provider: { streamFn }, tools: [tool("echo")] });
const count = (l) => r.lines.filter((x) => x === l).length;
show("requests, turn_starts, turn_ends, tool ends, agent_ends", [requests, count("turn_start"), count("turn_end"), r.lines.filter((l) => l.startsWith("tool_execution_end")).length, count("agent_end")]);
show("new messages, tool results, last text", [r.messages.length, r.messages.filter((m) => m.role === "toolResult").length, r.messages.at(-1).content[0].text]);
