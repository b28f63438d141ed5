// Checks tooldecl_test.go: the loop declares tool changes in the transcript before requests.
import { ai, run, provider, says, calls, call, tool, show, user } from "./lib.mjs";

const decl = (m) => ({ added: (m.toolsAdded ?? []).map((t) => t.name), removed: (m.toolsRemoved ?? []).map((t) => t.name), content: m.content });
const systems = (messages) => messages.filter((m) => m.role === "system").map(decl);
/** Per request, the tool names a replay of what it sent gives. */
const replayed = (p) => p.requests.map((q) => ai.getCurrentTools(q.messages).map((t) => t.name));

{
	const r = await run({ provider: provider(says("a")), tools: [tool("echo"), tool("grep")] });
	show("first run: roles, systems", [r.roles, systems(r.messages)]);
	show("first run: declaration", r.messages[0].toolsAdded);
	const again = await run({ provider: provider(says("b")), messages: r.messages, tools: [tool("echo"), tool("grep")] });
	show("second run: roles", again.roles);
}
{
	// Tools change between turns: prepareNextTurn swaps the executable set.
	const sets = [[tool("echo"), tool("grep")], [tool("grep"), tool("ls")], [tool("grep"), { ...tool("ls"), description: "list files" }]];
	const p = provider(calls(call("t1", "echo")), calls(call("t2", "grep")), calls(call("t3", "ls")), says("done"));
	let n = 0;
	const r = await run({
		provider: p,
		tools: sets[0],
		config: { prepareNextTurn: async (turn) => (++n < sets.length ? { context: { ...turn.context, tools: sets[n] } } : undefined) },
	});
	show("changing tools: lines", r.lines);
	show("changing tools: systems", systems(r.messages));
	show("changing tools: replayed per request", replayed(p));
	show("changing tools: first system message still", decl(r.messages[0]));
}
{
	// A pending system message (prepared) gets its tool fields replaced by the exact delta.
	const p = provider(calls(call("t1", "echo")), says("done"));
	const prepared = { role: "system", content: "note", toolsAdded: [{ name: "bogus", description: "", parameters: {} }], toolsRemoved: [{ name: "echo" }], timestamp: 0 };
	const r = await run({
		provider: p,
		tools: [tool("echo")],
		config: { prepareNextTurn: async (turn) => ({ context: { ...turn.context, tools: [tool("echo"), tool("grep")] }, messages: [prepared, user("u")] }) },
	});
	show("pending system: systems", systems(r.messages));
	show("pending system: roles", r.roles);
	show("pending system: replayed", replayed(p));
	show("pending system: caller's message untouched", decl(prepared));
}
{
	// A pending system message declaring nothing is kept as is when nothing changed.
	const prepared = { role: "system", content: "plain", timestamp: 0 };
	const r = await run({
		provider: provider(calls(call("t1", "echo")), says("done")),
		tools: [tool("echo")],
		config: { prepareNextTurn: async () => ({ messages: [prepared] }) },
	});
	show("unchanged plain system: same object", r.messages.includes(prepared));
	// ...but one declaring something when nothing changed loses its declarations.
	const noisy = { role: "system", content: "noisy", toolsAdded: [ai.toToolDeclaration(tool("echo"))], timestamp: 0 };
	const r2 = await run({
		provider: provider(calls(call("t1", "echo")), says("done")),
		tools: [tool("echo")],
		config: { prepareNextTurn: async () => ({ messages: [noisy] }) },
	});
	show("unchanged noisy system: systems", systems(r2.messages));
}
{
	// Prompts with system messages: the last pending system message carries the delta.
	const r = await run({ provider: provider(says("a")), prompts: [{ role: "system", content: "s1", timestamp: 0 }, user("u"), { role: "system", content: "s2", timestamp: 0 }], tools: [tool("echo")] });
	show("system prompts: roles, systems", [r.roles, systems(r.messages)]);
	const r2 = await run({ provider: provider(says("a")), prompts: [user("u1"), user("u2")], tools: [tool("echo")] });
	show("user prompts: roles", r2.roles);
}
{
	// No tools, nothing declared: no system message. Tools removed entirely: one toolsRemoved.
	const r = await run({ provider: provider(says("a")) });
	show("no tools: roles", r.roles);
	const declared = { role: "system", content: "", toolsAdded: [ai.toToolDeclaration(tool("echo"))], timestamp: 0 };
	const r2 = await run({ provider: provider(says("a")), messages: [declared] });
	show("all removed: systems", systems(r2.messages));
}
