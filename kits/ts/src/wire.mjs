// One JSON message per line, read and written synchronously on file descriptors.
//
// Reading is synchronous on purpose: the harness answers every call at once, so a call is a
// plain function call for the loop (write, read the answer, return), as an in-process hook
// that answers immediately. Between deliveries the kit blocks here only once it is idle.

import fs from "node:fs";

/** The harness broke the protocol, or the kit cannot go on; reported as an `error` message. */
export class ProtocolError extends Error {
	constructor(message) {
		super(message);
		this.name = "ProtocolError";
	}
}

/** The adapter or the loop did something the kit cannot serve (reported, exit status 1). */
export class AdapterError extends Error {
	constructor(message) {
		super(message);
		this.name = "AdapterError";
	}
}

/** The harness said `shutdown`, or closed our stdin: exit 0. */
export class Shutdown extends Error {
	constructor() {
		super("shutdown");
		this.name = "Shutdown";
	}
}

const MAX_LINE = 16 * 1024 * 1024;
const nap = new Int32Array(new SharedArrayBuffer(4));
const sleep = (ms) => Atomics.wait(nap, 0, 0, ms); // only when a descriptor is non-blocking

export class Wire {
	constructor(input = 0, output = 1) {
		this.input = input;
		this.output = output;
		this.buf = Buffer.alloc(1 << 16);
		this.len = 0;
		this.scanned = 0;
		this.eof = false;
		this.line = 0; // lines read so far: protocol errors name the line
	}

	/** Writes one message as one line. */
	send(msg) {
		let text;
		try {
			text = JSON.stringify(msg);
		} catch (err) {
			const what = msg?.notification?.data?.type ?? msg?.notification?.kind ?? msg?.call?.kind ?? msg?.type;
			throw new AdapterError(`cannot write a "${msg?.type}" message (${what}) as JSON: ${err.message}`);
		}
		// The line is written as a string (no Buffer made of it first); what a write leaves,
		// if any, as bytes.
		const line = text + "\n";
		let written = 0;
		try {
			written = fs.writeSync(this.output, line);
		} catch (err) {
			if (err.code !== "EAGAIN") throw err;
		}
		const size = Buffer.byteLength(line);
		if (written === size) return;
		const buf = Buffer.from(line);
		let off = written;
		while (off < size) {
			try {
				off += fs.writeSync(this.output, buf, off);
			} catch (err) {
				if (err.code !== "EAGAIN") throw err;
				sleep(1);
			}
		}
	}

	/** The next line without its newline; null at the end of the input. */
	readLine() {
		for (;;) {
			const nl = this.buf.subarray(this.scanned, this.len).indexOf(10);
			if (nl >= 0) {
				const end = this.scanned + nl;
				const line = this.buf.toString("utf8", 0, end).replace(/\r$/, "");
				this.buf.copyWithin(0, end + 1, this.len);
				this.len -= end + 1;
				this.scanned = 0;
				this.line++;
				return line;
			}
			this.scanned = this.len;
			if (this.eof) {
				if (this.len === 0) return null;
				const line = this.buf.toString("utf8", 0, this.len);
				this.len = this.scanned = 0;
				this.line++;
				return line;
			}
			if (this.len > MAX_LINE) throw new ProtocolError(`protocol error at line ${this.line + 1}: the line is longer than the limit of ${MAX_LINE} bytes`);
			if (this.len === this.buf.length) {
				const bigger = Buffer.alloc(this.buf.length * 2);
				this.buf.copy(bigger, 0, 0, this.len);
				this.buf = bigger;
			}
			let n;
			try {
				n = fs.readSync(this.input, this.buf, this.len, this.buf.length - this.len, null);
			} catch (err) {
				if (err.code === "EAGAIN") {
					sleep(1);
					continue;
				}
				if (err.code !== "EOF") throw err;
				n = 0;
			}
			if (n === 0) this.eof = true;
			this.len += n;
		}
	}

	/** The next message; throws Shutdown at `shutdown` or the end of the input. */
	receive() {
		const line = this.readLine();
		if (line === null) throw new Shutdown();
		let msg;
		try {
			msg = JSON.parse(line);
		} catch (err) {
			throw new ProtocolError(`protocol error at line ${this.line}: not JSON: ${err.message}`);
		}
		if (msg === null || typeof msg !== "object" || Array.isArray(msg) || typeof msg.type !== "string") {
			throw new ProtocolError(`protocol error at line ${this.line}: expected an object with a "type"`);
		}
		if (msg.type === "shutdown") throw new Shutdown();
		return msg;
	}
}
