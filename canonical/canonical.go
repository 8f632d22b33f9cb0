// Package canonical implements the JSON Canonicalization Scheme (JCS) of
// RFC 8785.
//
// Digests that humans approve and the hash-chained ledger are computed over
// bytes, so two encoders that agree on the data must agree on every byte.
// JCS fixes the remaining freedom of JSON: object members are sorted by their
// keys as UTF-16 code units, there is no whitespace, strings use one escaping
// rule, and numbers are written as ECMAScript writes IEEE-754 doubles.
//
// Consequences worth knowing: every number is a double, so integers beyond
// 2^53 lose precision (send them as strings if they must be exact); numbers
// too small for a double become 0 as in ECMAScript, while numbers too large
// are rejected rather than silently becoming infinite.
package canonical

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// maxDepth matches the nesting limit of encoding/json so that everything
// Transform accepts is also accepted by encoding/json, and so hostile input
// cannot exhaust the stack.
const maxDepth = 10000

// Marshal encodes v with encoding/json and returns its RFC 8785 canonical
// form. Going through encoding/json keeps struct tags, omitempty and custom
// MarshalJSON methods meaning what they mean everywhere else in the code.
func Marshal(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("canonical: %w", err)
	}
	return Transform(b)
}

// Digest returns the lowercase hex SHA-256 of Marshal(v).
func Digest(v any) (string, error) {
	b, err := Marshal(v)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// Transform returns the canonical form of the JSON text b. It rejects invalid
// JSON, invalid UTF-8 (including lone surrogates written as \u escapes),
// duplicate object keys, trailing data, and numbers that overflow an
// IEEE-754 double (e.g. 1e400). Ambiguous input is refused rather than
// guessed at, because a digest over a guess is a digest nobody approved.
func Transform(b []byte) ([]byte, error) {
	p := parser{in: b, lits: make([]byte, 0, len(b))}
	p.skipSpace()
	if err := p.value(0); err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos != len(p.in) {
		return nil, p.errorf("trailing data after JSON value")
	}
	e := emitter{toks: p.toks, lits: p.lits, out: make([]byte, 0, len(p.lits)+len(p.toks))}
	if _, err := e.emit(0); err != nil {
		return nil, err
	}
	return e.out, nil
}

// AppendString appends s as a JCS string literal, quotes included, to dst.
// It is exported because the ledger writes its fixed-shape header by hand and
// must produce exactly the bytes Transform would.
//
// A Go string can hold invalid UTF-8, which JSON cannot. Each invalid byte
// is written as U+FFFD, exactly as encoding/json does, so AppendString(nil, s)
// always equals Marshal(s). Callers that must not lose data should check
// utf8.ValidString first.
func AppendString(dst []byte, s string) []byte {
	if !utf8.ValidString(s) {
		var sb strings.Builder
		sb.Grow(len(s) + 8)
		for _, r := range s { // range yields U+FFFD for each invalid byte
			sb.WriteRune(r)
		}
		s = sb.String()
	}
	return appendQuoted(dst, s)
}

// appendQuoted writes the JCS literal for s, which must be valid UTF-8.
// Only '"', '\\' and C0 controls are escaped; every other byte, including
// <, >, & and U+2028, is copied as is.
func appendQuoted[T ~string | ~[]byte](dst []byte, s T) []byte {
	const hexDigits = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\r':
			dst = append(dst, '\\', 'r')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendNumber writes f as ECMAScript's Number.prototype.toString does
// (ECMA-262, Number::toString), which RFC 8785 section 3.2.2.3 mandates.
// strconv supplies the shortest digits that round-trip; only the layout
// differs from Go's.
func appendNumber(dst []byte, f float64) []byte {
	if f == 0 { // also -0, which ECMAScript prints as "0"
		return append(dst, '0')
	}
	if f < 0 {
		dst = append(dst, '-')
		f = -f
	}
	// e.g. "1.2345e+20" or "5e-324": digits d.ddd and a decimal exponent.
	var buf [32]byte
	e := strconv.AppendFloat(buf[:0], f, 'e', -1, 64)
	ePos := slices.Index(e, 'e')
	exp, _ := strconv.Atoi(string(e[ePos+1:])) // strconv's own output; cannot fail
	digits := make([]byte, 0, 17)
	digits = append(digits, e[0])
	if ePos > 1 {
		digits = append(digits, e[2:ePos]...)
	}
	k := len(digits) // number of significant digits
	n := exp + 1     // value is 0.digits × 10^n

	switch {
	case k <= n && n <= 21:
		dst = append(dst, digits...)
		for range n - k {
			dst = append(dst, '0')
		}
	case 0 < n && n <= 21:
		dst = append(dst, digits[:n]...)
		dst = append(dst, '.')
		dst = append(dst, digits[n:]...)
	case -6 < n && n <= 0:
		dst = append(dst, '0', '.')
		for range -n {
			dst = append(dst, '0')
		}
		dst = append(dst, digits...)
	default:
		dst = append(dst, digits[0])
		if k > 1 {
			dst = append(dst, '.')
			dst = append(dst, digits[1:]...)
		}
		dst = append(dst, 'e')
		if n-1 >= 0 {
			dst = append(dst, '+')
		}
		dst = strconv.AppendInt(dst, int64(n-1), 10)
	}
	return dst
}

// parser is a strict RFC 8259 recursive-descent parser. A hand parser,
// rather than encoding/json, is used because encoding/json silently keeps
// the last of duplicate keys and replaces invalid UTF-8, both of which would
// let different texts share a digest.
//
// Parsing produces a flat token list and the canonical bytes of every string
// and scalar; emitter then writes the tokens with object members sorted.
// Sorting spans of already-serialized output at every nesting level instead
// would cost depth × size, which hostile input can make quadratic.
type parser struct {
	in      []byte
	pos     int
	toks    []token
	lits    []byte // canonical scalars and decoded keys, referenced by tokens
	scratch []byte // decoded string bytes, reused between strings
}

type tokenKind uint8

const (
	tokScalar tokenKind = iota // lits[lo:hi] is the canonical value
	tokKey                     // lits[lo:hi] is the decoded key; the value follows
	tokObject                  // members are the tokens up to end
	tokArray                   // elements are the tokens up to end
)

// token holds no pointers so that large inputs stay cheap for the GC.
type token struct {
	kind   tokenKind
	lo, hi int // span in parser.lits (scalars and keys)
	end    int // index just past the container's last token (objects and arrays)
}

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("canonical: %s at offset %d", fmt.Sprintf(format, args...), p.pos)
}

func (p *parser) skipSpace() {
	for p.pos < len(p.in) {
		switch p.in[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

// scalar records a token for the canonical bytes appended to p.lits since lo.
func (p *parser) scalar(kind tokenKind, lo int) {
	p.toks = append(p.toks, token{kind: kind, lo: lo, hi: len(p.lits)})
}

func (p *parser) value(depth int) error {
	if p.pos >= len(p.in) {
		return p.errorf("unexpected end of input")
	}
	switch c := p.in[p.pos]; {
	case c == '{':
		return p.object(depth + 1)
	case c == '[':
		return p.array(depth + 1)
	case c == '"':
		s, err := p.str()
		if err != nil {
			return err
		}
		lo := len(p.lits)
		p.lits = appendQuoted(p.lits, s)
		p.scalar(tokScalar, lo)
		return nil
	case c == '-' || ('0' <= c && c <= '9'):
		return p.number()
	case c == 't':
		return p.literal("true")
	case c == 'f':
		return p.literal("false")
	case c == 'n':
		return p.literal("null")
	default:
		return p.errorf("unexpected character %q", c)
	}
}

func (p *parser) literal(lit string) error {
	if len(p.in)-p.pos < len(lit) || string(p.in[p.pos:p.pos+len(lit)]) != lit {
		return p.errorf("invalid literal")
	}
	p.pos += len(lit)
	lo := len(p.lits)
	p.lits = append(p.lits, lit...)
	p.scalar(tokScalar, lo)
	return nil
}

// open records a container token; its end is patched by the caller.
func (p *parser) open(kind tokenKind, depth int) (int, error) {
	if depth > maxDepth {
		return 0, p.errorf("nesting deeper than %d", maxDepth)
	}
	p.pos++ // '[' or '{'
	p.toks = append(p.toks, token{kind: kind})
	return len(p.toks) - 1, nil
}

func (p *parser) array(depth int) error {
	idx, err := p.open(tokArray, depth)
	if err != nil {
		return err
	}
	defer func() { p.toks[idx].end = len(p.toks) }()
	p.skipSpace()
	if p.pos < len(p.in) && p.in[p.pos] == ']' {
		p.pos++
		return nil
	}
	for {
		if err := p.value(depth); err != nil {
			return err
		}
		p.skipSpace()
		if p.pos >= len(p.in) {
			return p.errorf("unterminated array")
		}
		switch p.in[p.pos] {
		case ',':
			p.pos++
			p.skipSpace()
		case ']':
			p.pos++
			return nil
		default:
			return p.errorf("expected ',' or ']' in array")
		}
	}
}

func (p *parser) object(depth int) error {
	idx, err := p.open(tokObject, depth)
	if err != nil {
		return err
	}
	defer func() { p.toks[idx].end = len(p.toks) }()
	p.skipSpace()
	if p.pos < len(p.in) && p.in[p.pos] == '}' {
		p.pos++
		return nil
	}
	for {
		if p.pos >= len(p.in) || p.in[p.pos] != '"' {
			return p.errorf("expected string key in object")
		}
		k, err := p.str()
		if err != nil {
			return err
		}
		lo := len(p.lits)
		p.lits = append(p.lits, k...)
		p.scalar(tokKey, lo)
		p.skipSpace()
		if p.pos >= len(p.in) || p.in[p.pos] != ':' {
			return p.errorf("expected ':' after object key")
		}
		p.pos++
		p.skipSpace()
		if err := p.value(depth); err != nil {
			return err
		}
		p.skipSpace()
		if p.pos >= len(p.in) {
			return p.errorf("unterminated object")
		}
		switch p.in[p.pos] {
		case ',':
			p.pos++
			p.skipSpace()
		case '}':
			p.pos++
			return nil
		default:
			return p.errorf("expected ',' or '}' in object")
		}
	}
}

// emitter writes parsed tokens in canonical order. Each token is written
// once, so the work is linear in the input apart from sorting keys.
type emitter struct {
	toks    []token
	lits    []byte
	out     []byte
	members []int // stack of key token indices for the objects being written
}

// key returns the decoded key of key token i.
func (e *emitter) key(i int) []byte {
	return e.lits[e.toks[i].lo:e.toks[i].hi]
}

// next returns the index of the token after the value starting at i.
func (e *emitter) next(i int) int {
	if k := e.toks[i].kind; k == tokObject || k == tokArray {
		return e.toks[i].end
	}
	return i + 1
}

// emit writes the value starting at token i and returns the index after it.
func (e *emitter) emit(i int) (int, error) {
	t := e.toks[i]
	switch t.kind {
	case tokArray:
		e.out = append(e.out, '[')
		for j := i + 1; j < t.end; {
			if j > i+1 {
				e.out = append(e.out, ',')
			}
			var err error
			if j, err = e.emit(j); err != nil {
				return 0, err
			}
		}
		e.out = append(e.out, ']')
		return t.end, nil
	case tokObject:
		base := len(e.members)
		for j := i + 1; j < t.end; j = e.next(j + 1) {
			e.members = append(e.members, j)
		}
		ms := e.members[base:]
		slices.SortFunc(ms, func(a, b int) int { return compareUTF16(e.key(a), e.key(b)) })
		for n := 1; n < len(ms); n++ {
			if k := e.key(ms[n]); bytes.Equal(k, e.key(ms[n-1])) {
				return 0, fmt.Errorf("canonical: duplicate object key %q", k)
			}
		}
		e.out = append(e.out, '{')
		// Index e.members afresh each time: nested objects may grow it.
		for n := base; n < base+len(ms); n++ {
			if n > base {
				e.out = append(e.out, ',')
			}
			e.out = appendQuoted(e.out, e.key(e.members[n]))
			e.out = append(e.out, ':')
			if _, err := e.emit(e.members[n] + 1); err != nil {
				return 0, err
			}
		}
		e.out = append(e.out, '}')
		e.members = e.members[:base]
		return t.end, nil
	default:
		e.out = append(e.out, e.lits[t.lo:t.hi]...)
		return i + 1, nil
	}
}

// compareUTF16 orders valid UTF-8 strings by their UTF-16 code units, as
// RFC 8785 section 3.2.3 requires. This differs from byte (code point) order
// only when a supplementary character, whose leading surrogate is
// U+D800..U+DBFF, meets a BMP character in U+E000..U+FFFF.
func compareUTF16(a, b []byte) int {
	for len(a) > 0 && len(b) > 0 {
		ra, na := utf8.DecodeRune(a)
		rb, nb := utf8.DecodeRune(b)
		if ra != rb {
			if c := int(firstUnit(ra)) - int(firstUnit(rb)); c != 0 {
				return c
			}
			// Same leading surrogate: trailing surrogates follow code point order.
			return int(ra) - int(rb)
		}
		a, b = a[na:], b[nb:]
	}
	return len(a) - len(b)
}

func firstUnit(r rune) rune {
	if r >= 0x10000 {
		hi, _ := utf16.EncodeRune(r)
		return hi
	}
	return r
}

// str parses a string literal and returns its decoded bytes in p.scratch,
// which is only valid until the next call.
func (p *parser) str() ([]byte, error) {
	p.pos++ // opening quote
	buf := p.scratch[:0]
	defer func() { p.scratch = buf[:0] }()
	for {
		if p.pos >= len(p.in) {
			return nil, p.errorf("unterminated string")
		}
		c := p.in[p.pos]
		switch {
		case c == '"':
			p.pos++
			return buf, nil
		case c == '\\':
			r, err := p.escape()
			if err != nil {
				return nil, err
			}
			buf = utf8.AppendRune(buf, r)
		case c < 0x20:
			return nil, p.errorf("unescaped control character in string")
		case c < utf8.RuneSelf:
			buf = append(buf, c)
			p.pos++
		default:
			// DecodeRune rejects overlong forms and UTF-8 encoded surrogates.
			r, size := utf8.DecodeRune(p.in[p.pos:])
			if r == utf8.RuneError && size == 1 {
				return nil, p.errorf("invalid UTF-8 in string")
			}
			buf = append(buf, p.in[p.pos:p.pos+size]...)
			p.pos += size
		}
	}
}

// escape decodes one backslash escape, joining \uXXXX surrogate pairs and
// rejecting lone surrogates, which have no UTF-8 encoding.
func (p *parser) escape() (rune, error) {
	if p.pos+1 >= len(p.in) {
		return 0, p.errorf("unterminated escape")
	}
	c := p.in[p.pos+1]
	p.pos += 2
	switch c {
	case '"', '\\', '/':
		return rune(c), nil
	case 'b':
		return '\b', nil
	case 'f':
		return '\f', nil
	case 'n':
		return '\n', nil
	case 'r':
		return '\r', nil
	case 't':
		return '\t', nil
	case 'u':
	default:
		return 0, p.errorf("invalid escape character %q", c)
	}
	r, err := p.hex4()
	if err != nil {
		return 0, err
	}
	if !utf16.IsSurrogate(r) {
		return r, nil
	}
	if r >= 0xDC00 {
		return 0, p.errorf("lone trailing surrogate \\u%04x", r)
	}
	if p.pos+1 >= len(p.in) || p.in[p.pos] != '\\' || p.in[p.pos+1] != 'u' {
		return 0, p.errorf("lone leading surrogate \\u%04x", r)
	}
	p.pos += 2
	r2, err := p.hex4()
	if err != nil {
		return 0, err
	}
	if r2 < 0xDC00 || r2 > 0xDFFF {
		return 0, p.errorf("leading surrogate \\u%04x not followed by a trailing surrogate", r)
	}
	return utf16.DecodeRune(r, r2), nil
}

func (p *parser) hex4() (rune, error) {
	if p.pos+4 > len(p.in) {
		return 0, p.errorf("truncated \\u escape")
	}
	var r rune
	for _, c := range p.in[p.pos : p.pos+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, p.errorf("invalid hex digit in \\u escape")
		}
		r = r<<4 | rune(c)
	}
	p.pos += 4
	return r, nil
}

// number validates the RFC 8259 number grammar
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? before handing the literal
// to strconv, which would otherwise accept forms such as "0x1p3", "Inf" or
// "1_0" that JSON does not.
func (p *parser) number() error {
	start := p.pos
	if p.in[p.pos] == '-' {
		p.pos++
	}
	switch {
	case p.pos < len(p.in) && p.in[p.pos] == '0':
		p.pos++
	case p.pos < len(p.in) && '1' <= p.in[p.pos] && p.in[p.pos] <= '9':
		p.skipDigits()
	default:
		return p.errorf("invalid number")
	}
	if p.pos < len(p.in) && p.in[p.pos] == '.' {
		p.pos++
		if !p.skipDigits() {
			return p.errorf("invalid number: no digits after decimal point")
		}
	}
	if p.pos < len(p.in) && (p.in[p.pos] == 'e' || p.in[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.in) && (p.in[p.pos] == '+' || p.in[p.pos] == '-') {
			p.pos++
		}
		if !p.skipDigits() {
			return p.errorf("invalid number: no digits in exponent")
		}
	}
	lit := string(p.in[start:p.pos])
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return fmt.Errorf("canonical: number %s at offset %d overflows an IEEE-754 double", lit, start)
	}
	lo := len(p.lits)
	p.lits = appendNumber(p.lits, f)
	p.scalar(tokScalar, lo)
	return nil
}

func (p *parser) skipDigits() bool {
	start := p.pos
	for p.pos < len(p.in) && '0' <= p.in[p.pos] && p.in[p.pos] <= '9' {
		p.pos++
	}
	return p.pos > start
}
