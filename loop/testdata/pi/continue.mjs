// Checks continue_test.go: Continue's refusals and how it resumes.
import { core, ai, run, provider, says, calls, call, user, tool, show, model, defaultConvert } from "./lib.mjs";

for (const [name, messages] of [
	["empty", []],
	["assistant last", [user("hi"), says("hello")]],
]) {
	let events = 0;
	try {
		core.agentLoopContinue({ messages, tools: [] }, { model, convertToLlm: defaultConvert }, undefined, provider().streamFn);
		show(`refusal ${name}`, "no error");
	} catch (err) {
		show(`refusal ${name}`, err.message);
	}
	try {
		await core.runAgentLoopContinue({ messages, tools: [] }, { model, convertToLlm: defaultConvert }, async () => events++, undefined, provider().streamFn);
	} catch (err) {
		show(`refusal ${name} (run) events`, [err.message, events]);
	}
}
{
	const p = provider(says("again"));
	const r = await run({ prompts: null, messages: [user("hi")], provider: p });
	show("from user lines", r.lines);
	show("from user roles / sent", [r.roles, p.requests[0].roles]);
}
{
	const echo = tool("echo");
	const declared = { role: "system", content: "", toolsAdded: [ai.toToolDeclaration(echo)], timestamp: 0 };
	const history = [declared, user("hi"), calls(call("t1", "echo")), { role: "toolResult", toolCallId: "t1", toolName: "echo", content: [{ type: "text", text: "echo ok" }], isError: false, timestamp: 0 }];
	const p = provider(says("done"));
	const r = await run({ prompts: null, messages: history, tools: [echo], provider: p });
	show("from toolResult lines", r.lines);
	show("from toolResult roles", r.roles);
}
{
	const p = provider(says("done"));
	const r = await run({ prompts: null, messages: [user("hi")], tools: [tool("echo")], provider: p });
	show("undeclared lines", r.lines);
	show("undeclared roles", r.roles);
	show("undeclared toolsAdded", r.messages[0].toolsAdded.map((t) => t.name));
	show("undeclared sent", p.requests[0].roles);
}
