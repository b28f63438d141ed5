package trace

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// Difference is the first place where two decoded JSON values differ.
type Difference struct {
	// Path is where, as "result.content[0].text"; "" is the whole value.
	Path string
	// Want and Got are the values there; WantAbsent and GotAbsent say that an object lacks
	// the member. Two arrays of different lengths whose common items agree are given whole.
	Want, Got             any
	WantAbsent, GotAbsent bool
}

// FirstDifference walks two decoded JSON values (objects member by member in the order of
// CompareMembers, arrays item by item) and returns where they first differ; ok is false when
// they are equal. equal decides leaves and whole subtrees; nil means reflect.DeepEqual.
func FirstDifference(want, got any, equal func(a, b any) bool) (d Difference, ok bool) {
	if equal == nil {
		equal = reflect.DeepEqual
	}
	if equal(want, got) {
		return Difference{}, false
	}
	return firstDifference(want, got, "", equal), true
}

// identityMembers are the members that say which thing an object is, rather than what it
// holds: when two objects differ in one of them (a tool result for another call, a message
// of another role), that is the difference to show, not the content that follows from it.
var identityMembers = []string{"role", "type", "toolCallId", "id", "toolName", "name"}

// IdentityMembers are the members that name an object rather than describe it, in the order
// CompareMembers puts them first.
func IdentityMembers() []string { return slices.Clone(identityMembers) }

// CompareMembers orders the members of an object as differences are looked for and shown:
// identity members first (role, type, toolCallId, id, toolName, name), then by key.
func CompareMembers(a, b string) int {
	if ia, ib := identityRank(a), identityRank(b); ia != ib {
		return ia - ib
	}
	return strings.Compare(a, b)
}

// identityRank orders identity members before the others (which all rank alike).
func identityRank(k string) int {
	if i := slices.Index(identityMembers, k); i >= 0 {
		return i
	}
	return len(identityMembers)
}

func firstDifference(want, got any, path string, equal func(a, b any) bool) Difference {
	wm, wok := want.(map[string]any)
	gm, gok := got.(map[string]any)
	if wok && gok {
		keys := make([]string, 0, len(wm)+len(gm))
		for k := range wm {
			keys = append(keys, k)
		}
		for k := range gm {
			if _, dup := wm[k]; !dup {
				keys = append(keys, k)
			}
		}
		slices.SortFunc(keys, CompareMembers)
		for _, k := range keys {
			wv, win := wm[k]
			gv, gin := gm[k]
			sub := k
			if path != "" {
				sub = path + "." + k
			}
			if win != gin {
				return Difference{Path: sub, Want: wv, Got: gv, WantAbsent: !win, GotAbsent: !gin}
			}
			if !equal(wv, gv) {
				return firstDifference(wv, gv, sub, equal)
			}
		}
		return Difference{Path: path, Want: want, Got: got}
	}
	wa, wok := want.([]any)
	ga, gok := got.([]any)
	if wok && gok {
		for i := range min(len(wa), len(ga)) {
			if !equal(wa[i], ga[i]) {
				return firstDifference(wa[i], ga[i], fmt.Sprintf("%s[%d]", path, i), equal)
			}
		}
	}
	return Difference{Path: path, Want: want, Got: got}
}
