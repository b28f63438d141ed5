// Checks truncated_test.go: a response cut off by the output token limit fails its tool calls.
import { run, provider, says, reply, call, tool, show, resultTexts } from "./lib.mjs";

const log = [];
let beforeCalls = 0;
const p = provider(reply("length", call("t1", "echo", { x: 1 }), call("t2", "ghost")), says("retrying"));
const r = await run({
	provider: p,
	tools: [tool("echo", undefined, {}, log)],
	config: { beforeToolCall: async () => void beforeCalls++ },
});
show("lines", r.lines);
show("texts", resultTexts(r.messages));
show("executed/beforeToolCall calls/requests", [log, beforeCalls, p.requests.length]);
const ends = r.events.filter((e) => e.type === "tool_execution_end");
show("ends isError/has durationMs/details", ends.map((e) => [e.isError, "durationMs" in e, e.result.details]));
show("result messages isError/has durationMs", r.messages.filter((m) => m.role === "toolResult").map((m) => [m.isError, "durationMs" in m]));
show("start args", r.events.filter((e) => e.type === "tool_execution_start").map((e) => e.args));
show("second request roles", p.requests[1].roles);
{
	const r = await run({ provider: provider(reply("length", call("t1", 'say "hi"\t')), says("ok")) });
	show("quoted name text", resultTexts(r.messages));
}
