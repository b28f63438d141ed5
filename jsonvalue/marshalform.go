package jsonvalue

// maxWireDepth bounds the nesting MarshalForm reads; deeper data is not certain.
const maxWireDepth = 1_000

// MarshalForm reports whether data is one valid JSON value written as json.Marshal writes a
// json.RawMessage holding it (which it compacts and escapes, and so leaves as it is then): no
// space between tokens, and no <, >, & or U+2028, U+2029 inside strings. False means not
// certain.
func MarshalForm(data []byte) bool {
	end, ok := wireValue(data, 0, 0)
	return ok && end == len(data)
}

// wireValue reads the value at data[i:] and returns where it ends.
func wireValue(data []byte, i, depth int) (int, bool) {
	if i >= len(data) || depth > maxWireDepth {
		return 0, false
	}
	switch c := data[i]; {
	case c == '{':
		i++
		if i < len(data) && data[i] == '}' {
			return i + 1, true
		}
		for {
			if i >= len(data) || data[i] != '"' {
				return 0, false
			}
			var ok bool
			if i, ok = wireString(data, i); !ok || i >= len(data) || data[i] != ':' {
				return 0, false
			}
			if i, ok = wireValue(data, i+1, depth+1); !ok || i >= len(data) {
				return 0, false
			}
			switch data[i] {
			case ',':
				i++
			case '}':
				return i + 1, true
			default:
				return 0, false
			}
		}
	case c == '[':
		i++
		if i < len(data) && data[i] == ']' {
			return i + 1, true
		}
		for {
			var ok bool
			if i, ok = wireValue(data, i, depth+1); !ok || i >= len(data) {
				return 0, false
			}
			switch data[i] {
			case ',':
				i++
			case ']':
				return i + 1, true
			default:
				return 0, false
			}
		}
	case c == '"':
		return wireString(data, i)
	case c == '-' || c >= '0' && c <= '9':
		return wireNumber(data, i)
	}
	for _, lit := range []string{"true", "false", "null"} {
		if len(data)-i >= len(lit) && string(data[i:i+len(lit)]) == lit {
			return i + len(lit), true
		}
	}
	return 0, false
}

// wireString reads the string at data[i:] (its opening quote) and returns where it ends.
func wireString(data []byte, i int) (int, bool) {
	for i++; i < len(data); i++ {
		switch c := data[i]; {
		case c == '"':
			return i + 1, true
		case c < 0x20, c == '<', c == '>', c == '&':
			return 0, false
		case c == 0xE2 && i+2 < len(data) && data[i+1] == 0x80 && (data[i+2] == 0xA8 || data[i+2] == 0xA9):
			return 0, false // U+2028, U+2029
		case c == '\\':
			i++
			if i >= len(data) {
				return 0, false
			}
			switch data[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(data) {
					return 0, false
				}
				for _, h := range data[i+1 : i+5] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return 0, false
					}
				}
				i += 4
			default:
				return 0, false
			}
		}
	}
	return 0, false
}

// wireNumber reads the number at data[i:] and returns where it ends.
func wireNumber(data []byte, i int) (int, bool) {
	digits := func(i int) (int, bool) {
		start := i
		for i < len(data) && data[i] >= '0' && data[i] <= '9' {
			i++
		}
		return i, i > start
	}
	if data[i] == '-' {
		i++
	}
	if i >= len(data) {
		return 0, false
	}
	if data[i] == '0' {
		i++
	} else {
		var ok bool
		if i, ok = digits(i); !ok {
			return 0, false
		}
	}
	if i < len(data) && data[i] == '.' {
		var ok bool
		if i, ok = digits(i + 1); !ok {
			return 0, false
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		var ok bool
		if i, ok = digits(i); !ok {
			return 0, false
		}
	}
	return i, true
}
