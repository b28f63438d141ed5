package scenarios

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/turnstile-dev/turnstile/loop"
	"github.com/turnstile-dev/turnstile/sim"
)

// topKeys are the keys of a scenario file, in the order the README documents them.
var topKeys = []string{"name", "description", "since", "rules", "features", "tools", "undefinedTools", "context", "config", "hooks",
	"provider", "extraResponse", "toolCalls", "agent", "user", "run", "continue", "runToolCall", "budget", "expect"}

// refs remembers where things are named, for the checks that relate parts of a file.
type refs struct {
	callIDs        map[string]ast.Node // tool-call ids in provider responses
	dupCallIDs     map[string]bool     // ids more than one response uses
	callTools      []named             // tool names called by responses
	toolNames      map[string]ast.Node
	undefinedTools map[string]ast.Node
	toolCallKeys   []named // toolCalls keys
	hookCallIDs    []named // beforeToolCall / afterToolCall keys
	hookIndexes    []indexed
	triggers       []trigger
	contextTools   []named // tool names in hook context changes
	actions        []action
	queueSwitches  []ast.Node // hooks.steering and hooks.followUp keys
	responses      []ast.Node // provider items, in order
	// updates are a behaviour's update items, in order, by updateKey.
	updates map[string][]ast.Node
}

// action is where a user action's parts are, for the checks.
type action struct {
	n                   ast.Node
	a                   sim.UserAction
	at, steer, followUp ast.Node
	// op is the key of the Agent operation; tools and release its value, when it has one.
	op, tools, release ast.Node
}

type named struct {
	name string
	n    ast.Node
}

type indexed struct {
	hook string
	i    int
	n    ast.Node
}

type trigger struct {
	t *sim.Trigger
	n ast.Node
}

// decodeScenario reads a scenario file's root mapping.
func (d *decoder) decodeScenario(root ast.Node, sc *sim.Scenario, file *File, r *refs) {
	ex := &file.Expect
	sawRun := false
	var continueKey, featuresKey, agentKey, runToolCallKey ast.Node
	for _, f := range d.mapping(root, "the scenario", topKeys...) {
		switch f.key {
		case "name":
			sc.Name = d.str(f.value, "name")
		case "description":
			sc.Description = d.str(f.value, "description")
		case "since":
			sc.Since = d.str(f.value, "since")
		case "rules":
			sc.Rules = d.rules(f.value)
		case "features":
			featuresKey = f.keyN
			file.Features = d.features(f.value)
		case "tools":
			sc.Tools = d.tools(f.value, r)
		case "undefinedTools":
			for _, n := range d.sequence(f.value, "undefinedTools", false) {
				r.undefinedTools[d.str(n, "an undefined tool")] = n
			}
		case "context":
			sc.Messages = d.messages(f.value, "context")
		case "config":
			d.config(f.value, sc)
		case "hooks":
			d.hooks(f.value, &sc.Hooks, r)
		case "provider":
			sc.Responses = d.provider(f.value, r)
		case "extraResponse":
			resp := d.response(f.value, "extraResponse", r)
			sc.ExtraResponse = &resp
		case "toolCalls":
			sc.ToolCalls = d.toolCalls(f.value, r)
		case "agent":
			agentKey = f.keyN
			sc.Agent = d.agentScript(f.value)
		case "user":
			for _, n := range d.sequence(f.value, "user", false) {
				sc.User = append(sc.User, d.userAction(n, r))
			}
		case "run":
			sawRun = true
			sc.Prompts = d.messages(f.value, "run")
		case "continue":
			continueKey = f.keyN
			sc.Continue = d.boolean(f.value, "continue")
		case "runToolCall":
			runToolCallKey = f.keyN
			sc.RunToolCall = d.boolean(f.value, "runToolCall")
		case "budget":
			d.budget(f.value, &sc.Budget)
		case "expect":
			d.expect(f.value, ex)
		}
	}
	if sc.Agent != nil && sc.Agent.DefaultModel && sc.Model != sim.DefaultModel {
		d.errorf(agentKey, "agent.defaultModel: true gives the Agent no model; leave config.model out")
	}
	if runToolCallKey != nil {
		d.checkRunToolCall(sc, r, runToolCallKey, agentKey != nil || continueKey != nil || sawRun)
	} else {
		d.checkEntryPoint(sc, r, agentKey, continueKey, sawRun)
	}
	if featuresKey != nil && len(d.errs) == 0 {
		d.checkFeatures(featuresKey, file.Features, sim.NeededFeatures(sc))
	}
}

// checkRunToolCall checks a runToolCall scenario (runToolCall: true, key): no other entry
// point, and tool calls to run in the transcript's last message.
// Its calls count as the calls responses make, for the checks of the names and ids used.
func (d *decoder) checkRunToolCall(sc *sim.Scenario, r *refs, key ast.Node, other bool) {
	switch {
	case !sc.RunToolCall:
		d.errorf(key, "runToolCall: false is the default; leave the key out")
		return
	case other:
		d.errorf(key, "a runToolCall scenario (runToolCall: true) runs the transcript's last tool calls, not run:, continue: or agent:")
		return
	}
	_, calls, err := sim.RunToolCallCalls(sc.Messages)
	if err != nil {
		d.errorf(key, "%s", err)
		return
	}
	for _, tc := range calls {
		if _, dup := r.callIDs[tc.ID]; dup {
			d.errorf(key, "tool-call id %q appears twice in the message runToolCall runs; each outcome names its call by id", tc.ID)
			continue
		}
		r.callIDs[tc.ID] = key
		r.callTools = append(r.callTools, named{tc.Name, key})
	}
}

// checkEntryPoint checks that the scenario starts its runs one way: by run:, continue:, or
// an Agent scenario's user operations (the keys given, nil when not).
func (d *decoder) checkEntryPoint(sc *sim.Scenario, r *refs, agentKey, continueKey ast.Node, sawRun bool) {
	switch {
	case agentKey != nil && (sawRun || continueKey != nil):
		d.errorf(agentKey, "an Agent scenario (agent:) starts its runs by user operations (prompt:, continue: true in user:), not by run: or continue:")
	case agentKey != nil:
		d.checkAgent(sc, r)
	case sawRun && continueKey != nil:
		d.errorf(continueKey, "a scenario either runs prompts (run:) or continues (continue: true), not both")
	case !sawRun && !sc.Continue:
		d.errorAt(1, 1, "the scenario needs an entry point: run: [prompts…], continue: true, or agent: (an Agent scenario)")
	}
	if agentKey == nil {
		for _, a := range r.actions {
			if a.op != nil {
				d.errorf(a.op, "an Agent operation needs an Agent scenario (agent: at the top level)")
			}
		}
	}
}

// tools reads the tools: sequence.
func (d *decoder) tools(n ast.Node, r *refs) []sim.ToolSpec {
	var tools []sim.ToolSpec
	for i, t := range d.sequence(n, "tools", false) {
		tools = append(tools, d.tool(t, i, r))
	}
	return tools
}

// provider reads the provider: sequence of responses.
func (d *decoder) provider(n ast.Node, r *refs) []sim.Response {
	var responses []sim.Response
	for i, resp := range d.sequence(n, "provider", false) {
		responses = append(responses, d.response(resp, "provider["+strconv.Itoa(i)+"]", r))
		r.responses = append(r.responses, resp)
	}
	return responses
}

// toolCalls reads the toolCalls: mapping of call IDs to behaviours.
func (d *decoder) toolCalls(n ast.Node, r *refs) map[string]sim.Behaviour {
	calls := map[string]sim.Behaviour{}
	for _, c := range d.mapping(n, "toolCalls") {
		var updates []ast.Node
		calls[c.key] = d.behaviour(c.value, "toolCalls."+c.key, &updates)
		r.updates[updateKey("", c.key)] = updates
		r.toolCallKeys = append(r.toolCallKeys, named{c.key, c.keyN})
	}
	return calls
}

// budget reads the run's budget: requests, time (virtual ms), entries, bytes.
func (d *decoder) budget(n ast.Node, b *sim.Budget) {
	for _, f := range d.mapping(n, "budget", "requests", "time", "entries", "bytes") {
		what := "budget." + f.key
		before := len(d.errs)
		v := d.integer(f.value, what)
		if len(d.errs) > before {
			continue
		}
		if v <= 0 {
			d.errorf(f.value, "%s must be a positive number", what)
			continue
		}
		switch f.key {
		case "requests":
			b.Requests = int(min(v, 1<<31-1))
		case "time":
			b.Time = v
		case "entries":
			b.Entries = int(min(v, 1<<31-1))
		case "bytes":
			b.Bytes = v
		}
	}
}

func (d *decoder) tool(n ast.Node, i int, r *refs) sim.ToolSpec {
	what := "tools[" + strconv.Itoa(i) + "]"
	var t sim.ToolSpec
	var updates []ast.Node
	defer func() { r.updates[updateKey(t.Name, "")] = updates }()
	for _, f := range d.mapping(n, what, "name", "description", "parameters", "executionMode", "inactive", "prepareArguments", "behaviour") {
		switch f.key {
		case "name":
			t.Name = d.str(f.value, what+".name")
			if prev, dup := r.toolNames[t.Name]; dup && prev != nil {
				d.errorf(f.value, "tool %q is defined twice", t.Name)
			}
			r.toolNames[t.Name] = f.value
		case "description":
			t.Description = d.str(f.value, what+".description")
		case "parameters":
			t.Parameters = d.object(f.value, what+".parameters")
		case "executionMode":
			t.ExecutionMode = loop.ExecutionMode(d.oneOf(f.value, what+".executionMode", "parallel", "sequential"))
		case "inactive":
			t.Inactive = d.boolean(f.value, what+".inactive")
		case "prepareArguments":
			t.PrepareArguments = d.object(f.value, what+".prepareArguments")
		case "behaviour":
			t.Behaviour = d.behaviour(f.value, what+".behaviour", &updates)
		}
	}
	if t.Name == "" {
		d.errorf(n, "%s needs a name", what)
	}
	if t.Parameters == nil {
		t.Parameters = map[string]any{"type": "object"}
	}
	return t
}

// behaviour reads a tool's behaviour; updates receives where each of its updates is.
func (d *decoder) behaviour(n ast.Node, what string, updates *[]ast.Node) sim.Behaviour {
	var b sim.Behaviour
	var resultN, throwN, resolvesN ast.Node
	for _, f := range d.mapping(n, what, "duration", "updates", "result", "throw", "resolves", "onAbort") {
		switch f.key {
		case "duration":
			b.Duration = d.duration(f.value, what+".duration")
		case "updates":
			for _, u := range d.sequence(f.value, what+".updates", false) {
				var up sim.Update
				for _, uf := range d.mapping(u, "an update", "at", "result") {
					switch uf.key {
					case "at":
						up.At = d.duration(uf.value, "an update's at")
					case "result":
						up.Result = d.toolResult(uf.value, "an update's result")
					}
				}
				b.Updates = append(b.Updates, up)
				*updates = append(*updates, u)
			}
		case "result":
			b.Result = d.toolResult(f.value, what+".result")
			resultN = f.keyN
		case "throw":
			b.Throw = d.str(f.value, what+".throw")
			throwN = f.keyN
		case "resolves":
			b.Resolves = d.oneOf(f.value, what+".resolves", "undefined", "null")
			resolvesN = f.keyN
		case "onAbort":
			var a sim.AbortReaction
			var aResultN, aThrowN ast.Node
			for _, af := range d.mapping(f.value, what+".onAbort", "result", "throw") {
				switch af.key {
				case "result":
					a.Result = d.toolResult(af.value, what+".onAbort.result")
					aResultN = af.keyN
				case "throw":
					a.Throw = d.str(af.value, what+".onAbort.throw")
					aThrowN = af.keyN
				}
			}
			if aResultN != nil && aThrowN != nil {
				d.errorf(aThrowN, "%s.onAbort has both result: and throw:; a tool either returns or throws (throw would win and the result would be ignored)", what)
			}
			b.OnAbort = &a
		}
	}
	if resultN != nil && throwN != nil {
		d.errorf(throwN, "%s has both result: and throw:; a tool either returns or throws (throw would win and the result would be ignored)", what)
	}
	if resolvesN != nil && (resultN != nil || throwN != nil) {
		d.errorf(resolvesN, "%s has resolves: beside result: or throw:; a tool resolving undefined or null returns nothing else", what)
	}
	return b
}

// toolResult reads a tool result: content (a string or blocks), details, isError,
// terminate, structuredContent, usage.
func (d *decoder) toolResult(n ast.Node, what string) loop.ToolResult {
	var res loop.ToolResult
	if d.isString(n) {
		res.Content = loop.Text(d.str(n, what))
		return res
	}
	for _, f := range d.mapping(n, what, "content", "details", "isError", "terminate", "structuredContent", "usage") {
		switch f.key {
		case "content":
			if _, null := d.unwrap(f.value).(*ast.NullNode); null {
				res.Content = nil
			} else {
				res.Content = d.blocks(f.value, what+".content")
			}
		case "details":
			res.Details = d.json(f.value, what+".details")
		case "isError":
			res.IsError = d.boolean(f.value, what+".isError")
		case "terminate":
			res.Terminate = d.boolean(f.value, what+".terminate")
		case "structuredContent":
			res.StructuredContent = d.json(f.value, what+".structuredContent")
		case "usage":
			u := d.usage(f.value, what+".usage")
			res.Usage = &u
		}
	}
	return res
}

// blocks reads content blocks: a string is one text block; each item is {text}, {thinking},
// {toolCall}, {image} or a block in pi's JSON form (with type).
func (d *decoder) blocks(n ast.Node, what string) []loop.Block {
	if d.isString(n) {
		return loop.Text(d.str(n, what))
	}
	out := []loop.Block{}
	for i, item := range d.sequence(n, what, false) {
		if b := d.block(item, what+"["+strconv.Itoa(i)+"]"); b != nil {
			out = append(out, b)
		}
	}
	return out
}

func (d *decoder) block(n ast.Node, what string) loop.Block {
	if d.isString(n) {
		return loop.TextContent{Text: d.str(n, what)}
	}
	fields := d.mapping(n, what)
	if len(fields) == 1 {
		f := fields[0]
		switch f.key {
		case "text":
			return loop.TextContent{Text: d.str(f.value, what+".text")}
		case "thinking":
			return loop.ThinkingContent{Thinking: d.str(f.value, what+".thinking")}
		case "toolCall":
			return d.toolCall(f.value, what+".toolCall")
		}
	}
	for _, f := range fields {
		if f.key == "type" {
			raw, _ := json.Marshal(d.json(n, what))
			b, err := loop.DecodeBlock(raw)
			if err != nil {
				d.errorf(n, "%s: %v", what, err)
				return nil
			}
			return b
		}
	}
	d.errorf(n, "%s must be a string, {text: …}, {thinking: …}, {toolCall: {id, name, arguments}} or a block with a type", what)
	return nil
}

func (d *decoder) toolCall(n ast.Node, what string) loop.ToolCall {
	tc := loop.ToolCall{Arguments: map[string]any{}}
	for _, f := range d.mapping(n, what, "id", "name", "arguments", "argumentsError") {
		switch f.key {
		case "id":
			tc.ID = d.str(f.value, what+".id")
		case "name":
			tc.Name = d.str(f.value, what+".name")
		case "arguments":
			if args := d.object(f.value, what+".arguments"); args != nil {
				tc.Arguments = args
			}
		case "argumentsError":
			tc.ArgumentsError = d.str(f.value, what+".argumentsError")
		}
	}
	if tc.ID == "" || tc.Name == "" {
		d.errorf(n, "%s needs an id and a name", what)
	}
	return tc
}

// messages reads a list of messages; a string is a user message, {user: …} and
// {system: …} take text or blocks, anything with a role is a message in pi's JSON form.
func (d *decoder) messages(n ast.Node, what string) []loop.Message {
	out := []loop.Message{}
	for i, item := range d.sequence(n, what, true) {
		if m := d.message(item, what+"["+strconv.Itoa(i)+"]"); m != nil {
			out = append(out, m)
		}
	}
	return out
}

func (d *decoder) message(n ast.Node, what string) loop.Message {
	if d.isString(n) {
		return &loop.UserMessage{Text: d.str(n, what)}
	}
	fields := d.mapping(n, what)
	if len(fields) == 1 && (fields[0].key == "user" || fields[0].key == "system") {
		f := fields[0]
		var text string
		var blocks []loop.Block
		if d.isString(f.value) {
			text = d.str(f.value, what)
		} else {
			blocks = d.blocks(f.value, what+"."+f.key)
		}
		if f.key == "user" {
			return &loop.UserMessage{Text: text, Blocks: blocks}
		}
		return &loop.SystemMessage{Text: text, Blocks: blocks}
	}
	for _, f := range fields {
		if f.key == "role" {
			raw, _ := json.Marshal(d.json(n, what))
			m, err := loop.DecodeMessage(raw)
			if err != nil {
				d.errorf(n, "%s: %v", what, err)
				return nil
			}
			return m
		}
	}
	if fields != nil {
		d.errorf(n, "%s must be a string (a user message), {user: …}, {system: …} or a message with a role", what)
	}
	return nil
}

func (d *decoder) config(n ast.Node, sc *sim.Scenario) {
	var sessionN, identityN ast.Node
	for _, f := range d.mapping(n, "config", "model", "thinkingLevel", "apiKey", "toolExecution", "steeringMode", "followUpMode",
		"streamOptions", "sessionId", "identity") {
		switch f.key {
		case "model":
			m := d.model(f.value, "config.model")
			sc.Model = *m
		case "thinkingLevel":
			sc.ThinkingLevel = d.thinkingLevel(f.value, "config.thinkingLevel")
		case "apiKey":
			sc.APIKey = d.str(f.value, "config.apiKey")
		case "toolExecution":
			sc.ToolExecution = loop.ExecutionMode(d.oneOf(f.value, "config.toolExecution", "parallel", "sequential"))
		case "steeringMode":
			sc.SteeringMode = loop.QueueMode(d.oneOf(f.value, "config.steeringMode", "one-at-a-time", "all"))
		case "followUpMode":
			sc.FollowUpMode = loop.QueueMode(d.oneOf(f.value, "config.followUpMode", "one-at-a-time", "all"))
		case "streamOptions":
			sc.StreamOptions = d.boolean(f.value, "config.streamOptions")
		case "sessionId":
			sc.SessionID = d.str(f.value, "config.sessionId")
			sessionN = f.keyN
		case "identity":
			sc.Identity = d.identity(f.value, "config.identity")
			identityN = f.keyN
		}
	}
	for _, k := range []ast.Node{sessionN, identityN} {
		if k != nil && !sc.StreamOptions {
			d.errorf(k, "config.%s reaches only the stream function's options, which a trace shows with streamOptions: true; add it", strings.TrimSpace(k.String()))
		}
	}
}

// identity reads config.identity: userAgent (short, detailed or {custom}), attribution
// ({name, url, categories} or null), version.
func (d *decoder) identity(n ast.Node, what string) *loop.Identity {
	id := &loop.Identity{}
	for _, f := range d.mapping(n, what, "userAgent", "attribution", "version") {
		switch f.key {
		case "userAgent":
			if d.isString(f.value) {
				id.UserAgent = d.oneOf(f.value, what+".userAgent", "short", "detailed")
				continue
			}
			for _, u := range d.mapping(f.value, what+".userAgent", "custom") {
				id.UserAgent = map[string]any{"custom": d.str(u.value, what+".userAgent.custom")}
			}
		case "attribution":
			if _, null := d.unwrap(f.value).(*ast.NullNode); null {
				id.NoAttribution = true
				continue
			}
			a := &loop.Attribution{}
			for _, af := range d.mapping(f.value, what+".attribution", "name", "url", "categories") {
				switch af.key {
				case "name":
					a.Name = d.str(af.value, what+".attribution.name")
				case "url":
					a.URL = d.str(af.value, what+".attribution.url")
				case "categories":
					a.Categories = []string{}
					for _, c := range d.sequence(af.value, what+".attribution.categories", false) {
						a.Categories = append(a.Categories, d.str(c, what+".attribution.categories[]"))
					}
				}
			}
			id.Attribution = a
		case "version":
			v := d.str(f.value, what+".version")
			id.Version = &v
		}
	}
	return id
}

func (d *decoder) thinkingLevel(n ast.Node, what string) loop.ThinkingLevel {
	return loop.ThinkingLevel(d.oneOf(n, what, "off", "minimal", "low", "medium", "high", "xhigh", "max"))
}

func (d *decoder) model(n ast.Node, what string) *loop.Model {
	m := &loop.Model{}
	for _, f := range d.mapping(n, what, "id", "api", "provider") {
		switch f.key {
		case "id":
			m.ID = d.str(f.value, what+".id")
		case "api":
			m.API = d.str(f.value, what+".api")
		case "provider":
			m.Provider = d.str(f.value, what+".provider")
		}
	}
	return m
}

func (d *decoder) usage(n ast.Node, what string) loop.Usage {
	raw, _ := json.Marshal(d.object(n, what))
	var u loop.Usage
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&u); err != nil {
		d.errorf(n, "%s: %v", what, err)
	}
	return u
}

// response reads one provider response.
func (d *decoder) response(n ast.Node, what string, r *refs) sim.Response {
	var resp sim.Response
	if d.isString(n) {
		resp.Content = loop.Text(d.str(n, what))
		return resp
	}
	var at []ast.Node // where each block of resp.Content is written
	for _, f := range d.mapping(n, what, "text", "content", "stopReason", "errorMessage", "usage", "delay", "chunkDelay",
		"deltaSize", "noStart", "noDone", "openError", "streamError", "ignoresAbort", "errorEvent") {
		switch f.key {
		case "text":
			resp.Content = append(resp.Content, loop.TextContent{Text: d.str(f.value, what+".text")})
			at = append(at, f.value)
		case "content":
			blocks := d.blocks(f.value, what+".content")
			resp.Content = append(resp.Content, blocks...)
			at = append(at, blockNodes(d.sequence(f.value, what+".content", true), f.value, len(blocks))...)
		case "stopReason":
			resp.StopReason = loop.StopReason(d.oneOf(f.value, what+".stopReason", "stop", "length", "toolUse", "error", "aborted"))
		case "errorMessage":
			resp.ErrorMessage = d.str(f.value, what+".errorMessage")
		case "usage":
			u := d.usage(f.value, what+".usage")
			resp.Usage = &u
		case "delay":
			resp.Delay = d.duration(f.value, what+".delay")
		case "chunkDelay":
			resp.ChunkDelay = d.duration(f.value, what+".chunkDelay")
		case "deltaSize":
			resp.DeltaSize = int(d.duration(f.value, what+".deltaSize"))
		case "noStart":
			resp.NoStart = d.boolean(f.value, what+".noStart")
		case "noDone":
			resp.NoDone = d.boolean(f.value, what+".noDone")
		case "openError":
			resp.OpenError = d.str(f.value, what+".openError")
		case "streamError":
			resp.StreamError = d.str(f.value, what+".streamError")
		case "ignoresAbort":
			resp.IgnoresAbort = d.boolean(f.value, what+".ignoresAbort")
		case "errorEvent":
			resp.ErrorEvent = d.boolean(f.value, what+".errorEvent")
		}
	}
	d.noteCalls(resp.Content, at, r)
	return resp
}

// blockNodes is where each of count blocks decoded from a content field is written: the
// field's items when they are as many, else the field itself for each.
func blockNodes(items []ast.Node, field ast.Node, count int) []ast.Node {
	if len(items) == count {
		return items
	}
	return slices.Repeat([]ast.Node{field}, count)
}

// noteCalls remembers the tool calls of a response, each with the node it is written at
// (at, one per block), for the cross-checks. Within one response ids must differ: the calls
// may run at the same time.
func (d *decoder) noteCalls(content []loop.Block, at []ast.Node, r *refs) {
	inResponse := map[string]bool{}
	for i, b := range content {
		tc, ok := b.(loop.ToolCall)
		if !ok {
			continue
		}
		n := at[i]
		if inResponse[tc.ID] {
			d.errorf(n, "tool-call id %q appears twice in one response; calls of a response may run at the same time, so their ids must differ", tc.ID)
		}
		inResponse[tc.ID] = true
		if _, dup := r.callIDs[tc.ID]; dup {
			r.dupCallIDs[tc.ID] = true
			continue
		}
		r.callIDs[tc.ID] = n
		r.callTools = append(r.callTools, named{tc.Name, n})
	}
}

// updateKey names the behaviour whose updates a tool call runs: its own in toolCalls (callID),
// or its tool's (tool).
func updateKey(tool, callID string) string {
	if callID != "" {
		return "call " + callID
	}
	return "tool " + tool
}
