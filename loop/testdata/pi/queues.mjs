// Checks queues_test.go: steering polls A/B/C, follow-up polls, queue modes.
import { core, run, provider, says, calls, call, tool, show, user, queue, model } from "./lib.mjs";

async function counted(name, replies, { steering = [], followUp = [], steeringMode, followUpMode, steerDuringTools, withTools = true } = {}) {
	const s = queue(steeringMode, ...steering);
	const f = queue(followUpMode, ...followUp);
	const p = provider(...replies);
	const echo = tool("echo", async () => {
		if (steerDuringTools) s.items.push(user("steer"));
		return { content: [{ type: "text", text: "echo ok" }], details: {} };
	});
	const r = await run({ provider: p, tools: withTools ? [echo] : [], config: { getSteeringMessages: s.poll, getFollowUpMessages: f.poll } });
	show(`${name}: steering polls, follow-up polls, requests`, [s.polls, f.polls, p.requests.length]);
	show(`${name}: roles`, r.roles);
	return { r, p };
}

await counted("text-only", [says("a")], { withTools: false });
await counted("tool turn", [calls(call("t1", "echo")), says("done")]);
await counted("follow-up batch of 2 (all)", [says("a"), says("b")], { followUp: [user("f1"), user("f2")], followUpMode: "all", withTools: false });
await counted("follow-ups one at a time", [says("a"), says("b"), says("c")], { followUp: [user("f1"), user("f2")] });
{
	const { r } = await counted("follow-up waits for tools", [calls(call("t1", "echo")), says("b"), says("c")], { followUp: [user("f1")] });
	show("follow-up waits for tools: lines", r.lines);
}
{
	const { p } = await counted("steering during tools", [calls(call("t1", "echo")), says("b")], { steerDuringTools: true });
	show("steering during tools: second request", p.requests[1].roles);
}
await counted("steering before the run, one at a time", [says("a"), says("b")], { steering: [user("s1"), user("s2")] });
await counted("steering before the run, all", [says("a")], { steering: [user("s1"), user("s2")], steeringMode: "all" });

// pi's Agent and its PendingMessageQueue.
async function agentRun(name, setup) {
	const p = provider(says("a"), says("b"), says("c"), says("d"));
	const agent = new core.Agent({ initialState: { model, tools: [] }, streamFn: p.streamFn });
	setup(agent);
	await agent.prompt("hi");
	show(`agent ${name}: texts`, agent.state.messages.map((m) => (m.role === "user" ? m.content[0]?.text ?? m.content : m.content[0].text)));
	show(`agent ${name}: still queued`, agent.hasQueuedMessages());
}
await agentRun("steer one-at-a-time", (a) => (a.steer(user("s1")), a.steer(user("s2"))));
await agentRun("steer all", (a) => ((a.steeringMode = "all"), a.steer(user("s1")), a.steer(user("s2"))));
await agentRun("follow-up one-at-a-time", (a) => (a.followUp(user("f1")), a.followUp(user("f2"))));
await agentRun("follow-up all", (a) => ((a.followUpMode = "all"), a.followUp(user("f1")), a.followUp(user("f2"))));
await agentRun("cleared", (a) => (a.steer(user("s1")), a.followUp(user("f1")), a.clearAllQueues()));
await agentRun("mode switched to all", (a) => (a.followUp(user("f1")), a.followUp(user("f2")), a.followUp(user("f3")), (a.followUpMode = "all")));
