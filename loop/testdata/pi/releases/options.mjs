// What the stream function's options carry: sessionId and identity, per release.
import { loadPi, scriptedStream, model } from "./lib.mjs";
const [version, cfgJSON] = process.argv.slice(2);
const pi = await loadPi(version);
const log = [];
const config = { model, convertToLlm: (m) => m, ...JSON.parse(cfgJSON ?? "{}") };
await pi.runAgentLoop([{ role: "user", content: "go", timestamp: 0 }], { messages: [], tools: [] }, config, async () => {}, undefined, scriptedStream([{ text: "hi" }], log));
console.log(version, cfgJSON ?? "{}", "->", JSON.stringify(log[0][2]));
