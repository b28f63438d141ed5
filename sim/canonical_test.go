package sim

import "testing"

// TestCanonical pins the canonical form: sorted keys, no space, encoding/json's string
// escaping, JavaScript's number formatting — so Go and JavaScript producers agree.
func TestCanonical(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{"b":1,"a":[true,null,{"d":"x","c":2}]}`, `{"a":[true,null,{"c":2,"d":"x"}],"b":1}`},
		{` { "a" : 1 } `, `{"a":1}`},
		{`{"a":1,"a":2}`, `{"a":2}`},
		{`1e-7`, `1e-7`},
		{`1e-07`, `1e-7`},
		{`0.000001`, `0.000001`},
		{`1e21`, `1e+21`},
		{`1e+21`, `1e+21`},
		{`123456789012345680000`, `123456789012345680000`},
		{`42.0`, `42`},
		{`-0`, `0`},
		{`0.30000000000000004`, `0.30000000000000004`},
		{`"a<b>&"`, `"a\u003cb\u003e\u0026"`},
		{`"\u00e9t\u00e9"`, `"été"`},
		{`"été"`, `"été"`},
		{`"tab\there"`, `"tab\there"`},
		{`[]`, `[]`},
		{`{}`, `{}`},
		{`{"x":`, `"{\"x\":"`},
		{`nul`, `"nul"`},
		{`[1,]`, `"[1,]"`},
	}
	for _, c := range cases {
		if got := string(Canonical([]byte(c.in))); got != c.want {
			t.Errorf("Canonical(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}
