package scenarios

import (
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/token"
)

// Limits of a scenario file, checked before the YAML library builds anything whose size
// they bound: the YAML parser's memory grows with the square of the nesting depth and of the
// keys of one block mapping, and an alias copies its anchor wherever it is used (a
// "billion laughs" of a few kilobytes expands to gigabytes). The curated suite's largest file
// is 14 KB of under 5,000 tokens, 11 levels deep.
const (
	// MaxFileBytes is the largest scenario file read.
	MaxFileBytes = 4 << 20
	// MaxTokens is the most YAML tokens (keys, values, brackets, commas, dashes) a file may
	// hold; it is also the most nodes a document may have once its aliases are expanded.
	MaxTokens = 100_000
	// MaxDepth is the deepest nesting of mappings and lists.
	MaxDepth = 100
	// MaxMappingKeys is the most keys of one mapping.
	MaxMappingKeys = 5_000
)

// yamlPunctuation are the bytes that can begin a YAML token other than a scalar (and line
// breaks, which end one): a file of n of them holds at most 2n+2 tokens, since scalars are
// separated by them. Counting them bounds the lexer's memory before it runs.
const yamlPunctuation = "[]{},:-?&*!|>#'\"%@`\n\r"

// readLimited reads a file of fsys, refusing one over MaxFileBytes (or endless, such as
// /dev/zero) after reading one byte past the limit.
func readLimited(fsys fs.FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileBytes {
		return nil, Errors{{File: name, Msg: fmt.Sprintf("the file is larger than %s, the most a scenario file may hold", sizeText(MaxFileBytes))}}
	}
	return data, nil
}

// sizeText is a byte count for a message: "4 MiB", "512 KiB", "17 bytes".
func sizeText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// tokenize splits data into YAML tokens within the limits: size, tokens, nesting depth and
// keys of a mapping. A file over one gets an error at the line where it crosses it.
func tokenize(filename string, data []byte) (token.Tokens, *Error) {
	if len(data) > MaxFileBytes {
		return nil, &Error{File: filename, Msg: fmt.Sprintf("the file is larger than %s, the most a scenario file may hold", sizeText(MaxFileBytes))}
	}
	if e := countPunctuation(filename, data); e != nil {
		return nil, e
	}
	tokens := lexer.Tokenize(string(data))
	if tokens.InvalidToken() != nil {
		return tokens, nil // the parser reports it
	}
	if e := checkStructure(filename, tokens); e != nil {
		return nil, e
	}
	return tokens, nil
}

// countPunctuation refuses a file with more than 3*MaxTokens punctuation bytes and line
// breaks, at the line where the count crosses it: the lexer spends some 250 bytes on each
// token before the exact count can be taken, so it gets at most some 600,000.
func countPunctuation(filename string, data []byte) *Error {
	if n, line, col := punctuation(data, 3*MaxTokens); n > 3*MaxTokens {
		return &Error{File: filename, Line: line, Column: col, Msg: fmt.Sprintf(
			"the file has more than %s lines and YAML punctuation marks (%s), far more than a scenario needs; the loader reads at most %s tokens",
			thousands(3*MaxTokens), "[ ] { } , : - ? & * ! | > # ' \" % @ `", thousands(MaxTokens))}
	}
	return nil
}

// punctuation counts the bytes of data in yamlPunctuation, and the blanks of directive
// lines (whose words are tokens each), stopping at the one past limit: n, and where it is.
func punctuation(data []byte, limit int) (n, line, col int) {
	line = 1
	directive := false
	for i, c := range data {
		col++
		switch {
		case c == '%' && (col == 1 || afterDocumentMarker(data[i+1-col:i])):
			directive = true
		case directive && (c == ' ' || c == '\t'):
		case strings.IndexByte(yamlPunctuation, c) < 0:
			continue
		}
		n++
		if n > limit {
			return n, line, col
		}
		if c == '\n' {
			line, col, directive = line+1, 0, false
		}
	}
	return n, line, col
}

// afterDocumentMarker reports whether a line's text before a '%' is a document marker ("..."
// or "---") and blanks: the lexer reads a directive there too.
func afterDocumentMarker(before []byte) bool {
	t := strings.TrimRight(string(before), " \t")
	return t == "..." || t == "---"
}

// blockLevel is an open block mapping or list, at its column.
type blockLevel struct {
	column  int
	mapping bool
	keys    int
}

// checkStructure checks the tokens' count, their nesting depth (flow brackets and block
// indentation) and the keys of each mapping.
func checkStructure(filename string, tokens token.Tokens) *Error {
	s := structure{filename: filename}
	significant := 0
	var prev *token.Token
	for _, tk := range tokens {
		if tk.Type == token.CommentType {
			continue
		}
		significant++
		if significant > MaxTokens {
			return s.at(tk, "the file has more than %s YAML tokens (keys, values, brackets, commas, dashes), the most a scenario file may hold", thousands(MaxTokens))
		}
		if err := s.token(tk, prev); err != nil {
			return err
		}
		prev = tk
	}
	return nil
}

// structure is the collections open at a token of a file: block ones by indentation, flow
// ones by brackets.
type structure struct {
	filename string
	blocks   []blockLevel
	// flow holds the key count of each open flow collection (-1 for a list).
	flow []int
}

// token opens or closes a collection at tk, or counts an entry of the innermost one; prev
// is the significant token before it.
func (s *structure) token(tk, prev *token.Token) *Error {
	switch tk.Type {
	case token.DocumentHeaderType, token.DocumentEndType:
		s.blocks, s.flow = s.blocks[:0], s.flow[:0]
	case token.SequenceStartType, token.MappingStartType:
		if len(s.blocks)+len(s.flow) >= MaxDepth {
			return s.tooDeep(tk)
		}
		if tk.Type == token.MappingStartType {
			s.flow = append(s.flow, 0)
		} else {
			s.flow = append(s.flow, -1)
		}
	case token.SequenceEndType, token.MappingEndType:
		if len(s.flow) > 0 {
			s.flow = s.flow[:len(s.flow)-1]
		}
	case token.MappingValueType, token.SequenceEntryType:
		if len(s.flow) > 0 {
			return s.flowEntry(tk, prev)
		}
		return s.blockEntry(tk, prev)
	}
	return nil
}

// flowEntry counts a key of the innermost flow mapping.
func (s *structure) flowEntry(tk, prev *token.Token) *Error {
	if tk.Type == token.MappingValueType && s.flow[len(s.flow)-1] >= 0 {
		s.flow[len(s.flow)-1]++
		if s.flow[len(s.flow)-1] > MaxMappingKeys {
			return s.tooManyKeys(prev)
		}
	}
	return nil
}

// blockEntry places a block key or dash: a block node opens at its key's column (the token
// before the colon) or at its dash's; deeper columns nest, the same column is a sibling,
// except that a list may be a key's value at the key's own column.
func (s *structure) blockEntry(tk, prev *token.Token) *Error {
	col, mapping, where := tk.Position.Column, tk.Type == token.MappingValueType, tk
	if mapping && prev != nil && prev.Position != nil {
		col, where = prev.Position.Column, prev
	}
	for len(s.blocks) > 0 && (s.blocks[len(s.blocks)-1].column > col ||
		s.blocks[len(s.blocks)-1].column == col && mapping && !s.blocks[len(s.blocks)-1].mapping) {
		s.blocks = s.blocks[:len(s.blocks)-1]
	}
	if n := len(s.blocks); n > 0 && s.blocks[n-1].column == col && s.blocks[n-1].mapping == mapping {
		if mapping {
			s.blocks[n-1].keys++
			if s.blocks[n-1].keys > MaxMappingKeys {
				return s.tooManyKeys(where)
			}
		}
		return nil
	}
	if len(s.blocks)+len(s.flow) >= MaxDepth {
		return s.tooDeep(where)
	}
	s.blocks = append(s.blocks, blockLevel{column: col, mapping: mapping, keys: 1})
	return nil
}

// at is an error of the file at tk.
func (s *structure) at(tk *token.Token, format string, args ...any) *Error {
	e := &Error{File: s.filename, Msg: fmt.Sprintf(format, args...)}
	if tk != nil && tk.Position != nil {
		e.Line, e.Column = tk.Position.Line, tk.Position.Column
	}
	return e
}

func (s *structure) tooDeep(tk *token.Token) *Error {
	return s.at(tk, "mappings and lists nest more than %d levels deep here, the most a scenario file may nest", MaxDepth)
}

func (s *structure) tooManyKeys(tk *token.Token) *Error {
	return s.at(tk, "this mapping has more than %s keys, the most one may have", thousands(MaxMappingKeys))
}

// aliasSize is a node's size with its aliases expanded: nodes and scalar bytes.
type aliasSize struct{ nodes, bytes int64 }

func (a aliasSize) add(b aliasSize) aliasSize {
	// Saturating: an alias bomb's sizes grow exponentially.
	return aliasSize{min(a.nodes+b.nodes, 1<<60), min(a.bytes+b.bytes, 1<<60)}
}

// aliasResolver resolves a document's aliases in document order (an alias names the
// nearest anchor before it) and measures the document as if each alias were a copy of its
// anchor, refusing one bigger than the limits a file itself has: MaxTokens nodes and
// MaxFileBytes of scalars.
type aliasResolver struct {
	file    string
	anchors map[string]ast.Node
	sizes   map[ast.Node]aliasSize
	targets map[*ast.AliasNode]ast.Node
	total   aliasSize
	// lastAlias is the last alias met: the error names it when the total crosses a limit.
	lastAlias *ast.AliasNode
	err       *Error
}

// resolveAliases returns each alias's anchor value, or an error at the alias whose
// expansion makes the document too big.
func resolveAliases(filename string, root ast.Node) (map[*ast.AliasNode]ast.Node, *Error) {
	r := &aliasResolver{file: filename, anchors: map[string]ast.Node{}, sizes: map[ast.Node]aliasSize{}, targets: map[*ast.AliasNode]ast.Node{}}
	r.size(root)
	return r.targets, r.err
}

// size measures n with its aliases expanded, adding what it counts to the document's total.
func (r *aliasResolver) size(n ast.Node) aliasSize {
	if n == nil || r.err != nil {
		return aliasSize{}
	}
	var s aliasSize
	switch v := n.(type) {
	case *ast.AliasNode:
		r.lastAlias = v
		name := strings.TrimSpace(v.Value.String())
		target, ok := r.anchors[name]
		if !ok {
			return r.count(v, aliasSize{1, int64(len(name))})
		}
		r.targets[v] = target
		return r.count(v, r.sizes[target])
	case *ast.AnchorNode:
		s = r.size(v.Value)
		name := strings.TrimSpace(v.Name.String())
		r.anchors[name] = v.Value
		r.sizes[v.Value] = s
		return s
	case *ast.TagNode:
		return r.size(v.Value)
	case *ast.DocumentNode:
		return r.size(v.Body)
	case *ast.MappingNode:
		s = r.count(v, aliasSize{nodes: 1})
		for _, kv := range v.Values {
			s = s.add(r.size(kv))
		}
		return s
	case *ast.MappingValueNode:
		return r.size(v.Key).add(r.size(v.Value))
	case *ast.MappingKeyNode:
		return r.size(v.Value)
	case *ast.SequenceNode:
		s = r.count(v, aliasSize{nodes: 1})
		for _, x := range v.Values {
			s = s.add(r.size(x))
		}
		return s
	case *ast.LiteralNode:
		return r.count(v, aliasSize{1, int64(len(v.Value.Value))})
	case *ast.StringNode:
		return r.count(v, aliasSize{1, int64(len(v.Value))})
	case *ast.CommentGroupNode, *ast.CommentNode:
		return aliasSize{}
	}
	tk := n.GetToken()
	if tk == nil {
		return r.count(n, aliasSize{nodes: 1})
	}
	return r.count(n, aliasSize{1, int64(len(tk.Value))})
}

// count adds s, the size of n, to the document's total, recording the error when the total
// is too big. Only aliases can make it so (a file within the limits holds fewer nodes and
// bytes): the error is at the last alias met.
func (r *aliasResolver) count(n ast.Node, s aliasSize) aliasSize {
	r.total = r.total.add(s)
	if r.err == nil && r.lastAlias != nil && (r.total.nodes > MaxTokens || r.total.bytes > MaxFileBytes) {
		r.err = &Error{File: r.file, Msg: fmt.Sprintf(
			"with its aliases expanded the file would hold more than %s values or %s of text, the most a scenario file may (each *alias copies its &anchor)",
			thousands(MaxTokens), sizeText(MaxFileBytes))}
		if tk := r.lastAlias.GetToken(); tk != nil && tk.Position != nil {
			r.err.Line, r.err.Column = tk.Position.Line, tk.Position.Column
		}
	}
	return s
}

// thousands writes n with comma separators: 100,000.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
