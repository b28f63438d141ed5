package argschema

import (
	"errors"
	"math"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// A port of the hostname and idn-hostname checks of pi-schema (formats/typebox/idna, adapted from TypeBox 1.3.27,
// MIT): ASCII LDH labels, Punycode A-labels decoded and checked as U-labels, and the RFC 5891-5893 rules TypeBox
// applies. Unicode properties come from Go's unicode tables instead of V8's.

func isHostname(value string) bool {
	if value == "" || utf16Len(value) > 253 || strings.HasSuffix(value, ".") {
		return false
	}
	for _, label := range strings.Split(value, ".") {
		n := utf16Len(label)
		if n == 0 || n > 63 || !(isPunyLabel(label) || isASCIILabel(label)) {
			return false
		}
	}
	return true
}

// isASCIILabel is an LDH label per RFC 5891 §4.2.3.1: no hyphen at either end, none in the 3rd and 4th places.
func isASCIILabel(value string) bool {
	if strings.HasPrefix(value, "-") || strings.HasSuffix(value, "-") {
		return false
	}
	if len(value) >= 4 && value[2:4] == "--" {
		return false
	}
	for i := 0; i < len(value); i++ {
		c := value[i]
		if !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-') {
			return false
		}
	}
	return true
}

func isAcePrefixed(value string) bool {
	return strings.HasPrefix(strings.ToLower(value), "xn--")
}

// punyBody is an A-label's Punycode, lowercased. U+0130 stays as it is: JavaScript lowercases it to two characters
// (not one ASCII letter, as Go does), one of them not ASCII, which fails the decode either way.
func punyBody(label string) string {
	return strings.Map(func(r rune) rune {
		if r == 0x130 {
			return r
		}
		return unicode.ToLower(r)
	}, label[4:])
}

func isPunyLabel(value string) bool {
	if !isAcePrefixed(value) {
		return false
	}
	body := punyBody(value)
	// A payload of only a hyphen, or starting with the delimiter, has no basic characters before it.
	if strings.LastIndex(body, "-") == 0 {
		return false
	}
	decoded, err := punyDecode(body)
	if err != nil || !hasNonASCII(decoded) {
		return false
	}
	return isUnicodeLabel(decoded)
}

func hasNonASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return true
		}
	}
	return false
}

// isUnicodeLabel applies TypeBox's U-label rules.
func isUnicodeLabel(value string) bool {
	if hasNonASCII(value) && punyEncodedLength(value)+4 > 63 {
		return false
	}
	if hasRightToLeft(value) && !satisfiesBidiRule(value) {
		return false
	}
	chars := []rune(value)
	if len(chars) == 0 {
		return true
	}
	if chars[0] == '-' || chars[len(chars)-1] == '-' || (len(chars) >= 4 && chars[2] == '-' && chars[3] == '-') {
		return false
	}
	if unicode.In(chars[0], unicode.Mn, unicode.Mc, unicode.Me) {
		return false
	}
	hasJapanese := false
	for i, cp := range chars {
		if isRFC5892Disallowed(cp) || !isPermittedCategory(cp) {
			return false
		}
		if unicode.In(cp, unicode.Hiragana, unicode.Katakana, unicode.Han) {
			hasJapanese = true
		}
		// JavaScript's `!prev` / `!next`: absent (or NUL).
		prev, next := rune(0), rune(0)
		if i > 0 {
			prev = chars[i-1]
		}
		if i+1 < len(chars) {
			next = chars[i+1]
		}
		switch cp {
		case 0x00b7: // MIDDLE DOT (Catalan)
			if prev != 'l' || next != 'l' {
				return false
			}
		case 0x0375: // Greek KERAIA
			if next == 0 || !unicode.Is(unicode.Greek, next) {
				return false
			}
		case 0x05f3, 0x05f4: // Hebrew GERESH, GERSHAYIM
			if prev == 0 || !unicode.Is(unicode.Hebrew, prev) {
				return false
			}
		case 0x200c: // ZWNJ: rejected only after ASCII, which never satisfies the virama or joining rules
			if prev == 0 || (prev < 0x80 && !isVirama(prev)) {
				return false
			}
		case 0x200d: // ZWJ
			if prev == 0 || !isVirama(prev) {
				return false
			}
		}
	}
	return !strings.ContainsRune(value, 0x30fb) || hasJapanese
}

func isRFC5892Disallowed(r rune) bool {
	switch r {
	case 0x0640, 0x07fa, 0x302e, 0x302f, 0x3031, 0x3032, 0x3033, 0x3034, 0x3035, 0x303b:
		return true
	}
	return false
}

// isPermittedCategory is TypeBox's RE_PERMITTED_CATEGORY: letters, -+ .,:/ , decimal digits, non-spacing and
// spacing marks, and the CONTEXTO and PVALID exceptions.
func isPermittedCategory(r rune) bool {
	if unicode.In(r, unicode.L, unicode.Nd, unicode.Mn, unicode.Mc) || strings.ContainsRune("-+.,:/", r) {
		return true
	}
	switch r {
	case 0x00b7, 0x0375, 0x05f3, 0x05f4, 0x200c, 0x200d, 0x30fb, // CONTEXTO
		0x00df, 0x03c2, 0x06fd, 0x06fe, 0x0f0b, 0x3007: // PVALID
		return true
	}
	return false
}

var viramas = map[rune]bool{
	0x094d: true, 0x09cd: true, 0x0a4d: true, 0x0acd: true, 0x0b4d: true, 0x0bcd: true, 0x0c4d: true, 0x0ccd: true,
	0x0d3b: true, 0x0d3c: true, 0x0d4d: true, 0x0dca: true, 0x1b44: true, 0x1baa: true, 0x1bab: true, 0xa9c0: true,
	0x11046: true, 0x1107f: true, 0x110b9: true, 0x11133: true, 0x11134: true, 0x111c0: true, 0x11235: true,
	0x1134d: true, 0x11442: true, 0x114c2: true, 0x115bf: true, 0x1163f: true, 0x116b6: true, 0x11c3f: true,
	0x11d44: true, 0x11d45: true,
}

func isVirama(r rune) bool { return viramas[r] }

// bidiClass is TypeBox's approximation of a code point's Bidi class.
func bidiClass(r rune) string {
	switch {
	case (r >= '0' && r <= '9') || (r >= 0x06f0 && r <= 0x06f9):
		return "EN"
	case r >= 0x0660 && r <= 0x0669:
		return "AN"
	case unicode.Is(unicode.Mn, r):
		return "NSM"
	case unicode.Is(unicode.Hebrew, r):
		return "R"
	case unicode.In(r, unicode.Arabic, unicode.Syriac, unicode.Thaana, unicode.Mandaic):
		return "AL"
	case unicode.Is(unicode.L, r):
		return "L"
	}
	return "ON"
}

// hasRightToLeft reports an RTL label (RFC 5893 §1.4): one with a character of class R, AL or AN.
func hasRightToLeft(value string) bool {
	for _, r := range value {
		switch bidiClass(r) {
		case "R", "AL", "AN":
			return true
		}
	}
	return false
}

// hasBidiChars is hasRightToLeft of a label, decoded first when it is an A-label.
func hasBidiChars(label string) bool {
	if isAcePrefixed(label) {
		decoded, err := punyDecode(punyBody(label))
		return err == nil && hasRightToLeft(decoded)
	}
	return hasRightToLeft(label)
}

func satisfiesBidiRule(value string) bool {
	rtlAllowed := map[string]bool{"R": true, "AL": true, "AN": true, "EN": true, "ES": true, "CS": true, "ET": true,
		"ON": true, "BN": true, "NSM": true}
	ltrAllowed := map[string]bool{"L": true, "EN": true, "ES": true, "CS": true, "ET": true, "ON": true, "BN": true,
		"NSM": true}
	isRTL, first, sawEN, sawAN := false, true, false, false
	allowed := ltrAllowed
	for _, r := range value {
		class := bidiClass(r)
		if first {
			if class != "L" && class != "R" && class != "AL" {
				return false
			}
			isRTL = class == "R" || class == "AL"
			if isRTL {
				allowed = rtlAllowed
			}
			first = false
		}
		if !allowed[class] {
			return false
		}
		if class == "EN" {
			sawEN = true
		} else if class == "AN" {
			sawAN = true
		}
	}
	return !(isRTL && sawEN && sawAN)
}

func isIdnHostname(value string) bool {
	if value == "" || strings.Contains(value, " ") {
		return false
	}
	normalized := normalizeHostname(value)
	if utf16Len(normalized) > 253 {
		return false
	}
	labels := strings.Split(normalized, ".")
	hasBidi := false
	for _, label := range labels {
		if hasBidiChars(label) {
			hasBidi = true
		}
	}
	for _, label := range labels {
		n := utf16Len(label)
		if n == 0 || n > 63 || !(isPunyLabel(label) || isUnicodeLabel(label)) {
			return false
		}
		if hasBidi && !satisfiesBidiRule(label) {
			return false
		}
	}
	return true
}

// normalizeHostname maps fullwidth ASCII to ASCII, normalizes to NFC, removes the code points IDNA mapping ignores
// and turns full stop variants into '.'.
func normalizeHostname(value string) string {
	value = strings.Map(func(r rune) rune {
		if r >= 0xff01 && r <= 0xff5e {
			return r - 0xfee0
		}
		return r
	}, value)
	value = norm.NFC.String(value)
	return strings.Map(func(r rune) rune {
		switch {
		case r == 0x00ad || r == 0x034f || (r >= 0x180b && r <= 0x180d) || r == 0x200b ||
			(r >= 0xfe00 && r <= 0xfe0f) || (r >= 0xe0100 && r <= 0xe01ef):
			return -1
		case r == 0x3002 || r == 0xff0e || r == 0xff61:
			return '.'
		}
		return r
	}, value)
}

// Punycode (RFC 3492), computed in float64 as JavaScript computes it.
const (
	punyBase        = 36
	punyTMin        = 1
	punyTMax        = 26
	punySkew        = 38
	punyDamp        = 700
	punyInitialBias = 72
	punyInitialN    = 128
)

var errPunycode = errors.New("invalid punycode")

// toInt32 is JavaScript's ToInt32.
func toInt32(f float64) int32 {
	return int32(uint32(math.Mod(math.Trunc(f), 1<<32)))
}

func punyAdapt(delta, numPoints float64, firstTime bool) float64 {
	if firstTime {
		delta = math.Floor(delta / punyDamp)
	} else {
		delta = float64(toInt32(delta) >> 1)
	}
	delta += math.Floor(delta / numPoints)
	k := 0.0
	for delta > ((punyBase-punyTMin)*punyTMax)>>1 {
		delta = math.Floor(delta / (punyBase - punyTMin))
		k += punyBase
	}
	return k + math.Floor(((punyBase-punyTMin+1)*delta)/(delta+punySkew))
}

func punyThreshold(k, bias float64) float64 {
	switch {
	case k <= bias:
		return punyTMin
	case k >= bias+punyTMax:
		return punyTMax
	}
	return k - bias
}

// punyDecode decodes a Punycode payload; any character that is not ASCII fails it, as it does in TypeBox.
func punyDecode(value string) (string, error) {
	if hasNonASCII(value) {
		return "", errPunycode
	}
	var output []float64
	n, i, bias := float64(punyInitialN), 0.0, float64(punyInitialBias)
	delim := strings.LastIndexByte(value, '-')
	for j := 0; j < delim; j++ {
		output = append(output, float64(value[j]))
	}
	in := 0
	if delim >= 0 {
		in = delim + 1
	}
	for in < len(value) {
		oldi, w, k := i, 1.0, float64(punyBase)
		for {
			if in >= len(value) {
				return "", errPunycode
			}
			ch := value[in]
			in++
			var digit float64
			switch {
			case ch >= 'a' && ch <= 'z':
				digit = float64(ch - 'a')
			case ch >= '0' && ch <= '9':
				digit = float64(ch-'0') + 26
			default:
				return "", errPunycode
			}
			i += digit * w
			t := punyThreshold(k, bias)
			if digit < t {
				break
			}
			w *= punyBase - t
			k += punyBase
		}
		outLen := float64(len(output) + 1)
		bias = punyAdapt(i-oldi, outLen, oldi == 0)
		n += math.Floor(i / outLen)
		i = math.Mod(i, outLen)
		at := int(i)
		output = append(output, 0)
		copy(output[at+1:], output[at:])
		output[at] = n
		i++
	}
	// String.fromCodePoint rejects what is not a code point.
	runes := make([]rune, len(output))
	for j, cp := range output {
		if cp < 0 || cp > unicode.MaxRune || cp != math.Trunc(cp) {
			return "", errPunycode
		}
		runes[j] = rune(cp)
	}
	return string(runes), nil
}

// punyEncodedLength is the length of the Punycode payload of input, for the A-label length limit.
func punyEncodedLength(input string) int {
	codePoints := []rune(input)
	basic := 0
	for _, r := range codePoints {
		if r < 0x80 {
			basic++
		}
	}
	length := basic
	if basic > 0 {
		length++
	}
	n, delta, bias := float64(punyInitialN), 0.0, float64(punyInitialBias)
	handled := basic
	for handled < len(codePoints) {
		m := math.Inf(1)
		for _, r := range codePoints {
			if float64(r) >= n && float64(r) < m {
				m = float64(r)
			}
		}
		delta += (m - n) * float64(handled+1)
		n = m
		for _, r := range codePoints {
			cp := float64(r)
			if cp < n {
				delta++
			}
			if cp == n {
				q := delta
				for k := float64(punyBase); ; k += punyBase {
					t := punyThreshold(k, bias)
					if q < t {
						break
					}
					length++
					q = math.Floor((q - t) / (punyBase - t))
				}
				length++
				bias = punyAdapt(delta, float64(handled+1), handled == basic)
				delta = 0
				handled++
			}
		}
		delta++
		n++
	}
	return length
}
