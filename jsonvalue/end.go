package jsonvalue

// End returns where the JSON object or array starting at b[i] ends (the index after its
// closing bracket) and how deeply it nests; ok is false when b ends first or b[i] opens
// neither. It does not validate: bytes that are not JSON may give any extent, so a caller
// decodes what it finds, or compares it with bytes that decoded before.
func End(b []byte, i int) (end, nesting int, ok bool) {
	if i >= len(b) || (b[i] != '{' && b[i] != '[') {
		return 0, 0, false
	}
	depth := 0
	for ; i < len(b); i++ {
		switch b[i] {
		case '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		case '{', '[':
			depth++
			nesting = max(nesting, depth)
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1, nesting, true
			}
		}
	}
	return 0, 0, false
}
