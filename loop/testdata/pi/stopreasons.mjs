// Checks stopreasons_test.go: content decides whether tools run; error/aborted end the run.
import { run, provider, says, calls, call, reply, text, tool, show, queue } from "./lib.mjs";

{
	const log = [];
	const p = provider(reply("stop", text("running it"), call("t1", "echo")), says("done"));
	const r = await run({ provider: p, tools: [tool("echo", undefined, {}, log)] });
	show("stop with call lines", r.lines);
	show("stop with call executed/requests", [log, p.requests.length]);
}
{
	const p = provider(reply("toolUse", text("no call after all")));
	const r = await run({ provider: p, tools: [tool("echo")] });
	show("toolUse without call lines", r.lines);
	show("toolUse without call requests", p.requests.length);
}
for (const stop of ["error", "aborted"]) {
	const log = [];
	const steering = queue("one-at-a-time", { role: "user", content: "steer", timestamp: 0 });
	const followUp = queue("one-at-a-time", { role: "user", content: "more", timestamp: 0 });
	let finishCalls = 0;
	let finishSaw;
	const p = provider({ ...reply(stop, call("t1", "echo")), errorMessage: "boom" }, says("never"));
	const r = await run({
		provider: p,
		tools: [tool("echo", undefined, {}, log)],
		config: {
			getSteeringMessages: steering.poll,
			getFollowUpMessages: followUp.poll,
			finishTurn: (turn) => {
				finishCalls++;
				finishSaw = turn.toolResults.length;
				return { action: "continue" };
			},
		},
	});
	show(`${stop} lines`, r.lines);
	show(`${stop} roles/requests/executed`, [r.roles, p.requests.length, log]);
	show(`${stop} finishTurn calls/toolResults, steering polls, follow-up polls, queued`, [finishCalls, finishSaw, steering.polls, followUp.polls, steering.items.length]);
	const turnEnd = r.events.find((e) => e.type === "turn_end");
	show(`${stop} turn_end toolResults`, turnEnd.toolResults);
}
{
	const log = [];
	const p = provider({ message: reply("stop", call("t1", "echo")), opts: { terminal: "error" } }, says("done"));
	const r = await run({ provider: p, tools: [tool("echo", undefined, {}, log)] });
	show("error event with stop message lines", r.lines);
	show("error event with stop message executed/requests", [log, p.requests.length]);
}
{
	const followUp = queue();
	const p = provider(reply("length", text("cut off")));
	const r = await run({ provider: p, config: { getFollowUpMessages: followUp.poll } });
	show("length without calls lines", r.lines);
	show("length without calls follow-up polls", followUp.polls);
}
