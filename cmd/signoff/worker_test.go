package main

import (
	"slices"
	"testing"

	"github.com/signoff-dev/signoff"
)

func TestParseQueues(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in      string
		want    []string
		invalid bool
	}{
		{"all", signoff.Queues, false},
		{"", signoff.Queues, false},
		{"none", []string{}, false},
		{"sandbox", []string{signoff.QueueSandbox}, false},
		{"triage, outbox,triage", []string{signoff.QueueTriage, signoff.QueueOutbox}, false},
		{"agent,default", []string{signoff.QueueAgent, signoff.QueueDefault}, false},
		{"notify", []string{signoff.QueueOutbox}, false},
		{"sandboxes", nil, true},
		{"triage,", nil, true},
	}
	for _, tc := range cases {
		got, err := parseQueues(tc.in)
		if tc.invalid {
			if signoff.ErrorCode(err) != signoff.EINVALID {
				t.Errorf("%q: %v %v, want EINVALID", tc.in, got, err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) || got == nil {
			t.Errorf("%q = %#v %v, want %#v", tc.in, got, err, tc.want)
		}
	}
}
