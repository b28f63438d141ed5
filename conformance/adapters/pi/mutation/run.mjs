#!/usr/bin/env node
// Mutation run of the curated suite against pi itself: for each break of mutants.mjs, a copy of
// pi-agent-core 1.6.0's package with the break applied runs the whole suite through the adapter
// (TURNSTILE_PI_PACKAGE), in the adapter mode the break names (adapterArgs). A break the suite
// does not fail on is a survivor: the case it breaks is not pinned. The unbroken copy must pass
// first, in every mode (the run checks its own plumbing).
//
//	node conformance/adapters/pi/mutation/run.mjs [--turnstile bin/turnstile] [--only REGEX]
//
// Exit 0 when every mutant is killed, 1 when one survives, 2 on a usage or setup error.

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { MUTANTS } from "./mutants.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const adapterDir = path.resolve(here, "..");
const pkgDir = path.join(adapterDir, "node_modules", "@earendil-works", "pi-agent-core");

function args(argv) {
	const out = { turnstile: "bin/turnstile", only: "" };
	for (let i = 0; i < argv.length; i++) {
		if (argv[i] === "--turnstile" && i + 1 < argv.length) out.turnstile = argv[++i];
		else if (argv[i] === "--only" && i + 1 < argv.length) out.only = argv[++i];
		else {
			process.stderr.write(`mutation: unknown argument ${JSON.stringify(argv[i])} (usage: run.mjs [--turnstile PATH] [--only REGEX])\n`);
			process.exit(2);
		}
	}
	return out;
}

/** A copy of pi-agent-core with `mutant` applied (none: unbroken), its imports resolving through the adapter's node_modules. */
function mutatedCopy(root, mutant) {
	const dir = fs.mkdtempSync(path.join(root, "m-"));
	fs.cpSync(pkgDir, path.join(dir, "pkg"), { recursive: true });
	fs.symlinkSync(path.join(adapterDir, "node_modules"), path.join(dir, "node_modules"), "dir");
	if (mutant) {
		const file = path.join(dir, "pkg", "dist", mutant.file);
		const text = fs.readFileSync(file, "utf8");
		const count = text.split(mutant.find).length - 1;
		if (count !== (mutant.count ?? 1)) {
			throw new Error(`mutant "${mutant.case}": ${mutant.file} holds its find text ${count} times, not ${mutant.count ?? 1} (pi's dist changed?)`);
		}
		fs.writeFileSync(file, text.split(mutant.find).join(mutant.replace));
	}
	return path.join(dir, "pkg");
}

/** Runs the suite on a copy (the adapter given adapterArgs); returns {code, failed: scenario names}. */
function conform(turnstile, pkg, adapterArgs = []) {
	const impl = ["node", path.join(adapterDir, "adapter.mjs"), ...adapterArgs].join(" ");
	const r = spawnSync(turnstile, ["conform", "--impl", impl, "--jobs", "2"], {
		env: { ...process.env, TURNSTILE_PI_PACKAGE: pkg },
		encoding: "utf8",
		maxBuffer: 256 << 20,
	});
	if (r.error) throw new Error(`running ${turnstile}: ${r.error.message}`);
	const failed = [...r.stdout.matchAll(/^FAIL {2}(\S+?):/gm)].map((m) => m[1]);
	return { code: r.status, failed, tail: r.stdout.trim().split("\n").slice(-1)[0] ?? "" };
}

function main() {
	const opt = args(process.argv.slice(2));
	const root = fs.mkdtempSync(path.join(os.tmpdir(), "turnstile-pi-mutation-"));
	try {
		// every adapter mode a mutant names is checked on the unbroken copy first
		for (const modeArgs of new Set([[], ...MUTANTS.map((m) => m.adapterArgs ?? [])].map((a) => a.join(" ")))) {
			const base = conform(opt.turnstile, mutatedCopy(root), modeArgs ? modeArgs.split(" ") : []);
			if (base.code !== 0) {
				process.stderr.write(`mutation: the unbroken copy of pi does not pass the suite${modeArgs ? ` (adapter ${modeArgs})` : ""} (${base.tail}): fix that first\n`);
				return 2;
			}
		}
		const chosen = MUTANTS.filter((m) => !opt.only || new RegExp(opt.only).test(m.case));
		let survived = 0;
		for (const m of chosen) {
			const r = conform(opt.turnstile, mutatedCopy(root, m), m.adapterArgs);
			if (r.code === 1 && r.failed.length > 0) {
				const mode = m.adapterArgs ? ` (adapter ${m.adapterArgs.join(" ")})` : "";
				process.stdout.write(`killed    ${m.case}${mode}\n          by ${r.failed.slice(0, 4).join(", ")}${r.failed.length > 4 ? `, … (${r.failed.length})` : ""}\n`);
			} else if (r.code === 0) {
				survived++;
				const mode = m.adapterArgs ? ` (adapter ${m.adapterArgs.join(" ")})` : "";
				process.stdout.write(`SURVIVED  ${m.case}${mode}\n          ${m.file}: ${JSON.stringify(m.find)} -> ${JSON.stringify(m.replace)}\n`);
			} else {
				throw new Error(`mutant "${m.case}": conform exited ${r.code} (${r.tail})`);
			}
		}
		process.stdout.write(`${chosen.length - survived} of ${chosen.length} breaks of pi's dist fail the suite; ${survived} survived\n`);
		return survived === 0 ? 0 : 1;
	} finally {
		fs.rmSync(root, { recursive: true, force: true });
	}
}

try {
	process.exit(main());
} catch (err) {
	process.stderr.write(`mutation: ${err.message}\n`);
	process.exit(2);
}
