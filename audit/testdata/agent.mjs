// Records what an app logs with pi's Agent class: agent.subscribe's events, one JSON line
// each, over several runs of one Agent (a log holds run after run), with pi-ai's faux
// provider as the model. The runs: a tool call and its answer; a tool that reports progress;
// a tool that throws (an error result); and a stream that throws, which makes the loop throw
// and the Agent end the run with its failure epilogue; then a run after it.
//
// Usage, after `npm ci --prefix conformance/adapters/pi` (pi-agent-core 1.6.0 and pi-ai):
//   node audit/testdata/agent.mjs > audit/testdata/pi/agent-app-log.events.jsonl
import { fileURLToPath, pathToFileURL } from "node:url";
import { dirname, join } from "node:path";

const modules = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "conformance", "adapters", "pi", "node_modules", "@earendil-works");
const load = (pkg) => import(pathToFileURL(join(modules, pkg, "dist", "index.js")).href);
const { Agent } = await load("pi-agent-core");
const ai = await load("pi-ai");

const faux = ai.createFauxCore({ tokenSize: { min: 3, max: 3 } });
const model = faux.getModel();
let failNext = false;
const streamFn = (m, context, options) => {
	if (failNext) {
		failNext = false;
		throw new Error("the provider's connection dropped");
	}
	return faux.streamSimple(m, context, options);
};

const schema = { type: "object", properties: { value: { type: "string" } } };
const tools = [
	{
		name: "echo", label: "echo", description: "Echo a value", parameters: schema,
		execute: async (_id, args) => ({ content: [{ type: "text", text: String(args.value) }], details: {} }),
	},
	{
		name: "build", label: "build", description: "Build with progress", parameters: schema,
		execute: async (_id, _args, _signal, onUpdate) => {
			onUpdate?.({ content: [{ type: "text", text: "50%" }], details: {} });
			return { content: [{ type: "text", text: "built" }], details: {} };
		},
	},
	{
		name: "fail", label: "fail", description: "Always throws", parameters: schema,
		execute: async () => { throw new Error("disk full"); },
	},
];

const agent = new Agent({ initialState: { model, tools, systemPrompt: "You are terse." }, streamFn, toolExecution: "parallel" });
// Wall-clock fields vary run to run: timestamps are written as 0 and durations as 1 (present
// where pi put one), so that a rerecording gives the same file. (The faux provider's api name
// carries a random suffix: written as "faux".)
agent.subscribe((event) => {
	const line = JSON.stringify(event, (k, v) => {
		if (k === "timestamp" && typeof v === "number") return 0;
		if (k === "durationMs" && typeof v === "number") return 1;
		if (k === "api" && typeof v === "string" && v.startsWith("faux:")) return "faux";
		return v;
	});
	process.stdout.write(line + "\n");
});

const { fauxAssistantMessage: msg, fauxToolCall: call, fauxText: text } = ai;
faux.setResponses([
	msg([text("Echoing."), call("echo", { value: "hi" }, { id: "e1" })], { stopReason: "toolUse" }),
	msg("It said hi."),
	msg([call("build", {}, { id: "b1" }), call("fail", {}, { id: "f1" })], { stopReason: "toolUse" }),
	msg("The build worked, the other failed."),
	msg("After the failure."),
]);
await agent.prompt("echo hi");
await agent.prompt("build and fail");
failNext = true;
await agent.prompt("this run fails");
await agent.prompt("and this one works");
