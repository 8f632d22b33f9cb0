package agent

import (
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

type coerceArgs struct {
	Count    int      `json:"count"`
	Score    float64  `json:"score"`
	Steps    []string `json:"steps"`
	Versions []int    `json:"versions,omitempty"`
	Crash    bool     `json:"crash"`
	Verdict  string   `json:"verdict"`
	Meta     *struct {
		Device string `json:"device"`
	} `json:"meta,omitempty"`
}

func TestCoerce(t *testing.T) {
	t.Parallel()
	s, err := jsonschema.For[coerceArgs](nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Properties["verdict"].Enum = []any{"new", "duplicate", "needs_info"}
	s.Properties["score"].Maximum = jsonschema.Ptr(1.0)
	r, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, raw, want string
		valid           bool
	}{
		{"already right", `{"count":3,"score":0.5,"steps":["a"],"crash":true,"verdict":"new"}`,
			`{"count":3,"crash":true,"score":0.5,"steps":["a"],"verdict":"new"}`, true},
		{"numbers as words", `{"count":"twenty-one","score":"0.5","steps":["a"],"crash":true,"verdict":"new"}`,
			`{"count":21,"crash":true,"score":0.5,"steps":["a"],"verdict":"new"}`, true},
		{"hundreds", `{"count":"one hundred and five","score":0,"steps":[],"crash":false,"verdict":"new"}`,
			`{"count":105,"crash":false,"score":0,"steps":[],"verdict":"new"}`, true},
		{"percent to fraction", `{"count":1,"score":"85%","steps":[],"crash":false,"verdict":"new"}`,
			`{"count":1,"crash":false,"score":0.85,"steps":[],"verdict":"new"}`, true},
		{"numbered steps in one string", `{"count":1,"score":1,"steps":"1. open the app 2. tap pay on version 2. 3. see error","crash":"yes","verdict":"new"}`,
			`{"count":1,"crash":true,"score":1,"steps":["open the app","tap pay on version 2.","see error"],"verdict":"new"}`, true},
		{"steps one per line", "{\"count\":1,\"score\":1,\"steps\":\"- open\\n- pay\",\"crash\":\"no\",\"verdict\":\"new\"}",
			`{"count":1,"crash":false,"score":1,"steps":["open","pay"],"verdict":"new"}`, true},
		{"list as JSON text", `{"count":1,"score":1,"steps":"[\"a\",\"b\"]","versions":"1, 2","crash":1,"verdict":"new"}`,
			`{"count":1,"crash":true,"score":1,"steps":["a","b"],"verdict":"new","versions":[1,2]}`, true},
		{"single value for a list", `{"count":1,"score":1,"steps":"just one step","versions":3,"crash":false,"verdict":"new"}`,
			`{"count":1,"crash":false,"score":1,"steps":["just one step"],"verdict":"new","versions":[3]}`, true},
		{"enum case and key case", `{"Count":1,"score":1,"steps":[],"crash":false,"verdict":" Duplicate "}`,
			`{"count":1,"crash":false,"score":1,"steps":[],"verdict":"duplicate"}`, true},
		{"double-encoded arguments", `"{\"count\":1,\"score\":1,\"steps\":[],\"crash\":false,\"verdict\":\"new\"}"`,
			`{"count":1,"crash":false,"score":1,"steps":[],"verdict":"new"}`, true},
		{"code fence", "```json\n{\"count\":1,\"score\":1,\"steps\":[],\"crash\":false,\"verdict\":\"new\"}\n```",
			`{"count":1,"crash":false,"score":1,"steps":[],"verdict":"new"}`, true},
		{"nested object as text", `{"count":1,"score":1,"steps":[],"crash":false,"verdict":"new","meta":"{\"device\":\"Pixel\"}"}`,
			`{"count":1,"crash":false,"meta":{"device":"Pixel"},"score":1,"steps":[],"verdict":"new"}`, true},
		// What cannot be read is left for validation to refuse: nothing is invented.
		{"unreadable number", `{"count":"lots","score":1,"steps":[],"crash":false,"verdict":"new"}`, "", false},
		{"unknown enum", `{"count":1,"score":1,"steps":[],"crash":false,"verdict":"maybe"}`, "", false},
		{"ambiguous boolean", `{"count":1,"score":1,"steps":[],"crash":"perhaps","verdict":"new"}`, "", false},
		{"missing field", `{"count":1,"score":1,"steps":[],"crash":false}`, "", false},
		{"unknown field", `{"count":1,"score":1,"steps":[],"crash":false,"verdict":"new","approve":true}`, "", false},
		{"out of range", `{"count":1,"score":"3","steps":[],"crash":false,"verdict":"new"}`, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v, _, err := Coerce(s, tc.raw)
			if err == nil {
				err = r.Validate(v)
			}
			if (err == nil) != tc.valid {
				t.Fatalf("valid = %v (%v), want %v; value %#v", err == nil, err, tc.valid, v)
			}
			if !tc.valid {
				return
			}
			got, _ := json.Marshal(v)
			if string(got) != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestCoerceRejectsGarbage(t *testing.T) {
	t.Parallel()
	s, _ := jsonschema.For[coerceArgs](nil)
	for _, raw := range []string{"not json", "{", `{"a":1} {"b":2}`, string(make([]byte, maxArgBytes+1))} {
		if _, _, err := Coerce(s, raw); err == nil {
			t.Errorf("Coerce(%.20q) succeeded", raw)
		}
	}
}

func FuzzCoerce(f *testing.F) {
	s, _ := jsonschema.For[coerceArgs](nil)
	for _, seed := range []string{`{"count":"three","steps":"1. a 2. b"}`, `"{}"`, "```{}```", `{"Count":"1,024"}`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		v, _, err := Coerce(s, raw)
		if err != nil {
			return
		}
		if _, err := json.Marshal(v); err != nil {
			t.Fatalf("coerced value does not marshal: %v", err)
		}
	})
}
