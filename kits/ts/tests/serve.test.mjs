import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { HELLO, deliver, start, stop } from "./harness.mjs";

const adapter = fileURLToPath(new URL("./fixtures/chatty-adapter.mjs", import.meta.url));
const lines = (...msgs) => msgs.map((m) => JSON.stringify(m) + "\n").join("");

test("serve(): stdout carries the protocol only, console and process.stdout go to stderr, exit 0 at shutdown", () => {
	const input = lines(HELLO, start(1, { hooks: [] }), deliver("abort", 5), stop(), { type: "shutdown" });
	const r = spawnSync(process.execPath, [adapter], { input, encoding: "utf8", timeout: 20_000 });
	assert.equal(r.status, 0, r.stderr);
	const out = r.stdout.trim().split("\n");
	assert.equal(out[0], "console.log at load");
	assert.deepEqual(
		out.slice(1).map((l) => JSON.parse(l).type),
		["hello", "idle", "notify", "notify", "idle", "stopped"],
	);
	assert.deepEqual(JSON.parse(out[3]).notification.data, { type: "woke", at: 5 });
	assert.match(r.stderr, /console\.log in the run\nconsole\.info in the run\nprocess\.stdout\.write in the run\n/);
});

test("serve(): the end of stdin is a shutdown; garbage is a protocol error with status 1", () => {
	const eof = spawnSync(process.execPath, [adapter], { input: lines(HELLO), encoding: "utf8", timeout: 20_000 });
	assert.equal(eof.status, 0, eof.stderr);
	const bad = spawnSync(process.execPath, [adapter], { input: "hello?\n", encoding: "utf8", timeout: 20_000 });
	assert.equal(bad.status, 1);
	assert.match(bad.stdout, /{"type":"error","message":"protocol error at line 1: not JSON: /);
});
