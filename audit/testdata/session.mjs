// Writes pi session files from the recorded event streams, with pi-coding-agent's own
// SessionManager, persisting each message_end the way its AgentSession does (user, assistant
// and toolResult messages; system messages are not persisted by AgentSession).
//
// Usage, with pi-coding-agent installed in a scratch directory:
//   (cd /tmp/scratch && npm install @earendil-works/pi-coding-agent)
//   node audit/testdata/session.mjs /tmp/scratch audit/testdata/pi
import { readFileSync, readdirSync, copyFileSync, mkdtempSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { pathToFileURL } from "node:url";

const pkg = join(process.argv[2], "node_modules", "@earendil-works", "pi-coding-agent");
const { SessionManager } = await import(pathToFileURL(join(pkg, "dist", "index.js")).href);
const version = JSON.parse(readFileSync(join(pkg, "package.json"), "utf8")).version;
console.error(`pi-coding-agent ${version}`);

const dir = process.argv[3];
for (const name of readdirSync(dir).filter((f) => f.endsWith(".events.jsonl")).sort()) {
	const scratch = mkdtempSync(join(tmpdir(), "pi-session-"));
	const sm = SessionManager.create("/home/user/project", scratch);
	for (const line of readFileSync(join(dir, name), "utf8").split("\n")) {
		if (!line.trim()) continue;
		const event = JSON.parse(line);
		if (event.type !== "message_end") continue;
		const role = event.message.role;
		if (role === "user" || role === "assistant" || role === "toolResult") sm.appendMessage(event.message);
	}
	const file = sm.getSessionFile();
	try {
		copyFileSync(file, join(dir, name.replace(".events.jsonl", ".session.jsonl")));
	} catch {
		console.error(`${name}: no session file (no assistant message)`);
	}
}
