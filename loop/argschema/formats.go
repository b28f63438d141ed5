package argschema

import (
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/dlclark/regexp2"
	"golang.org/x/text/unicode/norm"
)

// A port of pi-schema's formats (formats/index.js): every format JSON Schema 2020-12 defines, plus url and
// json-pointer-uri-fragment, as pi-ai checks them. url, iri and iri-reference use JavaScript's URL.canParse there;
// canParseURL approximates it.

// formats are the format checks by name.
var formats = map[string]func(string) bool{
	"date":                      isDate,
	"date-time":                 isDateTime,
	"duration":                  matcher(durationSource, false),
	"email":                     matcher(emailSource, true),
	"hostname":                  isHostname,
	"idn-email":                 isIdnEmail,
	"idn-hostname":              isIdnHostname,
	"ipv4":                      matcher(ipv4Source, false),
	"ipv6":                      matcher(ipv6Source, true),
	"iri":                       isIri,
	"iri-reference":             isIriReference,
	"json-pointer":              matcher(jsonPointerSource, false),
	"json-pointer-uri-fragment": matcher(jsonPointerUriFragmentSource, true),
	"regex":                     isRegex,
	"relative-json-pointer":     matcher(relativeJsonPointerSource, false),
	"time":                      func(s string) bool { return isTime(s) },
	"uri":                       matcher(uriSource, true),
	"uri-reference":             matcher(uriReferenceSource, true),
	"uri-template":              matcher(uriTemplateSource, true),
	"url":                       func(s string) bool { return canParseURL(s, "") },
	"uuid":                      matcher(uuidSource, true),
}

// asciiFolds are the only non-ASCII characters that Go's case folding matches with ASCII letters (KELVIN SIGN with
// k, LATIN SMALL LETTER LONG S with s). JavaScript's non-Unicode ignoreCase never matches a non-ASCII character with
// an ASCII one, so before a case-insensitive ASCII pattern runs they become U+FFFD, which every class of these
// patterns treats as it would treat them otherwise.
var asciiFolds = strings.NewReplacer("\u212a", "\ufffd", "\u017f", "\ufffd")

// matcher is the test of one of the format regular expressions, which are all valid RE2; ignoreCase is JavaScript's
// `i` flag. The expression is compiled when first used: few tools declare formats, and compiled they are hundreds
// of kilobytes that every process importing the loop would hold and its collector would mark.
func matcher(source string, ignoreCase bool) func(string) bool {
	if !ignoreCase {
		re := lazyRegexp(source)
		return func(s string) bool { return re().MatchString(s) }
	}
	re := lazyRegexp("(?i)" + source)
	return func(s string) bool { return re().MatchString(asciiFolds.Replace(s)) }
}

// lazyRegexp is source compiled when first asked for (matcher).
func lazyRegexp(source string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(source) })
}

var (
	dateRe = lazyRegexp(dateSource)
	timeRe = lazyRegexp(timeSource)
	// idnEmailRe needs lookbehind and Unicode classes; its `i` flag changes nothing for classes closed under case.
	idnEmailRe = sync.OnceValue(func() *regexp2.Regexp {
		return regexp2.MustCompile(idnEmailSource, regexp2.ECMAScript|regexp2.Unicode)
	})
)

var daysInMonth = [13]int{0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}

func isDate(value string) bool {
	m := dateRe().FindStringSubmatch(value)
	if m == nil {
		return false
	}
	year, _ := strconv.Atoi(m[1])
	month, _ := strconv.Atoi(m[2])
	day, _ := strconv.Atoi(m[3])
	if month < 1 || month > 12 || day < 1 {
		return false
	}
	leap := year%4 == 0 && (year%100 != 0 || year%400 == 0)
	if month == 2 && leap {
		return day <= 29
	}
	return day <= daysInMonth[month]
}

// isTime is TypeBox's IsTime with a required time zone offset.
func isTime(value string) bool {
	m := timeRe().FindStringSubmatch(value)
	if m == nil {
		return false
	}
	if m[4] == "" && m[5] == "" {
		return false
	}
	hr, _ := strconv.Atoi(m[1])
	minute, _ := strconv.Atoi(m[2])
	sec, _ := strconv.Atoi(m[3])
	if hr > 23 || minute > 59 || sec > 60 {
		return false
	}
	tzH, _ := strconv.Atoi(m[6])
	tzM, _ := strconv.Atoi(m[7])
	if m[5] != "" && (tzH > 23 || tzM > 59) {
		return false
	}
	if sec < 60 {
		return true
	}
	// A leap second must be 23:59:60 UTC.
	sign := 1
	if m[5] == "-" {
		sign = -1
	}
	utcMinutes := hr*60 + minute - sign*(tzH*60+tzM)
	return (utcMinutes%1440+1440)%1440 == 1439
}

func isDateTime(value string) bool {
	// value.split(/T/i) must give two parts.
	i := strings.IndexAny(value, "Tt")
	if i < 0 || strings.ContainsAny(value[i+1:], "Tt") {
		return false
	}
	return isDate(value[:i]) && isTime(value[i+1:])
}

func isIdnEmail(value string) bool {
	ok, err := idnEmailRe().MatchString(norm.NFC.String(value))
	return err == nil && ok
}

// isRegex is whether `new RegExp(value, "u")` succeeds.
func isRegex(value string) bool {
	_, ok := parseUnicodePattern(value)
	return ok
}

// invalidIriChar is iri.js's InvalidIriChars: C0 controls, space, <>^`{|} and backslash.
func invalidIriChar(r rune) bool {
	return r <= 0x20 || strings.ContainsRune("<>^`{|}\\", r)
}

// hasInvalidPercent is `%(?![0-9a-fA-F]{2})`.
func hasInvalidPercent(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && (i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2])) {
			return true
		}
	}
	return false
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

var ipvFutureRe = lazyRegexp(`\[[vV][0-9a-fA-F]+\.[^\]]+\]`)

func isIri(value string) bool {
	if strings.IndexFunc(value, invalidIriChar) >= 0 || hasInvalidPercent(value) {
		return false
	}
	if utf16Len(value) < 2048 {
		if loc := ipvFutureRe().FindStringIndex(value); loc != nil {
			value = value[:loc[0]] + "[::1]" + value[loc[1]:]
		}
	}
	return canParseURL(value, "")
}

var malformedSchemeRe = lazyRegexp(`^[a-zA-Z][a-zA-Z0-9+\-.]*//`)

func isIriReference(value string) bool {
	invalid := strings.IndexFunc(value, func(r rune) bool { return r <= 0x20 || r == 0x7f || r == '\\' }) >= 0
	return !invalid && !hasInvalidPercent(value) && !malformedSchemeRe().MatchString(value) &&
		canParseURL(value, "http://example.com")
}

// canParseURL approximates WHATWG URL.canParse(input, base): a scheme (or a base for a relative input), and for an
// authority a host without forbidden code points, a valid IPv6 literal or IPv4 number, and a port up to 65535.
// It does not apply IDNA processing to hosts.
func canParseURL(input, base string) bool {
	input = strings.TrimFunc(input, func(r rune) bool { return r <= 0x20 })
	input = strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(input)
	scheme, rest, hasScheme := splitScheme(input)
	if !hasScheme {
		if base == "" {
			return false
		}
		baseScheme, _, _ := splitScheme(base)
		if strings.HasPrefix(input, "//") || (specialSchemes[baseScheme] && strings.HasPrefix(input, `\\`)) {
			return validAuthority(input[2:], specialSchemes[baseScheme])
		}
		return true
	}
	if specialSchemes[scheme] {
		if scheme == "file" {
			return true
		}
		authority := strings.TrimLeft(rest, `/\`)
		return validAuthority(authority, true)
	}
	if strings.HasPrefix(rest, "//") {
		return validAuthority(rest[2:], false)
	}
	return true
}

// splitScheme splits a URL at its scheme's colon.
func splitScheme(s string) (scheme, rest string, ok bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'):
		case i > 0 && ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.'):
		case i > 0 && c == ':':
			return strings.ToLower(s[:i]), s[i+1:], true
		default:
			return "", s, false
		}
	}
	return "", s, false
}

// authorityOf is the authority at the start of s: up to the path, query or fragment.
func authorityOf(s string, special bool) string {
	end := "/?#"
	if special {
		end = `/\?#`
	}
	if i := strings.IndexAny(s, end); i >= 0 {
		return s[:i]
	}
	return s
}

func validAuthority(s string, special bool) bool {
	authority := authorityOf(s, special)
	if i := strings.LastIndexByte(authority, '@'); i >= 0 {
		authority = authority[i+1:]
	}
	host, port := authority, ""
	if i := strings.LastIndexByte(authority, ':'); i >= 0 && !strings.Contains(authority[i:], "]") {
		host, port = authority[:i], authority[i+1:]
	}
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n > 65535 || strings.ContainsAny(port, "+-") {
			return false
		}
	}
	if strings.HasPrefix(host, "[") {
		if !strings.HasSuffix(host, "]") {
			return false
		}
		addr, err := netip.ParseAddr(host[1 : len(host)-1])
		return err == nil && addr.Is6() && addr.Zone() == ""
	}
	if special && host == "" {
		return false
	}
	forbidden := " #/:<>?@[\\]^|"
	if special {
		decoded, err := decodeURIComponent(host)
		if err != nil {
			decoded = host
		}
		host = decoded
		forbidden += "%"
	}
	if strings.IndexFunc(host, func(r rune) bool { return r < 0x20 || r == 0x7f || strings.ContainsRune(forbidden, r) }) >= 0 {
		return false
	}
	return !special || validIPv4Host(host)
}

// validIPv4Host reports whether a host is fine as far as WHATWG's IPv4 parser goes: a host whose last label is a
// number must be an IPv4 address.
func validIPv4Host(host string) bool {
	labels := strings.Split(host, ".")
	if labels[len(labels)-1] == "" && len(labels) > 1 {
		labels = labels[:len(labels)-1]
	}
	last := labels[len(labels)-1]
	if _, ok := ipv4Number(last); !ok && !isDecimalDigits(last) {
		return true
	}
	if len(labels) > 4 {
		return false
	}
	for i, label := range labels {
		n, ok := ipv4Number(label)
		if !ok {
			return false
		}
		if i < len(labels)-1 && n > 255 {
			return false
		}
		if i == len(labels)-1 && n >= 1<<(8*(5-len(labels))) {
			return false
		}
	}
	return true
}

func isDecimalDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// ipv4Number parses one part of an IPv4 host: decimal, 0x hex or 0-prefixed octal.
func ipv4Number(s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	base := 10
	switch {
	case len(s) >= 2 && (s[:2] == "0x" || s[:2] == "0X"):
		s, base = s[2:], 16
		if s == "" {
			return 0, true
		}
	case len(s) >= 2 && s[0] == '0':
		s, base = s[1:], 8
	}
	n, err := strconv.ParseUint(s, base, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return 1 << 40, true
		}
		return 0, false
	}
	return n, true
}
