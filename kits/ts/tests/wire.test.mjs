import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { Wire } from "../src/wire.mjs";

test("a line longer than the pipe takes, with characters of several bytes, arrives whole through a non-blocking descriptor", async () => {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), "wire-"));
	const out = path.join(dir, "out");
	// A reader that starts late: the pipe fills, writes return short or EAGAIN.
	const reader = spawn("sh", ["-c", `sleep 0.2; cat > ${out}`], { stdio: ["pipe", "ignore", "inherit"] });
	const fd = reader.stdin._handle.fd;
	const msg = { type: "notify", text: "é€𝄞x".repeat(100_000) };
	new Wire(0, fd).send(msg);
	reader.stdin.end();
	await new Promise((resolve) => reader.on("close", resolve));
	const got = fs.readFileSync(out, "utf8");
	fs.rmSync(dir, { recursive: true });
	assert.equal(got, JSON.stringify(msg) + "\n");
});
