package change_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/change"
)

func TestParse(t *testing.T) {
	t.Parallel()
	p := mustPolicy(t, policyYAML)
	checks := []struct {
		name      string
		got, want any
	}{
		{"protected", p.ProtectedTargets, []string{"flag:prod/payments_*", "flag:prod/checkout_legacy", "file:.github/**"}},
		{"allowed", p.AllowedTargets, []string{"flag:*/checkout_*", "file:VERSION", "runbook:*"}},
		{"environments", p.Environments, []string{"staging", "prod"}},
		{"min reason", p.MinReasonLength, 20},
		{"approvals", p.Approvals, change.Approvals{Required: 2, Group: []string{approver1, approver2, approver3}}},
		{"no self-approval", p.NoSelfApproval, true},
		{"proposer cannot approve", p.ProposerCannotApprove, true},
		{"windows", len(p.Windows), 1},
		{"window", p.Windows[0].String(), "mon,tue,wed,thu,fri 08:00-18:00 Europe/Berlin"},
		{"ttl", p.TTL(), 23 * time.Hour},
		{"runbooks", p.Runbooks, map[string]change.Runbook{"restart-cache": {}, "warm-cdn": {Network: true}}},
		{"bypass", p.EmergencyBypass, change.EmergencyBypass{Roles: []signoff.Role{signoff.RoleOwner}, Minutes: 30}},
		{"bypass owner", p.EmergencyBypass.Allows(signoff.RoleOwner), true},
		{"bypass operator", p.EmergencyBypass.Allows(signoff.RoleOperator), false},
		{"bypass duration", p.EmergencyBypass.Duration(), 30 * time.Minute},
		{"preapproved flag", p.RollbackPreapproved(change.KindFlag), true},
		{"preapproved file", p.RollbackPreapproved(change.KindFile), false},
		{"quorum", p.Quorum(), change.Quorum{Required: 2, Group: []string{approver1, approver2, approver3}, NoSelfApproval: true, ProposerCannotApprove: true}},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %#v, want %#v", c.name, c.got, c.want)
		}
	}
}

// TestParseDefaults: an empty policy denies everything and needs one
// approval from a group nobody is in.
func TestParseDefaults(t *testing.T) {
	t.Parallel()
	for _, src := range []string{"", "\n# nothing here\n", "{}"} {
		p := mustPolicy(t, src)
		want := change.Policy{ProtectedTargets: []string{}, AllowedTargets: []string{}, Environments: []string{},
			MinReasonLength: 20, Approvals: change.Approvals{Required: 1, Group: []string{}}, NoSelfApproval: true,
			ProposerCannotApprove: true, Windows: []change.Window{}, ApprovalTTLHours: 23, Runbooks: map[string]change.Runbook{},
			EmergencyBypass: change.EmergencyBypass{Roles: []signoff.Role{}}, PreapprovedRollbacks: []string{}}
		if !reflect.DeepEqual(p, want) {
			t.Errorf("Parse(%q) = %#v\nwant %#v", src, p, want)
		}
		if err := p.CheckTarget("flag:prod/checkout_v2"); signoff.ErrorCode(err) != signoff.EFORBIDDEN {
			t.Errorf("the default policy allows a target: %v", err)
		}
		if _, ok := p.InWindow(now); ok {
			t.Errorf("the default policy has an open window")
		}
	}
	// Defaults written out are the same policy.
	explicit := mustPolicy(t, "min_reason_length: 20\napprovals: {required: 1}\nno_self_approval: true\nproposer_cannot_approve: true\napproval_ttl_hours: 23\n")
	if explicit.Digest() != mustPolicy(t, "").Digest() {
		t.Errorf("explicit defaults give another digest than omitted ones")
	}
	// Booleans can be turned off.
	off := mustPolicy(t, "no_self_approval: false\nproposer_cannot_approve: false\n")
	if off.NoSelfApproval || off.ProposerCannotApprove {
		t.Errorf("explicit false was ignored")
	}
}

func TestParseInvalid(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, src, bad string
	}{
		{"unknown key", "colour: red\n", "field colour not found"},
		{"unknown nested key", "approvals: {required: 1, quorum: 2}\n", "field quorum not found"},
		{"wrong type", "min_reason_length: twenty\n", "cannot unmarshal"},
		{"list for a scalar", "approval_ttl_hours: [1]\n", "cannot unmarshal"},
		{"duplicate key", "environments: [prod]\nenvironments: [staging]\n", "already defined"},
		{"two documents", "environments: [prod]\n---\nenvironments: [staging]\n", "single YAML document"},
		{"not a mapping", "- a\n- b\n", "cannot unmarshal"},
		{"too large", "environments: [" + strings.Repeat("prod, ", 12000) + "prod]\n", "larger than"},
		{"protected without a kind", "protected_targets: [\"prod/*\"]\n", "protected_targets"},
		{"protected unknown kind", "protected_targets: [\"db:prod\"]\n", "must start with flag:, file: or runbook:"},
		{"allowed kind only", "allowed_targets: [\"flag:\"]\n", "matches nothing"},
		{"allowed with a space", "allowed_targets: [\"flag:prod/a b\"]\n", "printable ASCII"},
		{"allowed non-ASCII", "allowed_targets: [\"flag:prod/é\"]\n", "printable ASCII"},
		{"allowed pattern too long", "allowed_targets: [\"file:" + strings.Repeat("a", 300) + "\"]\n", "longer than"},
		{"allowed twice", "allowed_targets: [\"file:VERSION\", \"file:VERSION\"]\n", "twice"},
		{"environment upper case", "environments: [Prod]\n", "environments"},
		{"environment twice", "environments: [prod, prod]\n", "twice"},
		{"min reason zero", "min_reason_length: 0\n", "min_reason_length"},
		{"min reason huge", "min_reason_length: 5000\n", "min_reason_length"},
		{"required zero", "approvals: {required: 0}\n", "approvals.required"},
		{"required negative", "approvals: {required: -1}\n", "approvals.required"},
		{"required over the group", "approvals: {required: 2, group: [" + approver1 + "]}\n", "only 1 members"},
		{"group member not an actor id", "approvals: {group: [alice]}\n", "not an actor id"},
		{"group member twice", "approvals: {group: [" + approver1 + ", " + approver1 + "]}\n", "twice"},
		{"ttl zero", "approval_ttl_hours: 0\n", "approval_ttl_hours"},
		{"ttl over a week", "approval_ttl_hours: 169\n", "approval_ttl_hours"},
		{"window without days", "windows: [{from: \"08:00\", to: \"18:00\"}]\n", "days is required"},
		{"window bad day", "windows: [{days: [monday], from: \"08:00\", to: \"18:00\"}]\n", "day \"monday\""},
		{"window day twice", "windows: [{days: [mon, mon], from: \"08:00\", to: \"18:00\"}]\n", "twice"},
		{"window from unpadded", "windows: [{days: [mon], from: \"8:00\", to: \"18:00\"}]\n", "from \"8:00\""},
		{"window from 24:00", "windows: [{days: [mon], from: \"24:00\", to: \"18:00\"}]\n", "from \"24:00\""},
		{"window from missing", "windows: [{days: [mon], to: \"18:00\"}]\n", "from \"\""},
		{"window to 24:01", "windows: [{days: [mon], from: \"08:00\", to: \"24:01\"}]\n", "to \"24:01\""},
		{"window minutes 60", "windows: [{days: [mon], from: \"08:60\", to: \"18:00\"}]\n", "from \"08:60\""},
		{"window empty", "windows: [{days: [mon], from: \"08:00\", to: \"08:00\"}]\n", "equal"},
		{"window unknown zone", "windows: [{days: [mon], from: \"08:00\", to: \"18:00\", tz: Mars/Olympus}]\n", "IANA"},
		{"window local zone", "windows: [{days: [mon], from: \"08:00\", to: \"18:00\", tz: Local}]\n", "not Local"},
		{"window unknown key", "windows: [{days: [mon], start: \"08:00\"}]\n", "field start not found"},
		{"second window bad", "windows: [{days: [mon], from: \"08:00\", to: \"18:00\"}, {days: [sun], from: \"x\", to: \"18:00\"}]\n", "windows[1]"},
		{"runbook bad name", "runbooks: {\"Restart Cache\": {network: false}}\n", "runbooks"},
		{"runbook unknown key", "runbooks: {restart-cache: {net: true}}\n", "field net not found"},
		{"runbook network not bool", "runbooks: {restart-cache: {network: maybe}}\n", "cannot unmarshal"},
		{"bypass for an agent", "emergency_bypass: {roles: [fixer], minutes: 10}\n", "operator or owner only"},
		{"bypass for a viewer", "emergency_bypass: {roles: [viewer], minutes: 10}\n", "operator or owner only"},
		{"bypass role twice", "emergency_bypass: {roles: [owner, owner], minutes: 10}\n", "twice"},
		{"bypass without minutes", "emergency_bypass: {roles: [owner]}\n", "emergency_bypass.minutes"},
		{"bypass too long", "emergency_bypass: {roles: [owner], minutes: 241}\n", "emergency_bypass.minutes"},
		{"bypass minutes without roles", "emergency_bypass: {minutes: 10}\n", "no roles"},
		{"preapproved unknown kind", "preapproved_rollbacks: [deploy]\n", "not a kind"},
		{"preapproved twice", "preapproved_rollbacks: [flag, flag]\n", "twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := change.Parse([]byte(tt.src))
			if code := signoff.ErrorCode(err); code != signoff.EINVALID || !strings.Contains(signoff.ErrorMessage(err), tt.bad) {
				t.Fatalf("Parse = %v (code %q); want EINVALID containing %q", err, code, tt.bad)
			}
		})
	}
}

func TestWindowContains(t *testing.T) {
	t.Parallel()
	at := func(day, hh, mm int) time.Time { return time.Date(2026, 11, 30+day, hh, mm, 0, 0, time.UTC) } // day 0 is Monday 30 Nov
	tests := []struct {
		name   string
		window string
		t      time.Time
		want   bool
	}{
		{"inside", `{days: [wed], from: "08:00", to: "18:00"}`, at(2, 12, 0), true},
		{"from is inclusive", `{days: [wed], from: "08:00", to: "18:00"}`, at(2, 8, 0), true},
		{"to is exclusive", `{days: [wed], from: "08:00", to: "18:00"}`, at(2, 18, 0), false},
		{"another day", `{days: [wed], from: "08:00", to: "18:00"}`, at(3, 12, 0), false},
		{"whole day until 24:00", `{days: [wed], from: "00:00", to: "24:00"}`, at(2, 23, 59), true},
		{"whole day ends at midnight", `{days: [wed], from: "00:00", to: "24:00"}`, at(3, 0, 0), false},
		{"overnight evening", `{days: [wed], from: "22:00", to: "02:00"}`, at(2, 23, 0), true},
		{"overnight morning after", `{days: [wed], from: "22:00", to: "02:00"}`, at(3, 1, 59), true},
		{"overnight ends", `{days: [wed], from: "22:00", to: "02:00"}`, at(3, 2, 0), false},
		{"overnight morning of the listed day", `{days: [wed], from: "22:00", to: "02:00"}`, at(2, 1, 0), false},
		{"overnight sunday into monday", `{days: [sun], from: "22:00", to: "02:00"}`, at(7, 1, 0), true},
		{"zone: 13:00 Berlin in winter", `{days: [wed], from: "13:00", to: "14:00", tz: Europe/Berlin}`, at(2, 12, 0), true},
		{"zone: 12:00 UTC is not 12:00 Berlin", `{days: [wed], from: "12:00", to: "13:00", tz: Europe/Berlin}`, at(2, 12, 0), false},
		{"zone: weekday in the zone", `{days: [thu], from: "00:00", to: "01:00", tz: Asia/Tokyo}`, at(2, 15, 30), true},
		{"zone: summer time", `{days: [wed], from: "13:00", to: "14:00", tz: Europe/Berlin}`, time.Date(2026, 7, 1, 11, 30, 0, 0, time.UTC), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := mustPolicy(t, "windows: ["+tt.window+"]\n")
			if got := p.Windows[0].Contains(tt.t); got != tt.want {
				t.Fatalf("%s contains %s = %v, want %v", p.Windows[0], tt.t, got, tt.want)
			}
		})
	}
	// A window built by hand has no resolved zone: only UTC works, any
	// other zone never opens.
	if !(change.Window{Days: []string{"wed"}, From: "00:00", To: "24:00"}).Contains(at(2, 1, 0)) {
		t.Errorf("a hand-built UTC window is closed")
	}
	if (change.Window{Days: []string{"wed"}, From: "00:00", To: "24:00", TZ: "Europe/Berlin"}).Contains(at(2, 1, 0)) {
		t.Errorf("a hand-built window with an unresolved zone is open")
	}
}

func TestCheckTarget(t *testing.T) {
	t.Parallel()
	p := mustPolicy(t, policyYAML)
	tests := []struct {
		target, code, bad string
	}{
		{"flag:prod/checkout_v2_new_payment_flow", "", ""},
		{"file:VERSION", "", ""},
		{"runbook:restart-cache", "", ""},
		{"flag:prod/checkout_legacy", signoff.EFORBIDDEN, "protected"},
		{"flag:prod/payments_v3", signoff.EFORBIDDEN, "protected"},
		{"flag:prod/search", signoff.EFORBIDDEN, "no allowed_targets"},
		{"flag:dev/checkout_v2", signoff.EFORBIDDEN, "environment dev"},
		{"runbook:drop-db", signoff.EFORBIDDEN, "not allowlisted"},
		{"file:../x", signoff.EINVALID, ".."},
	}
	for _, tt := range tests {
		err := p.CheckTarget(tt.target)
		if signoff.ErrorCode(err) != tt.code || !strings.Contains(signoff.ErrorMessage(err), tt.bad) {
			t.Errorf("CheckTarget(%s) = %v; want code %q containing %q", tt.target, err, tt.code, tt.bad)
		}
	}
	if err := p.AllowsNow("file:VERSION", now); err != nil {
		t.Errorf("AllowsNow inside the window = %v", err)
	}
	if err := p.AllowsNow("file:VERSION", now.Add(10*time.Hour)); signoff.ErrorCode(err) != signoff.EFORBIDDEN {
		t.Errorf("AllowsNow at 23:00 Berlin = %v, want EFORBIDDEN", err)
	}
	if err := p.AllowsNow("flag:prod/search", now); signoff.ErrorCode(err) != signoff.EFORBIDDEN {
		t.Errorf("AllowsNow for a target not allowed = %v, want EFORBIDDEN", err)
	}
}

func TestPolicyDigest(t *testing.T) {
	t.Parallel()
	base := mustPolicy(t, policyYAML)
	d := base.Digest()
	if !change.ValidDigest(d) || mustPolicy(t, policyYAML).Digest() != d {
		t.Fatalf("Digest %q is not a stable SHA-256", d)
	}
	// The same policy written in flow style has the same digest.
	flow, err := json.Marshal(base)
	if err != nil {
		t.Fatal(err)
	}
	if got := mustPolicy(t, string(flow)).Digest(); got != d {
		t.Errorf("the policy as JSON has digest %s, want %s", got, d)
	}
	edits := map[string][2]string{
		"protected":   {`"flag:prod/checkout_legacy", `, ``},
		"allowed":     {`"file:VERSION", `, ``},
		"environment": {`[staging, prod]`, `[prod]`},
		"reason":      {`min_reason_length: 20`, `min_reason_length: 21`},
		"required":    {`required: 2`, `required: 3`},
		"group":       {`, ` + approver3 + `]`, `]`},
		"self":        {`no_self_approval: true`, `no_self_approval: false`},
		"proposer":    {`proposer_cannot_approve: true`, `proposer_cannot_approve: false`},
		"days":        {`[mon, tue, wed, thu, fri]`, `[mon, tue, wed, thu]`},
		"from":        {`"08:00"`, `"09:00"`},
		"to":          {`"18:00"`, `"17:00"`},
		"tz":          {`Europe/Berlin`, `Europe/Paris`},
		"ttl":         {`approval_ttl_hours: 23`, `approval_ttl_hours: 24`},
		"runbook":     {`warm-cdn: {network: true}`, `warm-cdn: {network: false}`},
		"bypass":      {`minutes: 30`, `minutes: 31`},
		"preapproved": {`[flag]`, `[flag, file]`},
	}
	seen := map[string]string{d: "base"}
	for name, e := range edits {
		src := strings.Replace(policyYAML, e[0], e[1], 1)
		if src == policyYAML {
			t.Fatalf("edit %s did not apply", name)
		}
		got := mustPolicy(t, src).Digest()
		if other, dup := seen[got]; dup {
			t.Errorf("edit %s gives the digest of %s", name, other)
		}
		seen[got] = name
	}
}

// FuzzParsePolicy: Parse never panics, and a policy it accepts has a
// stable digest and reads back from its own JSON (which is YAML) to the
// same digest.
func FuzzParsePolicy(f *testing.F) {
	for _, s := range []string{policyYAML, "", "{}", "colour: red", "windows: [{days: [mon], from: \"22:00\", to: \"02:00\", tz: Asia/Tokyo}]",
		"approvals: {required: 2, group: [" + approver1 + "]}", "runbooks: {a: {network: true}}", "a: &x [*x]", "- 1", "allowed_targets: ['file:**']"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		p, err := change.Parse(src)
		if err != nil {
			if signoff.ErrorCode(err) != signoff.EINVALID {
				t.Fatalf("Parse error %v is not EINVALID", err)
			}
			return
		}
		d := p.Digest()
		if !change.ValidDigest(d) || p.Digest() != d {
			t.Fatalf("digest %q is not stable", d)
		}
		j, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		q, err := change.Parse(j)
		if err != nil {
			t.Fatalf("Parse of the policy's own JSON %s: %v", j, err)
		}
		if q.Digest() != d {
			t.Fatalf("round trip changed the digest:\n%s", j)
		}
		_ = change.Review(basePlan(), baseRequest(), p, now)
	})
}
