// Checks finishturn_test.go: finishTurn's continue and end answers.
import { run, provider, says, calls, call, reply, tool, show, queue, ok, user } from "./lib.mjs";

/**
 * Runs replies with finishTurn answering answers[n] on its n-th call (none past the end).
 * opts.steerAfterTurn1 queues a steering message when the first turn ends (before poll C);
 * opts.followUp pre-queues follow-ups; opts.steerDuringTools queues steering from a tool.
 */
async function scenario(name, replies, answers, opts = {}) {
	const steering = queue();
	const followUp = queue("one-at-a-time", ...(opts.followUp ?? []));
	const seen = [];
	const p = provider(...replies);
	const echo = tool("echo", async () => {
		if (opts.steerDuringTools) steering.items.push(user("steer"));
		return ok("echo ok");
	});
	const stop = tool("stop", async () => ({ ...ok("stop ok"), terminate: true }));
	const r = await run({
		provider: p,
		tools: [echo, stop],
		config: {
			getSteeringMessages: steering.poll,
			getFollowUpMessages: followUp.poll,
			finishTurn: async (turn) => {
				seen.push({
					message: turn.message.stopReason,
					toolResults: turn.toolResults.map((t) => t.toolCallId),
					context: turn.context.messages.map((m) => m.role),
					newMessages: turn.newMessages.map((m) => m.role),
				});
				if (opts.steerAfterTurn1 && seen.length === 1) steering.items.push(user("steer"));
				const a = answers[seen.length - 1];
				return a && { action: a };
			},
		},
	});
	show(`${name}: requests, finishTurn calls, steering polls, follow-up polls, still queued steering/follow-up`, [
		p.requests.length,
		seen.length,
		steering.polls,
		followUp.polls,
		steering.items.length,
		followUp.items.length,
	]);
	show(`${name}: roles`, r.roles);
	return { r, p, seen };
}

{
	const { r, p } = await scenario("continue alone", [says("one"), says("two")], ["continue"]);
	show("continue alone: lines", r.lines);
	show("continue alone: sent roles", p.requests.map((q) => q.roles));
}
await scenario("continue on a tool turn", [calls(call("t1", "echo")), says("two")], ["continue"]);
await scenario("continue with steering", [says("one"), says("two")], ["continue"], { steerAfterTurn1: true });
await scenario("continue with follow-up", [says("one"), says("two")], ["continue"], { followUp: [user("more")] });
await scenario("continue after terminate", [calls(call("t1", "stop")), says("two")], ["continue"]);
await scenario("continue on every turn", [says("1"), says("2"), says("3"), says("4"), says("5")], ["continue", "continue", "continue", "continue", "end"]);
{
	const { r } = await scenario("end", [calls(call("t1", "echo")), says("never")], ["end"], {
		steerDuringTools: true,
		followUp: [user("more")],
	});
	show("end: lines", r.lines);
}
await scenario("continue on aborted", [reply("aborted"), says("never")], ["continue"]);
{
	const { seen } = await scenario("turn context", [calls(call("t1", "echo")), says("two")], []);
	show("turn context: seen", seen);
}
{
	const order = [];
	await run({
		provider: provider(says("one")),
		config: { finishTurn: async () => void order.push("finishTurn") },
		onEvent: (e) => void (e.type === "turn_end" || e.type === "message_end" ? order.push(e.type) : 0),
	});
	show("finishTurn before turn_end", order);
}
