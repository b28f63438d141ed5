// The turnstile adapter of loop.ts, on the TypeScript kit (turnstile-kit). Run it with tsx:
//   turnstile conform --impl "node --import tsx examples/six-duties/adapter.ts"
import { serve } from "turnstile-kit";
import type { Session, ToolSpec } from "turnstile-kit";
import { runLoop, type Message, type Response, type Tool } from "./loop.ts";

// The loop has the two queues and no other hook; it has no custom roles, no prepareArguments.
const HOOKS = ["getSteeringMessages", "getFollowUpMessages"];
const LACKS = ["customMessages", "prepareArguments", "argumentMutation", "throwingHooks", "structuredContent"];

function run(s: Session): Promise<Message[]> {
	const setup = s.setup;
	const toolOf = (t: ToolSpec): Tool => ({
		name: t.name,
		description: t.description ?? "",
		parameters: (t.parameters ?? {}) as Tool["parameters"],
		sequential: t.executionMode === "sequential",
		run: (callId, args, progress) => s.runTool(callId, t.name, args, progress),
	});
	const tools = (setup.tools ?? []).filter((t) => setup.activeTools?.includes(t.name)).map(toolOf);
	// The protocol's stream call carries the transcript, not a tool list: the tools this loop
	// gives beside it are not seen by the harness.
	const ask = ({ messages }: { messages: Message[] }): Response =>
		s.openStream({ model: setup.model, messages, thinkingLevel: setup.thinkingLevel ?? "off", apiKey: setup.apiKey ?? "" });
	const queue = (hook: string) => (s.installed(hook) ? () => (s.hook(hook, {}).messages ?? []) as Message[] : undefined);
	return runLoop([...(setup.messages ?? [])], setup.entry === "continue" ? [] : setup.prompts ?? [], {
		tools,
		ask,
		emit: (event) => s.emit(event),
		sequential: setup.toolExecution === "sequential",
		steering: queue("getSteeringMessages"),
		followUps: queue("getFollowUpMessages"),
		signal: s.signal,
	});
}

serve(run, { name: "six-duties", version: "0.1.0", tracks: "1.6.0", hooks: HOOKS, lacks: LACKS });
