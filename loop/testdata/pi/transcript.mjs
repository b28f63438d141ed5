// Checks transcript_test.go: pi-ai's transcript replay (getCurrentTools, getToolStateChanges)
// and the loop's declarations replayed on every prefix of a run's transcript.
import { ai, run, provider, says, calls, call, tool, show } from "./lib.mjs";

const d = (name, description = `${name} tool`) => ({ name, description, parameters: { type: "object", properties: {} } });
const sys = (added = [], removed = []) => ({ role: "system", content: "", toolsAdded: added, toolsRemoved: removed.map((name) => ({ name })), timestamp: 0 });
const view = (tools) => tools.map((t) => `${t.name}:${t.description}`);

{
	const transcript = [sys([d("a"), d("b"), d("c")]), { role: "user", content: "u", timestamp: 0 }, sys([d("a", "new a")]), sys([d("b")], ["b"]), sys([], ["c"]), sys([d("c")])];
	show("prefix replays", transcript.map((_, i) => view(ai.getCurrentTools(transcript.slice(0, i + 1)))));
	show("empty replay", ai.getCurrentTools([]));
}
{
	const changes = ai.getToolStateChanges([d("a"), d("b"), d("c")], [d("c", "changed"), d("d"), d("a")]);
	show("state changes", { added: view(changes.toolsAdded), removed: changes.toolsRemoved.map((t) => t.name) });
	const none = ai.getToolStateChanges([d("a"), d("b")], [d("b"), d("a")]);
	show("reordered: no changes", [none.toolsAdded.length, none.toolsRemoved.length]);
}
{
	const sets = [[tool("echo"), tool("grep")], [tool("grep"), tool("ls")], [tool("ls")]];
	const p = provider(calls(call("t1", "echo")), calls(call("t2", "grep")), calls(call("t3", "ls")), says("done"));
	let n = 0;
	const r = await run({
		provider: p,
		tools: sets[0],
		config: { prepareNextTurn: async (turn) => (++n < sets.length ? { context: { ...turn.context, tools: sets[n] } } : undefined) },
	});
	show("run transcript roles", r.roles);
	show("run prefix replays", r.messages.map((_, i) => ai.getCurrentTools(r.messages.slice(0, i + 1)).map((t) => t.name)));
}
