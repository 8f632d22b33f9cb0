package web

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
)

// TestPeoplePageMarksDisabledAndRevoked renders the people page: a
// disabled person and a revoked key say so, with when, and names are
// escaped.
func TestPeoplePageMarksDisabledAndRevoked(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)
	human, iso := since(&at)
	v := peopleView{Owner: true,
		People: []personRow{
			{Actor: signoff.Actor{ID: "act_live", Name: "olivia", Role: signoff.RoleOwner}},
			{Actor: signoff.Actor{ID: "act_gone", Name: "<b>mallory</b>", Role: signoff.RoleOperator, DisabledAt: &at}, Disabled: human, DisabledISO: iso},
		},
		Keys: []keyRow{
			{ApproverKey: signoff.ApproverKey{ID: "0123456789abcdef", ActorID: "act_live", CreatedAt: at}, Holder: "olivia"},
			{ApproverKey: signoff.ApproverKey{ID: "fedcba9876543210", ActorID: "act_gone", CreatedAt: at, RevokedAt: &at}, Holder: "<b>mallory</b>", Revoked: human, RevokedISO: iso},
		},
	}
	var buf bytes.Buffer
	me := signoff.Actor{ID: "act_live", Name: "olivia", Role: signoff.RoleOwner}
	if err := parsePages()["people"].ExecuteTemplate(&buf, "base", page{Title: "People and keys", Me: &me, Body: v}); err != nil {
		t.Fatal(err)
	}
	body := buf.String()
	row := func(id string) string {
		i := strings.Index(body, `id="`+id+`"`)
		if i < 0 {
			t.Fatalf("the page has no row %s", id)
		}
		return body[i : i+strings.Index(body[i:], "</tr>")]
	}
	tests := []struct {
		row, want, not string
	}{
		{"person-act_gone", "Disabled</strong> since <time datetime=\"2026-12-01T09:30:00Z\">2026-12-01 09:30:00 UTC", "Enabled"},
		{"person-act_live", "Enabled", "Disabled"},
		{"key-fedcba9876543210", "Revoked</strong> since <time datetime=\"2026-12-01T09:30:00Z\">", "Valid"},
		{"key-0123456789abcdef", "Valid", "Revoked"},
	}
	for _, tt := range tests {
		r := row(tt.row)
		if !strings.Contains(r, tt.want) || strings.Contains(r, tt.not) {
			t.Errorf("row %s = %q, want %q and not %q", tt.row, r, tt.want, tt.not)
		}
	}
	if strings.Contains(body, "<b>mallory</b>") || !strings.Contains(body, "&lt;b&gt;mallory&lt;/b&gt;") {
		t.Error("the page shows a name unescaped")
	}
	if !strings.Contains(body, "signoff keys revoke KEY_ID") || !strings.Contains(body, "signoff actor disable ACTOR_ID") {
		t.Error("the page does not say how to revoke a key or disable a person")
	}
}
