package argschema

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/dlclark/regexp2"
)

// matchTimeout bounds one match of a schema's pattern, so a catastrophically backtracking pattern cannot stall the
// agent loop (JavaScript would hang); a timed-out match counts as no match.
const matchTimeout = 2 * time.Second

// init starts regexp2's timeout clock for the life of the process. The clock is a goroutine that
// the first timed match starts; started by a match inside a testing/synctest bubble (porttest.Test
// runs the reference there, and a curated scenario's schema has a pattern), it would belong to
// that bubble and outlive it, which synctest reports as a deadlock.
func init() {
	re := regexp2.MustCompile("a", regexp2.None)
	re.MatchTimeout = 100 * 365 * 24 * time.Hour
	_, _ = re.MatchString("a")
}

// jsRegexp is an ECMAScript regular expression, as pi-schema's sharedRegex builds one: with the `u` flag, or
// without it when the source is invalid with it. Matching is regexp2's ECMAScript mode (JavaScript's \d, \w, \s, `$`
// and lookaround); whether a source is valid with the `u` flag is decided by parseUnicodePattern, which follows
// ECMAScript's grammar, since regexp2 accepts much that V8 rejects.
type jsRegexp struct {
	re *regexp2.Regexp
}

func compileJSRegexp(source string) (*jsRegexp, error) {
	var re *regexp2.Regexp
	var err error
	if translated, ok := parseUnicodePattern(source); ok {
		// Valid with the u flag: JavaScript compiles it so, and a failure here is this port's gap (a Unicode property
		// missing from Go's tables), reported rather than matched differently.
		if re, err = regexp2.Compile(translated, regexp2.ECMAScript|regexp2.Unicode); err != nil {
			return nil, fmt.Errorf("regular expression /%s/ is not supported: %v", source, err)
		}
	} else {
		var legacy string
		if legacy, err = legacyPattern(source); err == nil {
			re, err = regexp2.Compile(legacy, regexp2.ECMAScript)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("invalid regular expression /%s/: %v", source, err)
	}
	re.MatchTimeout = matchTimeout
	return &jsRegexp{re: re}, nil
}

// test is RegExp.prototype.test for a regular expression without the `g` flag.
func (r *jsRegexp) test(s string) bool {
	ok, err := r.re.MatchString(s)
	return err == nil && ok
}

// legacyPattern prepares a source that is invalid with the `u` flag for regexp2, as JavaScript reads it without
// the flag (Annex B): an escaped letter that JavaScript does not know is the letter itself (regexp2 reads \A, \Z,
// \z, \G, \p, \P, \e and \a as .NET does), and a group is one of JavaScript's (regexp2 also takes .NET's inline
// options, comments and atomic groups).
func legacyPattern(source string) (string, error) {
	var b strings.Builder
	src := []rune(source)
	inClass := false
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '\\' && i+1 < len(src):
			i++
			if !strings.ContainsRune("AZzGpPea", src[i]) {
				b.WriteRune(c)
			}
			b.WriteRune(src[i])
			continue
		case inClass:
			inClass = c != ']'
		case c == '[':
			inClass = true
		case c == '(' && i+1 < len(src) && src[i+1] == '?':
			rest := string(src[i+2:])
			named := strings.HasPrefix(rest, "<") && !strings.HasPrefix(rest, "<=") && !strings.HasPrefix(rest, "<!")
			if !named && !strings.HasPrefix(rest, ":") && !strings.HasPrefix(rest, "=") && !strings.HasPrefix(rest, "!") &&
				!strings.HasPrefix(rest, "<=") && !strings.HasPrefix(rest, "<!") {
				return "", fmt.Errorf("invalid group")
			}
		}
		b.WriteRune(c)
	}
	return b.String(), nil
}

// parseUnicodePattern reports whether source is a valid ECMAScript pattern with the `u` flag (as V8 in Node 20
// parses it: no modifier groups, no duplicate group names), and returns it with its Unicode property escapes
// spelled as regexp2 (Go's unicode tables) names them.
func parseUnicodePattern(source string) (string, bool) {
	p := &patternParser{src: []rune(source), names: map[string]bool{}}
	if !p.disjunction() || p.pos != len(p.src) {
		return "", false
	}
	for _, n := range p.backrefs {
		if n > p.groups {
			return "", false
		}
	}
	for _, name := range p.namedRefs {
		if !p.names[name] {
			return "", false
		}
	}
	return p.out.String(), true
}

// patternParser is a recursive-descent parser of ECMAScript's Pattern grammar with the `u` flag.
type patternParser struct {
	src       []rune
	pos       int
	out       strings.Builder
	groups    int
	names     map[string]bool
	backrefs  []int
	namedRefs []string
}

func (p *patternParser) peek(offset int) rune {
	if p.pos+offset < len(p.src) {
		return p.src[p.pos+offset]
	}
	return -1
}

// take copies the next n characters to the output.
func (p *patternParser) take(n int) {
	p.out.WriteString(string(p.src[p.pos : p.pos+n]))
	p.pos += n
}

func (p *patternParser) disjunction() bool {
	for {
		for p.pos < len(p.src) && p.peek(0) != '|' && p.peek(0) != ')' {
			if !p.term() {
				return false
			}
		}
		if p.peek(0) != '|' {
			return true
		}
		p.take(1)
	}
}

func (p *patternParser) term() bool {
	switch {
	case p.peek(0) == '^' || p.peek(0) == '$':
		p.take(1)
		return !p.quantifierNext()
	case p.peek(0) == '\\' && (p.peek(1) == 'b' || p.peek(1) == 'B'):
		p.take(2)
		return !p.quantifierNext()
	case p.peek(0) == '(' && p.peek(1) == '?' && (p.peek(2) == '=' || p.peek(2) == '!'):
		p.take(3)
		return p.groupBody() && !p.quantifierNext()
	case p.peek(0) == '(' && p.peek(1) == '?' && p.peek(2) == '<' && (p.peek(3) == '=' || p.peek(3) == '!'):
		p.take(4)
		return p.groupBody() && !p.quantifierNext()
	}
	return p.atom() && p.quantifier()
}

// quantifierNext reports a quantifier where none may stand (after an assertion).
func (p *patternParser) quantifierNext() bool {
	return strings.ContainsRune("*+?{", p.peek(0))
}

func (p *patternParser) groupBody() bool {
	if !p.disjunction() || p.peek(0) != ')' {
		return false
	}
	p.take(1)
	return true
}

func (p *patternParser) quantifier() bool {
	switch p.peek(0) {
	case '*', '+', '?':
		p.take(1)
	case '{':
		start := p.pos
		p.pos++
		low, ok := p.digits()
		if !ok {
			return false
		}
		high := low
		if p.peek(0) == ',' {
			p.pos++
			high = -1
			if p.peek(0) != '}' {
				if high, ok = p.digits(); !ok || high < low {
					return false
				}
			}
		}
		if p.peek(0) != '}' {
			return false
		}
		p.pos = start
		for p.src[p.pos] != '}' {
			p.take(1)
		}
		p.take(1)
	default:
		return true
	}
	if p.peek(0) == '?' {
		p.take(1)
	}
	return true
}

// digits reads a decimal number (saturating, for bounds).
func (p *patternParser) digits() (int, bool) {
	n, read := 0, false
	for c := p.peek(0); c >= '0' && c <= '9'; c = p.peek(0) {
		if n < 1<<30 {
			n = n*10 + int(c-'0')
		}
		p.pos++
		read = true
	}
	return n, read
}

func (p *patternParser) atom() bool {
	c := p.peek(0)
	switch c {
	case '.':
		p.take(1)
		return true
	case '(':
		if p.peek(1) != '?' {
			p.groups++
			p.take(1)
			return p.groupBody()
		}
		if p.peek(2) == ':' {
			p.take(3)
			return p.groupBody()
		}
		if p.peek(2) != '<' {
			return false
		}
		p.take(3)
		name, ok := p.groupName()
		if !ok || p.names[name] {
			return false
		}
		p.names[name] = true
		p.groups++
		return p.groupBody()
	case '[':
		return p.class()
	case '\\':
		return p.atomEscape()
	case '^', '$', '*', '+', '?', ')', ']', '{', '}', '|':
		return false
	}
	p.take(1)
	return true
}

// groupName reads `name>` (after `(?<` or `\k<`).
func (p *patternParser) groupName() (string, bool) {
	start := p.pos
	for p.pos < len(p.src) && p.src[p.pos] != '>' {
		c := p.src[p.pos]
		first := p.pos == start
		if !(c == '$' || c == '_' || unicode.IsLetter(c) || (!first && (unicode.IsDigit(c) || unicode.Is(unicode.Mn, c) || unicode.Is(unicode.Mc, c) || c == 0x200c || c == 0x200d))) {
			return "", false
		}
		p.pos++
	}
	if p.pos == start || p.pos >= len(p.src) {
		return "", false
	}
	name := string(p.src[start:p.pos])
	p.pos = start
	p.take(len([]rune(name)) + 1)
	return name, true
}

func (p *patternParser) atomEscape() bool {
	c := p.peek(1)
	switch {
	case c >= '1' && c <= '9':
		p.take(1)
		start := p.pos
		n, _ := p.digits()
		p.pos = start
		for d := p.peek(0); d >= '0' && d <= '9'; d = p.peek(0) {
			p.take(1)
		}
		p.backrefs = append(p.backrefs, n)
		return true
	case c == 'k':
		p.take(2)
		if p.peek(0) != '<' {
			return false
		}
		p.take(1)
		name, ok := p.groupName()
		p.namedRefs = append(p.namedRefs, name)
		return ok
	case c == 'p' || c == 'P':
		return p.property(false)
	case strings.ContainsRune("dDsSwW", c):
		p.take(2)
		return true
	}
	_, ok := p.characterEscape(false)
	return ok
}

// characterEscape reads a CharacterEscape (at the backslash) and returns the character it stands for.
func (p *patternParser) characterEscape(inClass bool) (rune, bool) {
	c := p.peek(1)
	switch {
	case c == -1:
		return 0, false
	case strings.ContainsRune("fnrtv", c):
		p.take(2)
		return map[rune]rune{'f': '\f', 'n': '\n', 'r': '\r', 't': '\t', 'v': '\v'}[c], true
	case c == 'c':
		l := p.peek(2)
		if !((l >= 'a' && l <= 'z') || (l >= 'A' && l <= 'Z')) {
			return 0, false
		}
		p.take(3)
		return l % 32, true
	case c == '0':
		if d := p.peek(2); d >= '0' && d <= '9' {
			return 0, false
		}
		p.take(2)
		return 0, true
	case c == 'x':
		v, ok := p.hex(2, 2)
		if !ok {
			return 0, false
		}
		p.take(4)
		return v, true
	case c == 'u':
		return p.unicodeEscape()
	case strings.ContainsRune(`^$\.*+?()[]{}|/`, c) || (inClass && c == '-'):
		p.take(2)
		return c, true
	}
	return 0, false
}

// hex reads n hex digits at offset.
func (p *patternParser) hex(offset, n int) (rune, bool) {
	if p.pos+offset+n > len(p.src) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(p.src[p.pos+offset:p.pos+offset+n]), 16, 32)
	if err != nil || strings.ContainsAny(string(p.src[p.pos+offset:p.pos+offset+n]), "+-") {
		return 0, false
	}
	return rune(v), true
}

// unicodeEscape reads \uHHHH (a surrogate pair of two), or \u{H...}.
func (p *patternParser) unicodeEscape() (rune, bool) {
	if p.peek(2) == '{' {
		end := p.pos + 3
		for end < len(p.src) && p.src[end] != '}' {
			end++
		}
		if end >= len(p.src) || end == p.pos+3 {
			return 0, false
		}
		v, err := strconv.ParseUint(string(p.src[p.pos+3:end]), 16, 32)
		if err != nil || v > unicode.MaxRune {
			return 0, false
		}
		p.take(end + 1 - p.pos)
		return rune(v), true
	}
	v, ok := p.hex(2, 4)
	if !ok {
		return 0, false
	}
	p.take(6)
	if v >= 0xd800 && v <= 0xdbff && p.peek(0) == '\\' && p.peek(1) == 'u' {
		if low, ok := p.hex(2, 4); ok && low >= 0xdc00 && low <= 0xdfff {
			p.take(6)
			return (v-0xd800)<<10 + (low - 0xdc00) + 0x10000, true
		}
	}
	return v, true
}

// class reads a character class: ranges need single characters in order.
func (p *patternParser) class() bool {
	p.take(1)
	if p.peek(0) == '^' {
		p.take(1)
	}
	for p.peek(0) != ']' {
		if p.pos >= len(p.src) {
			return false
		}
		low, single, ok := p.classAtom()
		if !ok {
			return false
		}
		if p.peek(0) == '-' && p.peek(1) != ']' && p.peek(1) != -1 {
			p.take(1)
			high, highSingle, ok := p.classAtom()
			if !ok || !single || !highSingle || low > high {
				return false
			}
		}
	}
	p.take(1)
	return true
}

// classAtom reads one class member; single is false for a class escape (\d, \p{...}).
func (p *patternParser) classAtom() (rune, bool, bool) {
	if p.peek(0) != '\\' {
		c := p.peek(0)
		p.take(1)
		return c, true, true
	}
	c := p.peek(1)
	switch {
	case c == 'b':
		p.take(2)
		return '\b', true, true
	case c == 'p' || c == 'P':
		return 0, false, p.property(true)
	case c != -1 && strings.ContainsRune("dDsSwW", c):
		p.take(2)
		return 0, false, true
	}
	r, ok := p.characterEscape(true)
	return r, true, ok
}

// property reads \p{...} or \P{...}, writing it as regexp2 spells it.
func (p *patternParser) property(inClass bool) bool {
	negated := p.peek(1) == 'P'
	if p.peek(2) != '{' {
		return false
	}
	end := p.pos + 3
	for end < len(p.src) && p.src[end] != '}' {
		end++
	}
	if end >= len(p.src) {
		return false
	}
	members, complement, ok := propertyMembers(string(p.src[p.pos+3 : end]))
	if !ok {
		return false
	}
	p.pos = end + 1
	complement = complement != negated
	single := strings.Count(members, `\p{`) == 1 && strings.HasPrefix(members, `\p{`) && strings.HasSuffix(members, "}")
	switch {
	case !complement && (inClass || single):
		p.out.WriteString(members)
	case complement && single:
		p.out.WriteString(`\P` + members[2:])
	case inClass && isRangeComplement(members):
		p.out.WriteString(rangeComplements[members])
	case inClass:
		// The complement of several members has no spelling inside a class.
		p.out.WriteString(`\p{Unsupported_negated_property}`)
	case complement:
		p.out.WriteString("[^" + members + "]")
	default:
		p.out.WriteString("[" + members + "]")
	}
	return true
}

// propertyMembers is a Unicode property (the body of \p{...}) as the members of a character class that regexp2
// (Go's unicode tables) can read; complement reports that the property is their complement. ok is false for a
// property JavaScript does not know. A property JavaScript knows but Go's tables lack gives a member regexp2
// rejects, so the pattern fails to compile rather than match differently.
func propertyMembers(body string) (members string, complement, ok bool) {
	name, value, hasValue := strings.Cut(body, "=")
	switch {
	case hasValue && (name == "General_Category" || name == "gc"):
		if gc := generalCategory(value); gc != "" {
			return `\p{` + gc + "}", false, true
		}
	case hasValue && (name == "Script" || name == "sc" || name == "Script_Extensions" || name == "scx"):
		if _, known := unicode.Scripts[value]; known {
			return `\p{` + value + "}", false, true
		}
	case hasValue:
	case generalCategory(name) != "":
		return `\p{` + generalCategory(name) + "}", false, true
	case binaryProperties[name] != "":
		return `\p{` + binaryProperties[name] + "}", false, true
	case derivedProperties[name] != "":
		members := derivedProperties[name]
		if members == "Assigned" {
			return `\p{Cn}`, true, true
		}
		return members, false, true
	case otherBinaryProperties[name]:
		return `\p{Unsupported_` + name + "}", false, true
	}
	return "", false, false
}

// rangeComplements spell, inside a class, the complements of the derived properties that are ranges (\P{Any}
// matches nothing, so it adds no member).
var rangeComplements = map[string]string{
	`\u0000-\u{10FFFF}`: "",
	`\u0000-\u007F`:     `\u0080-\u{10FFFF}`,
}

func isRangeComplement(members string) bool {
	_, ok := rangeComplements[members]
	return ok
}

// derivedProperties are binary properties composed from Go's tables.
var derivedProperties = map[string]string{
	"Any":        `\u0000-\u{10FFFF}`,
	"ASCII":      `\u0000-\u007F`,
	"Assigned":   "Assigned",
	"Alphabetic": `\p{L}\p{Nl}\p{Other_Alphabetic}`,
	"Alpha":      `\p{L}\p{Nl}\p{Other_Alphabetic}`,
	"Lowercase":  `\p{Ll}\p{Other_Lowercase}`,
	"Lower":      `\p{Ll}\p{Other_Lowercase}`,
	"Uppercase":  `\p{Lu}\p{Other_Uppercase}`,
	"Upper":      `\p{Lu}\p{Other_Uppercase}`,
	"Math":       `\p{Sm}\p{Other_Math}`,
}

// generalCategoryNames are the long names (and aliases) of General_Category values, by short name.
var generalCategoryNames = map[string]string{
	"Other": "C", "Control": "Cc", "cntrl": "Cc", "Format": "Cf", "Unassigned": "Cn", "Private_Use": "Co",
	"Surrogate": "Cs", "Letter": "L", "Cased_Letter": "LC", "Lowercase_Letter": "Ll", "Modifier_Letter": "Lm",
	"Other_Letter": "Lo", "Titlecase_Letter": "Lt", "Uppercase_Letter": "Lu", "Mark": "M", "Combining_Mark": "M",
	"Spacing_Mark": "Mc", "Enclosing_Mark": "Me", "Nonspacing_Mark": "Mn", "Number": "N", "Decimal_Number": "Nd",
	"digit": "Nd", "Letter_Number": "Nl", "Other_Number": "No", "Punctuation": "P", "punct": "P",
	"Connector_Punctuation": "Pc", "Dash_Punctuation": "Pd", "Close_Punctuation": "Pe", "Final_Punctuation": "Pf",
	"Initial_Punctuation": "Pi", "Other_Punctuation": "Po", "Open_Punctuation": "Ps", "Symbol": "S",
	"Currency_Symbol": "Sc", "Modifier_Symbol": "Sk", "Math_Symbol": "Sm", "Other_Symbol": "So", "Separator": "Z",
	"Line_Separator": "Zl", "Paragraph_Separator": "Zp", "Space_Separator": "Zs",
}

// generalCategory is the short name of a General_Category value, "" for none.
func generalCategory(value string) string {
	if short, ok := generalCategoryNames[value]; ok {
		return short
	}
	if _, ok := unicode.Categories[value]; ok || value == "LC" || value == "Cn" {
		return value
	}
	return ""
}

// binaryProperties are ECMAScript's binary Unicode properties (with their short aliases) that Go's tables have,
// by their Go name; the others are valid in JavaScript but have no table here.
var binaryProperties = map[string]string{
	"ASCII_Hex_Digit": "ASCII_Hex_Digit", "AHex": "ASCII_Hex_Digit", "Bidi_Control": "Bidi_Control",
	"Bidi_C": "Bidi_Control", "Dash": "Dash", "Deprecated": "Deprecated", "Dep": "Deprecated",
	"Diacritic": "Diacritic", "Dia": "Diacritic", "Extender": "Extender", "Ext": "Extender", "Hex_Digit": "Hex_Digit",
	"Hex": "Hex_Digit", "IDS_Binary_Operator": "IDS_Binary_Operator", "IDSB": "IDS_Binary_Operator",
	"IDS_Trinary_Operator": "IDS_Trinary_Operator", "IDST": "IDS_Trinary_Operator", "Ideographic": "Ideographic",
	"Ideo": "Ideographic", "Join_Control": "Join_Control", "Join_C": "Join_Control",
	"Logical_Order_Exception": "Logical_Order_Exception", "LOE": "Logical_Order_Exception",
	"Noncharacter_Code_Point": "Noncharacter_Code_Point", "NChar": "Noncharacter_Code_Point",
	"Pattern_Syntax": "Pattern_Syntax", "Pat_Syn": "Pattern_Syntax", "Pattern_White_Space": "Pattern_White_Space",
	"Pat_WS": "Pattern_White_Space", "Quotation_Mark": "Quotation_Mark", "QMark": "Quotation_Mark",
	"Radical": "Radical", "Regional_Indicator": "Regional_Indicator", "RI": "Regional_Indicator",
	"Sentence_Terminal": "Sentence_Terminal", "STerm": "Sentence_Terminal", "Soft_Dotted": "Soft_Dotted",
	"SD": "Soft_Dotted", "Terminal_Punctuation": "Terminal_Punctuation", "Term": "Terminal_Punctuation",
	"Unified_Ideograph": "Unified_Ideograph", "UIdeo": "Unified_Ideograph", "Variation_Selector": "Variation_Selector",
	"VS": "Variation_Selector", "White_Space": "White_Space", "space": "White_Space",
}

// otherBinaryProperties are valid in JavaScript but missing from Go's tables: a pattern with one fails to compile.
var otherBinaryProperties = map[string]bool{
	"Bidi_Mirrored": true, "Bidi_M": true,
	"Case_Ignorable": true, "CI": true, "Cased": true, "Changes_When_Casefolded": true, "CWCF": true,
	"Changes_When_Casemapped": true, "CWCM": true, "Changes_When_Lowercased": true, "CWL": true,
	"Changes_When_NFKC_Casefolded": true, "CWKCF": true, "Changes_When_Titlecased": true, "CWT": true,
	"Changes_When_Uppercased": true, "CWU": true, "Default_Ignorable_Code_Point": true, "DI": true, "Emoji": true,
	"Emoji_Component": true, "EComp": true, "Emoji_Modifier": true, "EMod": true, "Emoji_Modifier_Base": true,
	"EBase": true, "Emoji_Presentation": true, "EPres": true, "Extended_Pictographic": true, "ExtPict": true,
	"Grapheme_Base": true, "Gr_Base": true, "Grapheme_Extend": true, "Gr_Ext": true, "ID_Continue": true, "IDC": true,
	"ID_Start": true, "IDS": true, "XID_Continue": true, "XIDC": true, "XID_Start": true, "XIDS": true,
}
