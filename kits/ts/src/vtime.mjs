// Virtual time and the kit's own run queue.
//
// The harness owns time: the clocks read the `now` of the latest delivery (0 after `start`) and
// never move by themselves. Timers are the kit's too: a callback the loop schedules with
// setImmediate, or setTimeout / setInterval with a delay under 1 ms, is queued here and run by
// the kit before it reports idle; one with a delay of 1 ms or more waits for virtual time, and
// runs once a delivery moves the clock to its due time (before that delivery is applied).
// Node's real timers never see the loop's callbacks, so the kit always knows what is runnable.

import { createRequire, syncBuiltinESMExports } from "node:module";

const require = createRequire(import.meta.url);

/** The functions the kit replaces, as Node made them. The kit itself uses only these. */
export const real = {
	setTimeout: globalThis.setTimeout,
	clearTimeout: globalThis.clearTimeout,
	setImmediate: globalThis.setImmediate,
	clearImmediate: globalThis.clearImmediate,
	setInterval: globalThis.setInterval,
	clearInterval: globalThis.clearInterval,
	Date: globalThis.Date,
	dateNow: Date.now,
	performanceNow: performance.now.bind(performance),
	hrtime: process.hrtime,
};

/** The virtual clock, in milliseconds. */
export const clock = { ms: 0 };

/** The virtual time in milliseconds: the `now` of the latest delivery, 0 after `start`. */
export function now() {
	return clock.ms;
}

let seq = 0;
const ready = []; // jobs runnable now, first in first out
const delayed = new Set(); // jobs waiting for virtual time
const byId = new Map(); // id -> job, for clearTimeout(Number(timer))

/** A virtual timer or immediate; quacks like Node's Timeout / Immediate objects. */
class Job {
	constructor(fn, args, delay, repeat) {
		this.id = ++seq;
		this.fn = fn;
		this.args = args;
		this.delay = delay;
		this.repeat = repeat;
		this.due = 0;
		this.active = false;
	}
	ref() {
		return this;
	}
	unref() {
		return this;
	}
	hasRef() {
		return true;
	}
	refresh() {
		if (this.active && delayed.has(this)) this.due = clock.ms + this.delay;
		return this;
	}
	close() {
		cancel(this);
		return this;
	}
	[Symbol.toPrimitive]() {
		return this.id;
	}
	[Symbol.dispose]() {
		cancel(this);
	}
}

function checkCallback(fn) {
	if (typeof fn !== "function") {
		const err = new TypeError(`The "callback" argument must be of type function. Received ${fn === null ? "null" : typeof fn}`);
		err.code = "ERR_INVALID_ARG_TYPE";
		throw err;
	}
}

function schedule(job) {
	job.active = true;
	byId.set(job.id, job);
	if (job.delay === 0) ready.push(job);
	else {
		job.due = clock.ms + job.delay;
		delayed.add(job);
	}
	return job;
}

function cancel(job) {
	if (typeof job === "number" || typeof job === "string") job = byId.get(Number(job));
	if (!(job instanceof Job) || !job.active) return;
	job.active = false;
	byId.delete(job.id);
	delayed.delete(job);
	const i = ready.indexOf(job);
	if (i >= 0) ready.splice(i, 1);
}

const delayOf = (ms, repeat) => {
	const d = Number(ms);
	if (d >= 1 && d <= 2147483647) return d;
	return repeat ? 1 : 0; // Node runs a delay under 1 ms (or too large) after 1 ms
};

export function vSetTimeout(fn, ms, ...args) {
	checkCallback(fn);
	return schedule(new Job(fn, args, delayOf(ms, false), false));
}

export function vSetInterval(fn, ms, ...args) {
	checkCallback(fn);
	return schedule(new Job(fn, args, delayOf(ms, true), true));
}

export function vSetImmediate(fn, ...args) {
	checkCallback(fn);
	return schedule(new Job(fn, args, 0, false));
}

/** Clears a virtual timer, or hands a real one (made before install) to Node. */
function clearer(realClear) {
	return (t) => {
		if (t instanceof Job || typeof t === "number" || typeof t === "string") cancel(t);
		else if (t != null) realClear(t);
	};
}

/** The next runnable job, or null: queued ones first, then the earliest due by the clock. */
export function takeRunnable() {
	let job = ready.shift();
	if (!job) {
		for (const j of delayed) {
			if (j.due <= clock.ms && (!job || j.due < job.due || (j.due === job.due && j.id < job.id))) job = j;
		}
		if (!job) return null;
		if (job.repeat) job.due += job.delay;
		else delayed.delete(job);
	}
	if (!job.repeat) {
		job.active = false;
		byId.delete(job.id);
	}
	return job;
}

/** Runs a job as Node runs a timer: `this` is the timer; a throw is the caller's to report. */
export function runJob(job) {
	job.fn.apply(job, job.args);
}

/** Whether a job is runnable now. */
export function hasRunnable() {
	if (ready.length > 0) return true;
	for (const j of delayed) if (j.due <= clock.ms) return true;
	return false;
}

/** Forgets every job: timers do not outlive the session that made them. */
export function discardJobs() {
	for (const j of [...ready, ...delayed]) j.active = false;
	ready.length = 0;
	delayed.clear();
	byId.clear();
}

/** The number of jobs queued or waiting, for tests. */
export function pendingJobs() {
	return ready.length + delayed.size;
}

let installed = false;

/**
 * Makes the process's clocks and timers virtual: Date.now, `new Date()`, Date(), performance.now,
 * process.hrtime (and .bigint) read the virtual clock; setTimeout, setInterval, setImmediate and
 * their clear functions (global, `node:timers`, and setTimeout / setImmediate of
 * `node:timers/promises`) schedule on the kit's queue. serve() calls it; call it yourself only
 * if your loop captures a clock or a timer function before serve() runs. Idempotent.
 */
export function installVirtualTime() {
	if (installed) return;
	installed = true;
	const RealDate = real.Date;
	RealDate.now = now; // also for code that kept a reference to Date
	globalThis.Date = new Proxy(RealDate, {
		construct: (target, args, newTarget) => Reflect.construct(target, args.length === 0 ? [clock.ms] : args, newTarget),
		apply: () => new RealDate(clock.ms).toString(),
	});
	performance.now = now;
	const ns = () => BigInt(Math.round(clock.ms * 1e6));
	const hrtime = (prev) => {
		const t = ns();
		let s = Number(t / 1000000000n);
		let n = Number(t % 1000000000n);
		if (Array.isArray(prev)) {
			s -= prev[0];
			n -= prev[1];
			if (n < 0) {
				s--;
				n += 1e9;
			}
		}
		return [s, n];
	};
	hrtime.bigint = ns;
	process.hrtime = hrtime;

	const fns = {
		setTimeout: vSetTimeout,
		setInterval: vSetInterval,
		setImmediate: vSetImmediate,
		clearTimeout: clearer(real.clearTimeout),
		clearInterval: clearer(real.clearInterval),
		clearImmediate: clearer(real.clearImmediate),
	};
	const timers = require("node:timers");
	for (const [name, fn] of Object.entries(fns)) {
		globalThis[name] = fn;
		timers[name] = fn;
	}
	const promises = require("node:timers/promises");
	promises.setTimeout = (ms, value, options) => promised((resolve) => vSetTimeout(() => resolve(value), ms), options);
	promises.setImmediate = (value, options) => promised((resolve) => vSetImmediate(() => resolve(value)), options);
	syncBuiltinESMExports();
}

/** A promise a virtual job settles, rejected with the signal's AbortError when it aborts. */
function promised(start, options) {
	const signal = options?.signal;
	if (signal?.aborted) return Promise.reject(abortError(signal));
	return new Promise((resolve, reject) => {
		let job = null;
		const onAbort = () => {
			cancel(job);
			reject(abortError(signal));
		};
		job = start((v) => {
			signal?.removeEventListener("abort", onAbort);
			resolve(v);
		});
		signal?.addEventListener("abort", onAbort, { once: true });
	});
}

function abortError(signal) {
	const err = new Error("The operation was aborted", { cause: signal.reason });
	err.name = "AbortError";
	err.code = "ABORT_ERR";
	return err;
}
