package changedesk_test

import (
	"strings"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/changedesk"
)

func TestParseIntent(t *testing.T) {
	t.Parallel()
	flags := []signoff.Flag{
		{Key: "checkout_v2", Environment: "prod", Type: signoff.FlagBoolean},
		{Key: "checkout_v2", Environment: "staging", Type: signoff.FlagBoolean},
		{Key: "search_limit", Environment: "prod", Type: signoff.FlagNumber},
		{Key: "banner", Environment: "dev", Type: signoff.FlagString},
	}
	tests := []struct {
		text, target, params, err string
	}{
		{"Disable checkout_v2 in prod: checkout returns 500s", "flag:prod/checkout_v2", `{"value":false}`, ""},
		{"please turn off CHECKOUT_V2 in production now", "flag:prod/checkout_v2", `{"value":false}`, ""},
		{"enable checkout_v2 on staging", "flag:staging/checkout_v2", `{"value":true}`, ""},
		{"switch on checkout_v2 in stg", "flag:staging/checkout_v2", `{"value":true}`, ""},
		{"set search_limit to 25", "flag:prod/search_limit", `{"value":25}`, ""},
		{"set banner to Maintenance tonight", "flag:dev/banner", `{"value":"Maintenance tonight"}`, ""},
		{"disable checkout_v2", "", "", "say which environment"},
		{"disable checkout_v2 in prod and staging", "", "", "several environments"},
		{"disable checkout_v2 and search_limit in prod", "", "", "several flags"},
		{"disable the new payment flow", "", "", "no known flag"},
		{"look at checkout_v2 in prod", "", "", "supports enable, disable"},
		{"enable then disable checkout_v2 in prod", "", "", "both to enable and to disable"},
		{"set search_limit to 5 and enable it", "", "", "both sets and toggles"},
		{"", "", "", "no known flag"},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			t.Parallel()
			in, err := changedesk.ParseIntent(tt.text, flags)
			if tt.err != "" {
				if err == nil || signoff.ErrorCode(err) != signoff.EINVALID || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("ParseIntent = %+v, %v; want EINVALID containing %q", in, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if in.Target != tt.target || string(in.Params) != tt.params {
				t.Fatalf("ParseIntent = %s %s, want %s %s", in.Target, in.Params, tt.target, tt.params)
			}
		})
	}
}
