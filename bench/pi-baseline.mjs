// pi in-process baseline: pi 1.6.0's agent loop with trivial mocks (a stream that answers at
// once, tools that resolve at once), on the same scenario shapes as the Go benchmarks.
// Prints one JSON line per shape: {"shape", "turns", "runs", "seconds", "turnsPerSec",
// "turnsPerCpuSec"} (turns per second of the process's CPU time, user and system: the figure
// that holds on a loaded machine).
//
// Run: npm ci --prefix bench && node bench/pi-baseline.mjs  (BENCH_SECONDS sets the time per shape)
import { runAgentLoop } from "@earendil-works/pi-agent-core";

const model = { id: "faux-1", api: "faux", provider: "faux" };
const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };

// A stream of pi-ai events for one response, built the way the faux provider streams.
function streamOf(content, stopReason, deltas = 1) {
  const message = { role: "assistant", content, api: model.api, provider: model.provider, model: model.id, usage, stopReason, timestamp: Date.now() };
  const events = [];
  const partial = { ...message, content: [], stopReason: "pending" };
  events.push({ type: "start", partial: { ...partial } });
  content.forEach((block, i) => {
    if (block.type === "text") {
      partial.content = [...partial.content, { type: "text", text: "" }];
      events.push({ type: "text_start", contentIndex: i, partial: { ...partial } });
      const size = Math.max(1, Math.ceil(block.text.length / deltas));
      for (let at = 0; at < block.text.length; at += size) {
        const delta = block.text.slice(at, at + size);
        partial.content[i] = { type: "text", text: partial.content[i].text + delta };
        events.push({ type: "text_delta", contentIndex: i, delta, partial: { ...partial } });
      }
      events.push({ type: "text_end", contentIndex: i, content: block.text, partial: { ...partial } });
    } else {
      partial.content = [...partial.content, { ...block, arguments: {} }];
      events.push({ type: "toolcall_start", contentIndex: i, partial: { ...partial } });
      events.push({ type: "toolcall_delta", contentIndex: i, delta: JSON.stringify(block.arguments), partial: { ...partial } });
      partial.content[i] = block;
      events.push({ type: "toolcall_end", contentIndex: i, toolCall: block, partial: { ...partial } });
    }
  });
  events.push({ type: "done", reason: stopReason, message });
  return {
    async *[Symbol.asyncIterator]() { for (const e of events) yield e; },
    result: async () => message,
  };
}

const tool = (name) => ({
  name, label: name, description: "d", parameters: { type: "object" },
  execute: async () => ({ content: [{ type: "text", text: "ok" }], details: {} }),
});

// shapes: each returns {turns, run()}.
const shapes = {
  // 10 turns, each calling 2 tools in parallel, then a final text turn.
  "10x2-parallel-tools": () => {
    let n = 0;
    const streamFn = () => {
      n++;
      if (n <= 10) {
        return streamOf([
          { type: "toolCall", id: `a${n}`, name: "a", arguments: { i: n } },
          { type: "toolCall", id: `b${n}`, name: "b", arguments: { i: n } },
        ], "toolUse");
      }
      return streamOf([{ type: "text", text: "done" }], "stop");
    };
    return { turns: 11, streamFn, tools: [tool("a"), tool("b")] };
  },
  // 100 turns of one tool call each, then a final text turn.
  "100-turns": () => {
    let n = 0;
    const streamFn = () => {
      n++;
      if (n <= 100) return streamOf([{ type: "toolCall", id: `t${n}`, name: "a", arguments: {} }], "toolUse");
      return streamOf([{ type: "text", text: "done" }], "stop");
    };
    return { turns: 101, streamFn, tools: [tool("a")] };
  },
  // One turn streaming 1,000 text deltas.
  "1000-deltas": () => {
    const text = "x".repeat(1000);
    return { turns: 1, streamFn: () => streamOf([{ type: "text", text }], "stop", 1000), tools: [] };
  },
};

async function runOnce(make) {
  const s = make();
  const context = { messages: [], tools: s.tools };
  const config = { model, convertToLlm: (m) => m, getSteeringMessages: async () => [], getFollowUpMessages: async () => [] };
  const prompts = [{ role: "user", content: "go", timestamp: 0 }];
  await runAgentLoop(prompts, context, config, async () => {}, undefined, s.streamFn);
  return s.turns;
}

const seconds = Number(process.env.BENCH_SECONDS ?? "1");
for (const [name, make] of Object.entries(shapes)) {
  for (let i = 0; i < 50; i++) await runOnce(make); // warm up
  let turns = 0, runs = 0;
  const start = performance.now();
  const cpuStart = process.cpuUsage();
  while (performance.now() - start < seconds * 1000) {
    turns += await runOnce(make);
    runs++;
  }
  const elapsed = (performance.now() - start) / 1000;
  const cpu = process.cpuUsage(cpuStart);
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  console.log(JSON.stringify({ shape: name, turns, runs, seconds: elapsed, turnsPerSec: turns / elapsed, turnsPerCpuSec: turns / cpuSeconds }));
}
