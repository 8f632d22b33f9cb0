package canonical_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/signoff-dev/signoff/canonical"
)

// numberVectors are RFC 8785 Appendix B plus a few layout boundaries. Every
// expected value was checked against V8's String(x) (node v20), not copied.
var numberVectors = []struct {
	bits uint64
	want string
}{
	{0x0000000000000000, "0"},
	{0x8000000000000000, "0"}, // -0
	{0x0000000000000001, "5e-324"},
	{0x8000000000000001, "-5e-324"},
	{0x7fefffffffffffff, "1.7976931348623157e+308"},
	{0xffefffffffffffff, "-1.7976931348623157e+308"},
	{0x4340000000000000, "9007199254740992"},
	{0xc340000000000000, "-9007199254740992"},
	{0x4430000000000000, "295147905179352830000"},
	{0x44b52d02c7e14af5, "9.999999999999997e+22"},
	{0x44b52d02c7e14af6, "1e+23"},
	{0x44b52d02c7e14af7, "1.0000000000000001e+23"},
	{0x444b1ae4d6e2ef4e, "999999999999999700000"},
	{0x444b1ae4d6e2ef4f, "999999999999999900000"},
	{0x444b1ae4d6e2ef50, "1e+21"},
	{0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"},
	{0x3eb0c6f7a0b5ed8d, "0.000001"},
	{0x3eb0c6f7a0b5ed8e, "0.0000010000000000000002"},
	{0x41b3de4355555553, "333333333.3333332"},
	{0x41b3de4355555554, "333333333.33333325"},
	{0x41b3de4355555555, "333333333.3333333"},
	{0x41b3de4355555556, "333333333.3333334"},
	{0x41b3de4355555557, "333333333.33333343"},
	{0xbecbf647612f3696, "-0.0000033333333333333333"},
	{0x43143ff3c1cb0959, "1424953923781206.2"}, // round to even
	{0x4415af1d78b58c40, "100000000000000000000"},
	// Exact value 99999999999999983616: both ...98e4 and ...99e4 round-trip;
	// ECMAScript picks the closer one.
	{0x4415af1d78b58c3f, "99999999999999980000"},
	{0x3ff0000000000000, "1"},
	{0xbff0000000000000, "-1"},
	{0x3fb999999999999a, "0.1"},
	{0x3e7ad7f29abcaf48, "1e-7"},
	{0x3e7ad7f29abcaf49, "1.0000000000000001e-7"},
}

func TestNumberVectors(t *testing.T) {
	t.Parallel()
	for _, tc := range numberVectors {
		t.Run(tc.want, func(t *testing.T) {
			t.Parallel()
			f := math.Float64frombits(tc.bits)
			got, err := canonical.Marshal(f)
			if err != nil || string(got) != tc.want {
				t.Errorf("Marshal(%#016x) = %s, %v; want %s", tc.bits, got, err, tc.want)
			}
			lit := strconv.FormatFloat(f, 'g', -1, 64)
			got, err = canonical.Transform([]byte(lit))
			if err != nil || string(got) != tc.want {
				t.Errorf("Transform(%s) = %s, %v; want %s", lit, got, err, tc.want)
			}
		})
	}
}

// TestNumbersV8 checks the number layout against an independent oracle:
// testdata/es_numbers.txt holds bit patterns and V8's String(x).
func TestNumbersV8(t *testing.T) {
	t.Parallel()
	f, err := os.Open("testdata/es_numbers.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		h, want, ok := strings.Cut(line, " ")
		bits, err := strconv.ParseUint(h, 16, 64)
		if !ok || err != nil {
			t.Fatalf("bad line %q", line)
		}
		got, err := canonical.Marshal(math.Float64frombits(bits))
		if err != nil || string(got) != want {
			t.Errorf("%s: got %s, %v; want %s", h, got, err, want)
		}
		n++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 1000 {
		t.Fatalf("only %d vectors read", n)
	}
}

// esNumber matches the shapes ECMAScript's Number::toString can produce.
var esNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*|[0-9]+\.[0-9]*[1-9]|[1-9](\.[0-9]*[1-9])?e[+-][1-9][0-9]*)$`)

func TestNumbersRoundTripRandom(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for range 100000 {
		f := math.Float64frombits(r.Uint64())
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		got, err := canonical.Marshal(f)
		if err != nil {
			t.Fatalf("Marshal(%v): %v", f, err)
		}
		back, err := strconv.ParseFloat(string(got), 64)
		if err != nil || back != f || !esNumber.Match(got) {
			t.Fatalf("Marshal(%v) = %s does not round-trip or has the wrong shape", f, got)
		}
	}
}

func TestNumberLiterals(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"0", "0"},
		{"-0", "0"},
		{"-0.0e-5", "0"},
		{"1E30", "1e+30"},
		{"4.50", "4.5"},
		{"2e-3", "0.002"},
		{"1e21", "1e+21"},
		{"1e20", "100000000000000000000"},
		{"1e-7", "1e-7"},
		{"1e-6", "0.000001"},
		{"1.2345678901234568e+20", "123456789012345680000"},
		{"123456789012345680000", "123456789012345680000"},
		{"9007199254740993", "9007199254740992"}, // beyond 2^53: nearest double
		{"333333333.33333329", "333333333.3333333"},
		{"0.000000000000000000000000001", "1e-27"},
		{"1e-400", "0"}, // underflow rounds to zero, as in ECMAScript
		{"-1e-400", "0"},
		{"1.00000000000000000000000000000000000000000000000000001", "1"},
		{"100e-2", "1"},
		{"0.1e1", "1"},
		{"1.7976931348623157e308", "1.7976931348623157e+308"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			got, err := canonical.Transform([]byte(tc.in))
			if err != nil || string(got) != tc.want {
				t.Errorf("Transform(%s) = %s, %v; want %s", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestRFCExample(t *testing.T) {
	t.Parallel()
	// RFC 8785 section 3.2.2.
	in := `{
  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}`
	want := `{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`
	got, err := canonical.Transform([]byte(in))
	if err != nil || string(got) != want {
		t.Fatalf("got  %s, %v\nwant %s", got, err, want)
	}
}

func TestRFCSorting(t *testing.T) {
	t.Parallel()
	// RFC 8785 section 3.2.3.
	in := `{
  "\u20ac": "Euro Sign",
  "\r": "Carriage Return",
  "\ufb33": "Hebrew Letter Dalet With Dagesh",
  "1": "One",
  "\ud83d\ude00": "Emoji: Grinning Face",
  "\u0080": "Control",
  "\u00f6": "Latin Small Letter O With Diaeresis"
}`
	want := `{"\r":"Carriage Return","1":"One","` + "\u0080" + `":"Control","ö":"Latin Small Letter O With Diaeresis","€":"Euro Sign","😀":"Emoji: Grinning Face","` + "\ufb33" + `":"Hebrew Letter Dalet With Dagesh"}`
	got, err := canonical.Transform([]byte(in))
	if err != nil || string(got) != want {
		t.Fatalf("got  %s, %v\nwant %s", got, err, want)
	}
}

// TestSortingUTF16Random checks key order against a direct comparison of
// UTF-16 code unit arrays, with keys drawn from the ranges where UTF-16 and
// code point order disagree.
func TestSortingUTF16Random(t *testing.T) {
	t.Parallel()
	alphabet := []rune{'a', 'b', 0x7f, 0x80, 0xff, 0x20ac, 0xd7ff, 0xe000, 0xfb33, 0xffff, 0x10000, 0x1f600, 0x10ffff}
	r := rand.New(rand.NewPCG(3, 4))
	for range 500 {
		keys := map[string]bool{}
		for range 1 + r.IntN(12) {
			var sb strings.Builder
			for range r.IntN(4) {
				sb.WriteRune(alphabet[r.IntN(len(alphabet))])
			}
			keys[sb.String()] = true
		}
		obj := map[string]int{}
		for k := range keys {
			obj[k] = 0
		}
		out, err := canonical.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		got := objectKeys(t, out)
		want := slices.Collect(func(yield func(string) bool) {
			for k := range keys {
				if !yield(k) {
					return
				}
			}
		})
		slices.SortFunc(want, func(a, b string) int {
			return slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
		})
		if !slices.Equal(got, want) {
			t.Fatalf("order %q, want %q", got, want)
		}
	}
}

// objectKeys returns the keys of the top-level JSON object in document order.
func objectKeys(t *testing.T, b []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	var keys []string
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		if _, err := dec.Token(); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// validInputs are accepted texts and their canonical forms; they also seed
// the idempotence test and the fuzzer.
var validInputs = []struct{ in, want string }{
	{`null`, `null`},
	{` true `, `true`},
	{"\t\r\n false \n", `false`},
	{`""`, `""`},
	{`{}`, `{}`},
	{`[]`, `[]`},
	{`{ }`, `{}`},
	{`[ ]`, `[]`},
	{`[1, [2, [3, {}]], {"b":[],"a":{}}]`, `[1,[2,[3,{}]],{"a":{},"b":[]}]`},
	{`{"b":1,"a":{"d":2,"c":3}}`, `{"a":{"c":3,"d":2},"b":1}`},
	{`{"a":1,"A":2,"":3,"aa":4}`, `{"":3,"A":2,"a":1,"aa":4}`},
	{`"\u00e9\/\u003c\u003e\u0026"`, `"é/<>&"`},
	{`"\u2028\u2029"`, "\"\u2028\u2029\""},
	{`"\u0000\u0001\u001f\u007f"`, `"\u0000\u0001\u001f` + "\x7f" + `"`},
	{`"\b\f\n\r\t\u0008\u000C\u000A\u000D\u0009"`, `"\b\f\n\r\t\b\f\n\r\t"`},
	{`"\uD83D\uDE00"`, `"😀"`},
	{`"\ud83d\ude00"`, `"😀"`},
	{`"😀é€"`, `"😀é€"`},
	{`"\uFFFF\uFFFD"`, "\"\uffff\ufffd\""},
	{`"\"\\"`, `"\"\\"`},
	{`{"a\u0000":1,"a":2}`, `{"a":2,"a\u0000":1}`},
	{`[1.0, -0, 1e2, 1E+2, 1e-2]`, `[1,0,100,100,0.01]`},
}

func TestTransformValid(t *testing.T) {
	t.Parallel()
	for _, tc := range validInputs {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			got, err := canonical.Transform([]byte(tc.in))
			if err != nil || string(got) != tc.want {
				t.Errorf("Transform(%s) = %s, %v; want %s", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestTransformErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in string }{
		{"empty", ``},
		{"only space", `   `},
		{"open object", `{`},
		{"close object", `}`},
		{"open array", `[1`},
		{"trailing comma array", `[1,]`},
		{"trailing comma object", `{"a":1,}`},
		{"leading comma", `[,1]`},
		{"missing colon", `{"a" 1}`},
		{"missing value", `{"a":}`},
		{"bare key", `{a:1}`},
		{"number key", `{1:1}`},
		{"single quotes", `'a'`},
		{"leading zero", `01`},
		{"negative leading zero", `-01`},
		{"dot without digits", `1.`},
		{"leading dot", `.5`},
		{"plus sign", `+1`},
		{"empty exponent", `1e`},
		{"exponent sign only", `1e+`},
		{"double minus", `--1`},
		{"minus alone", `-`},
		{"hex", `0x10`},
		{"NaN", `NaN`},
		{"Infinity", `Infinity`},
		{"minus Infinity", `-Infinity`},
		{"truncated true", `tru`},
		{"truncated null", `nul`},
		{"capital True", `True`},
		{"BOM", "\ufeff{}"},
		{"comment", `{} // c`},
		{"bad escape", `"\x41"`},
		{"short unicode escape", `"\u12"`},
		{"bad hex", `"\u12g4"`},
		{"raw control char", "\"a\x01b\""},
		{"raw newline", "\"a\nb\""},
		{"unterminated string", `"abc`},
		{"unterminated escape", `"abc\`},
		{"non-breaking space is not whitespace", "\u00a01"},
		{"duplicate key", `{"a":1,"a":2}`},
		{"duplicate key same value", `{"a":1,"a":1}`},
		{"duplicate key via escape", `{"a":1,"\u0061":2}`},
		{"duplicate key nested", `[{"x":{"b":1,"c":2,"b":3}}]`},
		{"duplicate emoji key", `{"😀":1,"\ud83d\ude00":2}`},
		{"invalid UTF-8", "\"\xff\""},
		{"invalid UTF-8 in key", "{\"\xfe\":1}"},
		{"truncated UTF-8", "\"\xe2\x82\""},
		{"overlong UTF-8", "\"\xc0\xaf\""},
		{"UTF-8 encoded surrogate", "\"\xed\xa0\x80\""},
		{"lone high surrogate", `"\ud800"`},
		{"lone low surrogate", `"\udc00"`},
		{"high surrogate then text", `"\ud800x"`},
		{"high surrogate then BMP escape", `"\ud800\u0041"`},
		{"two high surrogates", `"\ud800\ud800"`},
		{"reversed pair", `"\ude00\ud83d"`},
		{"two low surrogates", `"\udc00\udc00"`},
		{"lone surrogate key", `{"\ud800":1}`},
		{"overflow", `1e400`},
		{"negative overflow", `-1e400`},
		{"overflow in array", `[1, 2e308]`},
		{"huge exponent", `1e99999999999999999999`},
		{"trailing garbage", `{} x`},
		{"two values", `1 2`},
		{"extra bracket", `[]]`},
		{"literal suffix", `nullx`},
		{"number suffix", `1a`},
		{"too deep", strings.Repeat("[", 10001) + strings.Repeat("]", 10001)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := canonical.Transform([]byte(tc.in))
			if err == nil {
				t.Errorf("Transform(%q) = %s; want error", tc.in, got)
			}
		})
	}
}

func TestNestingLimit(t *testing.T) {
	t.Parallel()
	// The limit equals encoding/json's, so both agree on what is acceptable.
	in := strings.Repeat(`{"a":[`, 5000) + strings.Repeat(`]}`, 5000)
	got, err := canonical.Transform([]byte(in))
	if err != nil || string(got) != in || !json.Valid(got) {
		t.Fatalf("depth 10000 rejected: %v", err)
	}
	in = `[` + in + `]`
	if _, err := canonical.Transform([]byte(in)); err == nil || json.Valid([]byte(in)) {
		t.Fatalf("depth 10001: Transform err %v, json.Valid %v; want both to reject", err, json.Valid([]byte(in)))
	}
}

func TestIdempotence(t *testing.T) {
	t.Parallel()
	inputs := []string{
		`{"numbers":[333333333.33333329,1E30,4.50,2e-3,1e-27],"string":"\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/","literals":[null,true,false]}`,
	}
	for _, tc := range validInputs {
		inputs = append(inputs, tc.in)
	}
	for _, v := range numberVectors {
		inputs = append(inputs, strconv.FormatFloat(math.Float64frombits(v.bits), 'g', -1, 64))
	}
	for _, in := range inputs {
		once, err := canonical.Transform([]byte(in))
		if err != nil {
			t.Fatalf("Transform(%s): %v", in, err)
		}
		twice, err := canonical.Transform(once)
		if err != nil || !bytes.Equal(once, twice) {
			t.Errorf("not idempotent: %s -> %s -> %s, %v", in, once, twice, err)
		}
	}
}

type approval struct {
	ID        string            `json:"id"`
	Title     string            `json:"title"`
	Amount    float64           `json:"amount"`
	Count     int               `json:"count"`
	Approved  bool              `json:"approved"`
	Tags      []string          `json:"tags"`
	Meta      map[string]string `json:"meta"`
	Note      string            `json:"note,omitempty"`
	Unchanged string            `json:"-"`
}

func sampleApproval() approval {
	return approval{
		ID:       "req-1",
		Title:    "Ship <v2> & \u2028 \"quoted\" 😀",
		Amount:   1234.5,
		Count:    3,
		Approved: true,
		Tags:     []string{"b", "a"},
		Meta:     map[string]string{"z": "1", "é": "2", "a": "3"},
	}
}

func TestMarshalStruct(t *testing.T) {
	t.Parallel()
	v := sampleApproval()
	got, err := canonical.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	viaTransform, err := canonical.Transform(plain)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, viaTransform) {
		t.Fatalf("Marshal = %s\nTransform(json.Marshal) = %s", got, viaTransform)
	}
	want := `{"amount":1234.5,"approved":true,"count":3,"id":"req-1","meta":{"a":"3","z":"1","é":"2"},"tags":["b","a"],"title":"Ship <v2> & ` + "\u2028" + ` \"quoted\" 😀"}`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestDigest(t *testing.T) {
	t.Parallel()
	base := sampleApproval()
	d, err := canonical.Digest(base)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(d) {
		t.Fatalf("digest %q is not 64 lowercase hex characters", d)
	}
	b, _ := canonical.Marshal(base)
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != d {
		t.Fatalf("Digest is not SHA-256 of Marshal")
	}
	// Same data in another form (map order, field order) gives the same digest.
	same := map[string]any{
		"title": base.Title, "tags": []any{"b", "a"}, "meta": map[string]any{"é": "2", "a": "3", "z": "1"},
		"id": "req-1", "count": 3.0, "approved": true, "amount": 1234.50,
	}
	if d2, err := canonical.Digest(same); err != nil || d2 != d {
		t.Fatalf("equivalent map digest %s, %v; want %s", d2, err, d)
	}

	mutations := map[string]func(*approval){
		"id":       func(a *approval) { a.ID = "req-2" },
		"title":    func(a *approval) { a.Title += " " },
		"amount":   func(a *approval) { a.Amount = 1234.51 },
		"count":    func(a *approval) { a.Count = 4 },
		"approved": func(a *approval) { a.Approved = false },
		"tags":     func(a *approval) { a.Tags = []string{"a", "b"} },
		"tags nil": func(a *approval) { a.Tags = nil },
		"meta":     func(a *approval) { a.Meta["z"] = "2" },
		"note":     func(a *approval) { a.Note = "n" },
	}
	for name, mutate := range mutations {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			v := sampleApproval()
			mutate(&v)
			d2, err := canonical.Digest(v)
			if err != nil {
				t.Fatal(err)
			}
			if d2 == d {
				t.Errorf("digest unchanged after changing %s", name)
			}
		})
	}
	t.Run("ignored field", func(t *testing.T) {
		t.Parallel()
		v := sampleApproval()
		v.Unchanged = "x"
		if d2, _ := canonical.Digest(v); d2 != d {
			t.Errorf(`json:"-" field changed the digest`)
		}
	})
}

func TestMarshalErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		v    any
	}{
		{"NaN", math.NaN()},
		{"Inf", math.Inf(1)},
		{"channel", make(chan int)},
		{"raw duplicate", json.RawMessage(`{"a":1,"a":2}`)},
		{"raw overflow", json.RawMessage(`1e400`)},
		{"raw lone surrogate", json.RawMessage(`"\ud800"`)},
		{"number overflow", json.Number("1e400")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got, err := canonical.Marshal(tc.v); err == nil {
				t.Errorf("Marshal = %s; want error", got)
			}
			if got, err := canonical.Digest(tc.v); err == nil || got != "" {
				t.Errorf("Digest = %q, %v; want error", got, err)
			}
		})
	}
}

func TestAppendString(t *testing.T) {
	t.Parallel()
	var all strings.Builder
	for r := rune(0); r < 0x80; r++ {
		all.WriteRune(r)
	}
	tests := []struct{ in, want string }{
		{"", `""`},
		{"plain", `"plain"`},
		{`"`, `"\""`},
		{`\`, `"\\"`},
		{`a"b\c`, `"a\"b\\c"`},
		{"\b\t\n\f\r", `"\b\t\n\f\r"`},
		{"\x00\x01\x0b\x0e\x1f", `"\u0000\u0001\u000b\u000e\u001f"`},
		{"\x7f", "\"\x7f\""},
		{"<>&", `"<>&"`},
		{"/", `"/"`},
		{"\u2028\u2029", "\"\u2028\u2029\""},
		{"😀 é € \ufb33 \uffff", "\"😀 é € \ufb33 \uffff\""},
		{all.String(), ""}, // compared against Transform only
		// Invalid UTF-8 becomes U+FFFD per byte, exactly as encoding/json does.
		{"a\xffb", "\"a\ufffdb\""},
		{"\xe2\x82", "\"\ufffd\ufffd\""},
		{"\xed\xa0\x80", "\"\ufffd\ufffd\ufffd\""},
		{"\xc0\xaf\"", "\"\ufffd\ufffd\\\"\""},
	}
	for _, tc := range tests {
		t.Run(strconv.Quote(tc.in), func(t *testing.T) {
			t.Parallel()
			got := canonical.AppendString(nil, tc.in)
			if tc.want != "" && string(got) != tc.want {
				t.Errorf("AppendString(%q) = %s; want %s", tc.in, got, tc.want)
			}
			plain, err := json.Marshal(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			viaTransform, err := canonical.Transform(plain)
			if err != nil || !bytes.Equal(got, viaTransform) {
				t.Errorf("AppendString(%q) = %s; Transform = %s, %v", tc.in, got, viaTransform, err)
			}
			viaMarshal, err := canonical.Marshal(tc.in)
			if err != nil || !bytes.Equal(got, viaMarshal) {
				t.Errorf("AppendString(%q) = %s; Marshal = %s, %v", tc.in, got, viaMarshal, err)
			}
			if !utf8.Valid(got) {
				t.Errorf("AppendString(%q) produced invalid UTF-8", tc.in)
			}
			prefixed := canonical.AppendString([]byte(`{"k":`), tc.in)
			if string(prefixed) != `{"k":`+string(got) {
				t.Errorf("AppendString does not append: %s", prefixed)
			}
		})
	}
}

// TestAppendStringHeader mirrors how the ledger builds a header by hand.
func TestAppendStringHeader(t *testing.T) {
	t.Parallel()
	prev, kind := "ab\u2028\"c", "approval<&>"
	b := []byte(`{"kind":`)
	b = canonical.AppendString(b, kind)
	b = append(b, `,"prev":`...)
	b = canonical.AppendString(b, prev)
	b = append(b, '}')
	want, err := canonical.Marshal(map[string]string{"prev": prev, "kind": kind})
	if err != nil || !bytes.Equal(b, want) {
		t.Fatalf("hand-built %s\nMarshal    %s, %v", b, want, err)
	}
}

func FuzzTransform(f *testing.F) {
	for _, tc := range validInputs {
		f.Add([]byte(tc.in))
	}
	for _, v := range numberVectors {
		f.Add([]byte(strconv.FormatFloat(math.Float64frombits(v.bits), 'g', -1, 64)))
		f.Add([]byte(v.want))
	}
	for _, s := range []string{
		`{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001],"string":"\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/","literals":[null,true,false]}`,
		`{"\u20ac":1,"\r":2,"\ufb33":3,"1":4,"\ud83d\ude00":5,"\u0080":6,"\u00f6":7}`,
		`{"a":1,"a":2}`, `"\ud800"`, `1e400`, "\"\xff\"", `[1,]`, `{} x`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := canonical.Transform(in)
		if err != nil {
			return
		}
		// Never more permissive than encoding/json's grammar.
		if !json.Valid(in) {
			t.Fatalf("accepted input that encoding/json rejects: %q", in)
		}
		if !json.Valid(out) || !utf8.Valid(out) {
			t.Fatalf("output is not valid JSON/UTF-8: %q -> %q", in, out)
		}
		again, err := canonical.Transform(out)
		if err != nil {
			t.Fatalf("output rejected: %q -> %q: %v", in, out, err)
		}
		if !bytes.Equal(out, again) {
			t.Fatalf("not a fixed point: %q -> %q -> %q", in, out, again)
		}
		// Canonicalization must not change meaning.
		var vin, vout any
		if err := json.Unmarshal(in, &vin); err != nil {
			t.Fatalf("encoding/json cannot decode accepted input %q: %v", in, err)
		}
		if err := json.Unmarshal(out, &vout); err != nil {
			t.Fatalf("encoding/json cannot decode output %q: %v", out, err)
		}
		if !reflect.DeepEqual(vin, vout) {
			t.Fatalf("meaning changed: %q -> %q", in, out)
		}
	})
}

func BenchmarkMarshal(b *testing.B) {
	v := sampleApproval()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := canonical.Marshal(v); err != nil {
			b.Fatal(err)
		}
	}
}
