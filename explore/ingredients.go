package explore

import (
	"cmp"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/turnstile-dev/turnstile/scenarios"
	"github.com/turnstile-dev/turnstile/sim"
)

// An ingredient is one thing a scenario gives the loop that a loop can mishandle on its own: a
// field of a hook's answers (prepareRequest answering a context), a tool's setting (an
// executionMode) or the configuration's (toolExecution), a hook installed, steering or
// follow-up messages. Shrinking drops whole answers and hooks; an ingredient is finer, and is
// what one defect behind several causes has in common: each cause's minimal scenario passes
// once it is taken away (Failure.PassesWithout).
type ingredient struct {
	name string
	drop edit
}

// ingredients lists what sc gives the loop, the finest first: the fields of hooks' answers,
// then the tools' settings and the configuration, then the hooks, then the user's messages.
func ingredients(sc *sim.Scenario) []ingredient {
	return slices.Concat(hookAnswerFields(sc.Hooks), settings(sc), hookIngredients(sc.Hooks), userMessages(sc))
}

// settings are the tools' settings, then the configuration's. A tool's setting is one
// ingredient over every tool that has it: a defect in how a loop reads it is the same
// whichever tool the scenario put it on.
func settings(sc *sim.Scenario) []ingredient {
	var out []ingredient
	setting := func(present bool, name string, drop edit) {
		if present {
			out = append(out, ingredient{name, drop})
		}
	}
	anyTool := func(has func(sim.ToolSpec) bool) bool { return slices.ContainsFunc(sc.Tools, has) }
	eachTool := func(clear func(*sim.ToolSpec)) edit {
		return func(s *sim.Scenario) {
			for i := range s.Tools {
				clear(&s.Tools[i])
			}
		}
	}
	setting(anyTool(func(t sim.ToolSpec) bool { return t.ExecutionMode != "" }), "a tool's executionMode",
		eachTool(func(t *sim.ToolSpec) { t.ExecutionMode = "" }))
	setting(anyTool(func(t sim.ToolSpec) bool { return t.PrepareArguments != nil }), "a tool's prepareArguments",
		eachTool(func(t *sim.ToolSpec) { t.PrepareArguments = nil }))
	setting(anyTool(func(t sim.ToolSpec) bool { return t.Inactive }), "inactive tools",
		eachTool(func(t *sim.ToolSpec) { t.Inactive = false }))
	setting(anyTool(func(t sim.ToolSpec) bool { return len(t.Parameters) > 1 }), "a tool's parameters schema",
		eachTool(func(t *sim.ToolSpec) { t.Parameters = map[string]any{"type": "object"} }))
	setting(sc.ToolExecution != "", "toolExecution "+string(sc.ToolExecution), func(s *sim.Scenario) { s.ToolExecution = "" })
	setting(sc.SteeringMode != "", "steeringMode "+string(sc.SteeringMode), func(s *sim.Scenario) { s.SteeringMode = "" })
	setting(sc.FollowUpMode != "", "followUpMode "+string(sc.FollowUpMode), func(s *sim.Scenario) { s.FollowUpMode = "" })
	setting(sc.ThinkingLevel != "", "thinkingLevel "+string(sc.ThinkingLevel), func(s *sim.Scenario) { s.ThinkingLevel = "" })
	setting(sc.APIKey != "", "an apiKey", func(s *sim.Scenario) { s.APIKey = "" })
	return out
}

// hookAnswerFields are the fields the installed hooks' answers set.
func hookAnswerFields(h sim.Hooks) []ingredient {
	var fields []ingredient
	if p := h.PrepareRequest; p != nil {
		fields = append(fields, keyedFields("prepareRequest", p.Default, p.ByCall, func(s *sim.Scenario) (*sim.PrepareAnswer, map[int]sim.PrepareAnswer) {
			return &s.Hooks.PrepareRequest.Default, s.Hooks.PrepareRequest.ByCall
		})...)
	}
	if p := h.PrepareNextTurn; p != nil {
		fields = append(fields, keyedFields("prepareNextTurn", p.Default, p.ByCall, func(s *sim.Scenario) (*sim.PrepareAnswer, map[int]sim.PrepareAnswer) {
			return &s.Hooks.PrepareNextTurn.Default, s.Hooks.PrepareNextTurn.ByCall
		})...)
	}
	if f := h.FinishTurn; f != nil {
		fields = append(fields, keyedFields("finishTurn", f.Default, f.ByCall, func(s *sim.Scenario) (*sim.FinishAnswer, map[int]sim.FinishAnswer) {
			return &s.Hooks.FinishTurn.Default, s.Hooks.FinishTurn.ByCall
		})...)
	}
	if b := h.BeforeToolCall; b != nil {
		fields = append(fields, keyedFields("beforeToolCall", b.Default, b.ByToolCall, func(s *sim.Scenario) (*sim.BeforeAnswer, map[string]sim.BeforeAnswer) {
			return &s.Hooks.BeforeToolCall.Default, s.Hooks.BeforeToolCall.ByToolCall
		})...)
	}
	if a := h.AfterToolCall; a != nil {
		fields = append(fields, keyedFields("afterToolCall", a.Default, a.ByToolCall, func(s *sim.Scenario) (*sim.AfterAnswer, map[string]sim.AfterAnswer) {
			return &s.Hooks.AfterToolCall.Default, s.Hooks.AfterToolCall.ByToolCall
		})...)
	}
	return fields
}

// hookIngredients are the hooks installed.
func hookIngredients(h sim.Hooks) []ingredient {
	var hooks []ingredient
	hook := func(installed bool, name string, drop edit) {
		if installed {
			hooks = append(hooks, ingredient{"the " + name + " hook", drop})
		}
	}
	hook(h.PrepareRequest != nil, "prepareRequest", func(s *sim.Scenario) { s.Hooks.PrepareRequest = nil })
	hook(h.PrepareNextTurn != nil, "prepareNextTurn", func(s *sim.Scenario) { s.Hooks.PrepareNextTurn = nil })
	hook(h.FinishTurn != nil, "finishTurn", func(s *sim.Scenario) { s.Hooks.FinishTurn = nil })
	hook(h.BeforeToolCall != nil, "beforeToolCall", func(s *sim.Scenario) { s.Hooks.BeforeToolCall = nil })
	hook(h.AfterToolCall != nil, "afterToolCall", func(s *sim.Scenario) { s.Hooks.AfterToolCall = nil })
	hook(h.TransformContext != nil, "transformContext", func(s *sim.Scenario) { s.Hooks.TransformContext = nil })
	hook(h.ConvertToLLM != nil, "convertToLlm", func(s *sim.Scenario) { s.Hooks.ConvertToLLM = nil })
	hook(h.GetAPIKey != nil, "getApiKey", func(s *sim.Scenario) { s.Hooks.GetAPIKey = nil })
	return hooks
}

// userMessages are the user's steering and follow-up messages.
func userMessages(sc *sim.Scenario) []ingredient {
	var user []ingredient
	if slices.ContainsFunc(sc.User, func(a sim.UserAction) bool { return len(a.Steer) > 0 }) {
		user = append(user, ingredient{"steering messages", func(s *sim.Scenario) {
			for i := range s.User {
				s.User[i].Steer = nil
			}
		}})
	}
	if slices.ContainsFunc(sc.User, func(a sim.UserAction) bool { return len(a.FollowUp) > 0 }) {
		user = append(user, ingredient{"follow-up messages", func(s *sim.Scenario) {
			for i := range s.User {
				s.User[i].FollowUp = nil
			}
		}})
	}
	return user
}

// keyedFields is an ingredient for each field that one of a hook's answers sets (its default
// and those by call or by tool call): the edit clears it in all of them, which of gives in a
// scenario.
func keyedFields[K cmp.Ordered, T any](hook string, def T, byKey map[K]T, of func(*sim.Scenario) (*T, map[K]T)) []ingredient {
	answers := []T{def}
	for _, k := range slices.Sorted(maps.Keys(byKey)) {
		answers = append(answers, byKey[k])
	}
	return answerFields(hook, answers, func(sc *sim.Scenario, clear func(*T)) {
		d, m := of(sc)
		clear(d)
		for k, a := range m {
			clear(&a)
			m[k] = a
		}
	})
}

// answerFields is an ingredient for each field of T that one of answers sets, named as the
// scenario files name it ("prepareRequest answering context"); each clears the field in every
// answer through each.
func answerFields[T any](hook string, answers []T, each func(*sim.Scenario, func(*T))) []ingredient {
	var out []ingredient
	t := reflect.TypeFor[T]()
	for i := range t.NumField() {
		if !slices.ContainsFunc(answers, func(a T) bool { return !reflect.ValueOf(a).Field(i).IsZero() }) {
			continue
		}
		out = append(out, ingredient{hook + " answering " + lowerFirst(t.Field(i).Name), func(sc *sim.Scenario) {
			each(sc, func(a *T) { reflect.ValueOf(a).Elem().Field(i).SetZero() })
		}})
	}
	return out
}

func lowerFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToLower(r)) + s[n:]
}

// passesWithout names the ingredients of sc (the minimal scenario of a cause) without
// which the implementation passes: each taken away alone, the run shows nothing wrong.
func (x *explorer) passesWithout(sc *sim.Scenario) []string {
	file, err := scenarios.Write(sc)
	if err != nil {
		return nil
	}
	var out []string
	for _, in := range ingredients(sc) {
		cand, err := parseScenario(file)
		if err != nil {
			return out
		}
		in.drop(cand)
		normalize(cand)
		if p, ignored := x.check(cand); p == nil && !ignored {
			out = append(out, in.name)
		}
	}
	return out
}

// commonIngredients groups the causes (by their index in fs) whose first ingredient
// (Failure.PassesWithout, the finest) is the same, for each ingredient two or more causes
// share, in the order of the first cause of each.
func commonIngredients(fs []*Failure) (names []string, causes [][]int) {
	at := map[string]int{}
	for k, f := range fs {
		if len(f.PassesWithout) == 0 {
			continue
		}
		name := f.PassesWithout[0]
		if i, ok := at[name]; ok {
			causes[i] = append(causes[i], k)
			continue
		}
		at[name] = len(names)
		names = append(names, name)
		causes = append(causes, []int{k})
	}
	var keepNames []string
	var keep [][]int
	for i, cs := range causes {
		if len(cs) > 1 {
			keepNames, keep = append(keepNames, names[i]), append(keep, cs)
		}
	}
	return keepNames, keep
}

// causeList is "causes 1, 2 and 5" of the causes at indexes ks (counted from 1).
func causeList(ks []int) string {
	var parts []string
	for _, k := range ks {
		parts = append(parts, strconv.Itoa(k+1))
	}
	if len(parts) == 1 {
		return "cause " + parts[0]
	}
	return "causes " + strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}
