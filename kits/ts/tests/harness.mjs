// A scripted harness for the kit's tests: the lines the harness would send, in order.
//
// The kit reads a line only when the protocol lets the harness speak (after a call, after an
// idle, after stopped), so a whole conversation can be written down in advance and the kit's
// output compared line by line. The kit runs in this process on temporary files.

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Kit } from "../index.mjs";

export const HELLO = { type: "hello", protocol: 1 };
/** A version-2 harness's hello (PROTOCOL.md §13.1). */
export const HELLO2 = { type: "hello", protocol: 1, protocols: [1, 2] };

export function start(session = 1, setup = {}) {
	return { type: "start", session, setup: { model: { id: "m", api: "a", provider: "p" }, hooks: ["getSteeringMessages"], ...setup } };
}

export function answer(id, data = null, error) {
	return error !== undefined ? { type: "answer", id, error } : { type: "answer", id, data };
}

export function deliver(kind, now, target, data, session = 1) {
	const delivery = { kind, now };
	if (target !== undefined) delivery.target = target;
	if (data !== undefined) delivery.data = data;
	return { type: "deliver", session, delivery };
}

export const stop = (session = 1) => ({ type: "stop", session });

/** Runs a Kit on the scripted messages (or raw lines); returns {status, written, logs}. */
export async function converse(run, msgs, options = {}) {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), "turnstile-kit-"));
	const inPath = path.join(dir, "in");
	const outPath = path.join(dir, "out");
	fs.writeFileSync(inPath, msgs.map((m) => (typeof m === "string" ? m : JSON.stringify(m)) + "\n").join(""));
	const input = fs.openSync(inPath, "r");
	const output = fs.openSync(outPath, "w");
	const logs = [];
	const kit = new Kit(run, { name: "test", version: "0", tracks: "1.6.0", hooks: ["getSteeringMessages"], input, output, log: (l) => logs.push(l), ...options });
	let status;
	try {
		status = await kit.serve();
	} finally {
		fs.closeSync(input);
		fs.closeSync(output);
	}
	const written = fs.readFileSync(outPath, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
	fs.rmSync(dir, { recursive: true });
	return { status, written, logs };
}

/** A short text for a written message, for readable comparisons. */
export function brief(msg) {
	switch (msg.type) {
		case "call":
			return `call ${msg.id} ${msg.call.kind}${msg.call.name ? ":" + msg.call.name : ""}`;
		case "notify": {
			const n = msg.notification;
			if (n.kind === "event") return `ev ${n.data.type}${n.data.at !== undefined ? "@" + n.data.at : ""}${n.data.text !== undefined ? " " + n.data.text : ""}`;
			if (n.kind === "outcome") return `outcome ${n.data.id} ${n.data.op} ${n.data.outcome}${n.data.error !== undefined ? " " + n.data.error : ""}`;
			return `end ${JSON.stringify(n.data)}`;
		}
		case "error":
			return `error ${msg.message}`;
		default:
			return msg.type;
	}
}

export const briefs = (written) => written.map(brief);
