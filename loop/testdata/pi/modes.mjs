// Checks modes_test.go: sequential and parallel execution, completion order, the preflight
// example of SPEC's fine print.
import { run, provider, says, calls, call, tool, show, ok, resultTexts } from "./lib.mjs";

/** Tools held until the script opens them; started lists execute starts. */
function gates(...ids) {
	const g = { started: [], open: {}, wait: {} };
	for (const id of ids) g.wait[id] = new Promise((resolve) => (g.open[id] = resolve));
	g.exec = async (id) => {
		g.started.push(id);
		await g.wait[id];
		return ok(`${id} done`);
	};
	return g;
}
const tick = () => new Promise((resolve) => setImmediate(resolve));

async function instant(name, toolExecution, tools, blocks) {
	const r = await run({ provider: provider(calls(...blocks), says("done")), tools, config: { toolExecution } });
	show(`${name}: lines`, r.lines.slice(8, -5));
}
await instant("sequential config", "sequential", [tool("a"), tool("b")], [call("a", "a"), call("b", "b")]);
await instant("parallel default", undefined, [tool("a"), tool("b")], [call("a", "a"), call("b", "b")]);
await instant("one sequential tool", undefined, [tool("a"), tool("b", undefined, { executionMode: "sequential" })], [call("a", "a"), call("b", "b")]);
await instant("sequential tool not called", undefined, [tool("a"), tool("b"), tool("s", undefined, { executionMode: "sequential" })], [call("a", "a"), call("b", "b")]);

async function gated(name, order, blocks, extraTools = []) {
	const g = gates("a", "c");
	const tools = [tool("slow", g.exec), ...extraTools];
	const numberSchema = { type: "object", properties: { n: { type: "number" } }, required: ["n"] };
	tools.push(tool("calc", undefined, { parameters: numberSchema }));
	const pending = run({ provider: provider(calls(...blocks), says("done")), tools });
	await tick();
	const startedBeforeAny = [...g.started];
	for (const id of order) {
		g.open[id]();
		await tick();
	}
	const r = await pending;
	show(`${name}: started before any completion`, startedBeforeAny);
	show(`${name}: lines`, r.lines.slice(8, -5));
	show(`${name}: result order`, r.messages.filter((m) => m.role === "toolResult").map((m) => m.toolCallId));
	show(`${name}: texts`, resultTexts(r.messages));
}
await gated("completion order c, a", ["c", "a"], [call("a", "slow"), call("c", "slow")]);
await gated("preflight a, c", ["a", "c"], [call("a", "slow"), call("b", "ghost"), call("c", "slow"), call("d", "calc", { n: "x" })]);
await gated("preflight c, a", ["c", "a"], [call("a", "slow"), call("b", "ghost"), call("c", "slow"), call("d", "calc", { n: "x" })]);
