package airlock

import (
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// The tests of the vendor rule set build their tokens at run time from a
// seeded generator, so that no token-shaped literal sits in the source:
// every value is fake, of the shape the provider documents.

// vtGen makes fake token bodies, the same ones on every run.
type vtGen struct{ rng *rand.Rand }

func newVTGen() *vtGen { return &vtGen{rand.New(rand.NewPCG(29, 1))} }

const (
	vtDigits = "0123456789"
	vtUpper  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	vtLower  = "abcdefghijklmnopqrstuvwxyz"
	vtHex    = "0123456789abcdef"
	vtHEX    = "0123456789ABCDEF"
	vtBech32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"
)

// of returns n bytes of alphabet, with each of the classes in need (a
// letter of each string) at some position, so the value looks random.
func (g *vtGen) of(n int, alphabet string, need ...string) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[g.rng.IntN(len(alphabet))]
	}
	for k, set := range need {
		if k < n {
			b[(k*7+3)%n] = set[g.rng.IntN(len(set))]
		}
	}
	return string(b)
}

func (g *vtGen) alnum(n int) string {
	return g.of(n, vtDigits+vtUpper+vtLower, vtDigits, vtUpper, vtLower)
}
func (g *vtGen) lowAlnum(n int) string {
	return g.of(n, vtDigits+vtLower, vtDigits, vtLower)
}
func (g *vtGen) upAlnum(n int) string { return g.of(n, vtDigits+vtUpper, vtDigits, vtUpper) }
func (g *vtGen) hex(n int) string     { return g.of(n, vtHex, vtDigits, "abcdef") }
func (g *vtGen) HEX(n int) string     { return g.of(n, vtHEX, vtDigits, "ABCDEF") }
func (g *vtGen) digits(n int) string  { return g.of(n, vtDigits) }
func (g *vtGen) letters(n int) string { return g.of(n, vtUpper+vtLower, vtUpper, vtLower) }
func (g *vtGen) bech32(n int) string  { return g.of(n, vtBech32, vtDigits, vtUpper) }
func (g *vtGen) uuid() string {
	return g.hex(8) + "-" + g.hex(4) + "-" + g.hex(4) + "-" + g.hex(4) + "-" + g.hex(12)
}
func (g *vtGen) b64url(n int) string { return g.sprinkle(g.alnum(n), "-_") }
func (g *vtGen) b64(n int) string    { return g.sprinkle(g.alnum(n), "+/") }
func (g *vtGen) sprinkle(s, symbols string) string {
	// A symbol every so often inside, never first or last, never two in a
	// row: a value's last byte decides where the token ends.
	b := []byte(s)
	for i := 2; i < len(b)-2; i += 5 + g.rng.IntN(9) {
		b[i] = symbols[g.rng.IntN(len(symbols))]
	}
	return string(b)
}

// vtExample is one realistic token: text as it is pasted, and the part of
// it that goes (all of it unless the rule keeps a key name).
type vtExample struct {
	rule         string
	text, secret string
	whole        bool // text is a whole input, not a token to paste
}

// vtExamples are the positive examples, at least one for every rule,
// written from each provider's token format.
func vtExamples() []vtExample {
	g := newVTGen()
	var ex []vtExample
	add := func(rule string, tokens ...string) {
		for _, t := range tokens {
			ex = append(ex, vtExample{rule, t, t, false})
		}
	}
	add("1password-secret-key",
		"A3-"+g.upAlnum(6)+"-"+g.upAlnum(11)+"-"+g.upAlnum(5)+"-"+g.upAlnum(5)+"-"+g.upAlnum(5),
		"A3-"+g.upAlnum(6)+"-"+g.upAlnum(6)+"-"+g.upAlnum(5)+"-"+g.upAlnum(5)+"-"+g.upAlnum(5)+"-"+g.upAlnum(5))
	add("1password-service-account-token", "ops_eyJ"+g.b64(310)+"=")
	add("adobe-client-secret", "p8e-"+g.alnum(32))
	add("age-secret-key", "AGE-SECRET-KEY-1"+g.bech32(58))
	add("airtable-personnal-access-token", "pat"+g.alnum(14)+"."+g.hex(64))
	add("alibaba-access-key-id", "LTAI"+g.alnum(20))
	add("anthropic-admin-api-key", "sk-ant-admin01-"+g.b64url(93)+"AA")
	add("anthropic-api-key", "sk-ant-api03-"+g.b64url(93)+"AA")
	add("artifactory-api-key", "AKCp"+g.alnum(69))
	add("artifactory-reference-token", "cmVmd"+g.alnum(59))
	add("atlassian-api-token", "ATATT3"+g.b64url(177)+"="+g.HEX(8))
	add("aws-access-token", "AKIA"+g.upAlnum(16), "ASIA"+g.upAlnum(16), "ABIA"+g.upAlnum(16),
		"ACCA"+g.upAlnum(16), "A3T"+g.upAlnum(17), "AROA"+g.upAlnum(16), "AIDA"+g.upAlnum(16))
	add("aws-amazon-bedrock-api-key-long-lived", "ABSK"+g.b64(132)+"=")
	add("aws-amazon-bedrock-api-key-short-lived", "bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t"+g.b64(180)+"==")
	add("azure-ad-client-secret", g.alnum(3)+g.digits(1)+"Q~"+g.sprinkle(g.alnum(34), "_~.-"))
	add("clickhouse-cloud-api-secret-key", "4b1d"+g.alnum(38))
	add("clojars-api-token", "CLOJARS_"+g.alnum(60))
	add("cloudflare-origin-ca-key", "v1.0-"+g.hex(24)+"-"+g.hex(146))
	add("databricks-api-token", "dapi"+g.hex(32), "dapi"+g.hex(32)+"-2")
	add("digitalocean-access-token", "doo_v1_"+g.hex(64))
	add("digitalocean-pat", "dop_v1_"+g.hex(64))
	add("digitalocean-refresh-token", "dor_v1_"+g.hex(64))
	add("dockerhub-pat", "dckr_pat_"+g.b64url(27), "dckr_oat_"+g.b64url(32))
	add("doppler-api-token", "dp.pt."+g.alnum(43), "dp.st.prd."+g.alnum(43), "dp.sa."+g.alnum(43))
	add("dropbox-short-lived-api-token", "sl."+g.b64url(135))
	add("duffel-api-token", "duffel_test_"+g.b64url(43), "duffel_live_"+g.b64url(43))
	add("dynatrace-api-token", "dt0c01."+g.upAlnum(24)+"."+g.upAlnum(64))
	add("easypost-api-token", "EZAK"+g.alnum(54))
	add("easypost-test-api-token", "EZTK"+g.alnum(54))
	add("facebook-page-access-token", "EAAC"+g.alnum(160), "EAAM"+g.alnum(120))
	add("flutterwave-secret-key", "FLWSECK_TEST-"+g.hex(32)+"-X", "FLWSECK-"+g.hex(32)+"-X")
	add("flutterwave-encryption-key", "FLWSECK_TEST"+g.hex(12))
	add("flyio-access-token", "fo1_"+g.b64url(43), "fm2_"+g.b64(240)+"==", "fm1r_"+g.b64(160))
	add("frameio-api-token", "fio-u-"+g.b64url(64))
	add("gcp-api-key", "AIza"+g.b64url(35))
	add("github-app-token", "ghu_"+g.alnum(36), "ghs_"+g.alnum(36))
	add("github-fine-grained-pat", "github_pat_11"+g.upAlnum(20)+"_"+g.alnum(59))
	add("github-oauth", "gho_"+g.alnum(36))
	add("github-pat", "ghp_"+g.alnum(36))
	add("github-refresh-token", "ghr_"+g.alnum(36), "ghr_"+g.alnum(76))
	add("gitlab-cicd-job-token", "glcbt-64_"+g.b64url(20))
	add("gitlab-deploy-token", "gldt-"+g.b64url(20))
	add("gitlab-feature-flag-client-token", "glffct-"+g.b64url(20))
	add("gitlab-feed-token", "glft-"+g.b64url(20))
	add("gitlab-incoming-mail-token", "glimt-"+g.b64url(25))
	add("gitlab-kubernetes-agent-token", "glagent-"+g.b64url(50))
	add("gitlab-oauth-app-secret", "gloas-"+g.b64url(64))
	add("gitlab-pat-routable", "glpat-"+g.b64url(27)+".01"+g.lowAlnum(7))
	add("gitlab-pat", "glpat-"+g.b64url(20))
	add("gitlab-ptt", "glptt-"+g.hex(40))
	add("gitlab-rrt", "GR1348941"+g.b64url(20))
	add("gitlab-runner-authentication-token-routable", "glrt-t1_"+g.b64url(27)+".01"+g.lowAlnum(7))
	add("gitlab-runner-authentication-token", "glrt-"+g.b64url(20))
	add("gitlab-scim-token", "glsoat-"+g.b64url(20))
	session := g.lowAlnum(32)
	ex = append(ex, vtExample{"gitlab-session-cookie", "_gitlab_session=" + session, session, false})
	add("grafana-api-key", "eyJrIjoi"+g.alnum(100))
	add("grafana-cloud-api-token", "glc_"+g.b64(60)+"==")
	add("grafana-service-account-token", "glsa_"+g.alnum(32)+"_"+g.hex(8))
	add("harness-api-key", "pat."+g.b64url(22)+"."+g.alnum(24)+"."+g.alnum(20), "sat."+g.b64url(22)+"."+g.alnum(24)+"."+g.alnum(20))
	add("hashicorp-tf-api-token", g.lowAlnum(14)+".atlasv1."+g.b64url(67))
	add("heroku-api-key-v2", "HRKU-AA"+g.b64url(58))
	add("huggingface-access-token", "hf_"+g.letters(34))
	add("huggingface-organization-api-token", "api_org_"+g.letters(34))
	add("infracost-api-token", "ico-"+g.alnum(32))
	add("intra42-client-secret", "s-s4t2ud-"+g.hex(64), "s-s4t2af-"+g.hex(64))
	add("linear-api-key", "lin_api_"+g.alnum(40))
	add("mailchimp-api-key", g.hex(32)+"-us21", g.hex(32)+"-us6")
	add("mailgun-private-api-token", "key-"+g.hex(32))
	add("maxmind-license-key", g.alnum(6)+"_"+g.alnum(29)+"_mmk")
	add("microsoft-teams-webhook",
		"https://contoso.webhook.office.com/webhookb2/"+g.uuid()+"@"+g.uuid()+"/IncomingWebhook/"+g.hex(32)+"/"+g.uuid(),
		"https://fabrikam.webhook.office.com/webhookb2/"+g.uuid()+"@"+g.uuid()+"/IncomingWebhook/"+g.hex(32)+"/"+g.uuid()+"/V2"+g.b64url(44))
	add("new-relic-insert-key", "NRII-"+g.sprinkle(g.alnum(32), "-"))
	add("new-relic-user-api-key", "NRAK-"+g.upAlnum(27))
	add("notion-api-token", "ntn_"+g.digits(11)+g.alnum(35))
	add("npm-access-token", "npm_"+g.alnum(36))
	for _, v := range []string{"Sup3r-S3cret!", "correct horse battery staple"} {
		ex = append(ex,
			vtExample{"nuget-config-password", `<add key="ClearTextPassword" value="` + v + `" />`, v, true},
			vtExample{"nuget-config-password", "<packageSourceCredentials>\n  <add key=\"Password\" value=\"" + v + "\"/>", v, true})
	}
	add("nuget-api-key", "oy2"+g.lowAlnum(43))
	add("octopus-deploy-api-key", "API-"+g.upAlnum(26))
	add("openai-api-key",
		"sk-proj-"+g.b64url(74)+"T3BlbkFJ"+g.b64url(74),
		"sk-svcacct-"+g.b64url(58)+"T3BlbkFJ"+g.b64url(58),
		"sk-admin-"+g.b64url(58)+"T3BlbkFJ"+g.b64url(58),
		"sk-"+g.alnum(20)+"T3BlbkFJ"+g.alnum(20))
	add("openshift-user-token", "sha256~"+g.b64url(43))
	add("perplexity-api-key", "pplx-"+g.alnum(48))
	add("planetscale-api-token", "pscale_tkn_"+g.b64url(43))
	add("planetscale-oauth-token", "pscale_oauth_"+g.b64url(43))
	add("planetscale-password", "pscale_pw_"+g.b64url(43))
	add("postman-api-token", "PMAK-"+g.hex(24)+"-"+g.hex(34))
	add("prefect-api-token", "pnu_"+g.alnum(36))
	add("pulumi-api-token", "pul-"+g.hex(40))
	add("pypi-upload-token", "pypi-AgEIcHlwaS5vcmc"+g.b64url(160))
	add("readme-api-token", "rdme_"+g.lowAlnum(70))
	add("rubygems-api-token", "rubygems_"+g.hex(48))
	add("scalingo-api-token", "tk-us-"+g.b64url(48))
	add("sendgrid-api-token", "SG."+g.b64url(22)+"."+g.b64url(43))
	add("sendinblue-api-token", "xkeysib-"+g.hex(64)+"-"+g.alnum(16))
	add("sentry-org-token", "sntrys_eyJpYXQiO"+g.b64(160)+"_"+g.b64(43))
	add("sentry-user-token", "sntryu_"+g.hex(64))
	add("settlemint-application-access-token", "sm_aat_"+g.alnum(16))
	add("settlemint-personal-access-token", "sm_pat_"+g.alnum(16))
	add("settlemint-service-access-token", "sm_sat_"+g.alnum(16))
	add("shippo-api-token", "shippo_live_"+g.hex(40), "shippo_test_"+g.hex(40))
	add("shopify-access-token", "shpat_"+g.hex(32))
	add("shopify-custom-access-token", "shpca_"+g.hex(32))
	add("shopify-private-app-access-token", "shppa_"+g.hex(32))
	add("shopify-shared-secret", "shpss_"+g.hex(32))
	add("slack-app-token", "xapp-1-A"+g.upAlnum(10)+"-"+g.digits(13)+"-"+g.hex(64))
	add("slack-legacy-bot-token", "xoxb-"+g.digits(10)+"-"+g.alnum(24))
	add("slack-bot-token", "xoxb-"+g.digits(12)+"-"+g.digits(13)+"-"+g.alnum(24))
	add("slack-config-access-token", "xoxe.xoxp-1-"+g.alnum(164), "xoxe.xoxb-1-"+g.alnum(165))
	add("slack-config-refresh-token", "xoxe-1-"+g.alnum(146))
	add("slack-legacy-token", "xoxs-"+g.digits(10)+"-"+g.digits(10)+"-"+g.digits(12)+"-"+g.hex(64))
	add("slack-legacy-workspace-token", "xoxa-2-"+g.alnum(40), "xoxr-"+g.alnum(32))
	add("slack-user-token", "xoxp-"+g.digits(12)+"-"+g.digits(12)+"-"+g.digits(12)+"-"+g.hex(32))
	add("slack-webhook-url",
		"https://hooks.slack.com/services/T"+g.upAlnum(8)+"/B"+g.upAlnum(10)+"/"+g.alnum(24),
		"hooks.slack.com/workflows/T"+g.upAlnum(8)+"/A"+g.upAlnum(10)+"/"+g.digits(18)+"/"+g.alnum(24))
	add("sourcegraph-access-token", "sgp_"+g.hex(16)+"_"+g.hex(40), "sgp_local_"+g.hex(40), "sgp_"+g.hex(40))
	add("square-access-token", "sq0atp-"+g.b64url(22), "EAAA"+g.b64url(60))
	add("stripe-access-token", "sk_live_"+g.alnum(99), "rk_test_"+g.alnum(24), "sk_prod_"+g.alnum(40))
	add("telegram-bot-api-token", g.digits(10)+":AA"+g.b64url(33))
	add("twilio-api-key", "SK"+g.hex(32))
	add("typeform-api-token", "tfp_"+g.b64url(59))
	add("vault-batch-token", "hvb."+g.b64url(150))
	add("vault-service-token", "hvs."+g.b64url(24), "hvs."+g.b64url(95))
	add("yandex-api-key", "AQVN"+g.b64url(36))
	add("generic-sk-key", "sk-"+g.hex(32), "sk-"+g.alnum(48))
	return ex
}

// vtContexts are the places a token is pasted in: prose, a log line,
// JSON, an environment dump, a URL, code, the end of a sentence, glued to
// a Japanese word.
var vtContexts = []string{
	"%s",
	"leaked %s today",
	"2026-12-07T10:00:00Z INFO uploading with %s\nnext line",
	`{"credential": "%s", "n": 1}`,
	"CREDENTIAL=%s\nNEXT=1",
	"see https://example.com/cb?cred=%s&x=1",
	"(%s)",
	"`%s`",
	"'%s'.",
	"it is %s.",
	"日本語%s と",
}

// vtKind returns the kind a rule reports.
func vtKind(t *testing.T, id string) string {
	t.Helper()
	for _, r := range vendorRules {
		if r.id == id {
			if r.kind != "" {
				return r.kind
			}
			return r.id
		}
	}
	t.Fatalf("no vendor rule %q", id)
	return ""
}

func TestVendorRuleTable(t *testing.T) {
	t.Parallel()
	id := regexp.MustCompile(`^[0-9a-z]+(-[0-9a-z]+)*$`)
	seen := map[string]bool{}
	for _, r := range vendorRules {
		if seen[r.id] {
			t.Errorf("rule id %q twice", r.id)
		}
		seen[r.id] = true
		if !id.MatchString(r.id) {
			t.Errorf("rule id %q is not a gitleaks-style id", r.id)
		}
		if len(r.patterns) == 0 {
			t.Errorf("rule %s has no pattern", r.id)
		}
		if r.kind != "" && !slices.Contains(handKindNames[:], r.kind) {
			t.Errorf("rule %s reports %q, not one of the airlock's own kinds", r.id, r.kind)
		}
	}
	names := vendorKindNames()
	if len(names) < 100 {
		t.Errorf("%d vendor kinds, want the hundred-odd rules the set is meant to hold", len(names))
	}
	for _, name := range names {
		p := "[" + name + "]"
		if !isPlaceholder(p) || placeholderLen(p+" tail") != len(p) {
			t.Errorf("%s is not recognised as a placeholder", p)
		}
		if slices.Contains(handKindNames[:], name) || slices.Contains(personalKindNames, name) {
			t.Errorf("vendor kind %s is also another kind", name)
		}
		k := kindNamed(name)
		if placeholders[k] != p {
			t.Errorf("kind %s has the placeholder %s", name, placeholders[k])
		}
	}
	if len(vendorForms) == 0 || len(vendorGroups) < 2 {
		t.Fatal("the rule set compiled to nothing")
	}
}

func TestVendorPatternNotation(t *testing.T) {
	t.Parallel()
	f, err := parseVendorPattern("{d:5-16}:|AA{dul_-:30-34}x{h:2+}")
	if err != nil {
		t.Fatal(err)
	}
	want := vendorForm{
		lead:   []vendorPart{{class: vDigit, min: 5, max: 16}, {lit: ":"}},
		prefix: "AA",
		parts:  []vendorPart{{class: vDigit | vUpper | vLower | vUnder | vDash, min: 30, max: 34}, {lit: "x"}, {class: vHexLow, min: 2, max: -1}},
	}
	if !slices.Equal(f.lead, want.lead) || f.prefix != want.prefix || !slices.Equal(f.parts, want.parts) {
		t.Fatalf("parsed %+v, want %+v", f, want)
	}
	for _, bad := range []string{"abc", "x{d:3}", "ab{q:3}", "ab{d:0}", "ab{d:5-2}", "ab{d:3", "ab{d3}", "{d:3+}.|ab{d:3}", "ab{:3}"} {
		if _, err := parseVendorPattern(bad); err == nil {
			t.Errorf("parseVendorPattern(%q) accepted", bad)
		}
	}
}

// TestVendorExamples pastes every example in every context: exactly the
// secret goes, under the rule's kind, once.
func TestVendorExamples(t *testing.T) {
	t.Parallel()
	examples := vtExamples()
	covered := map[string]bool{}
	for _, e := range examples {
		covered[e.rule] = true
		kind := vtKind(t, e.rule)
		contexts := vtContexts
		if e.whole {
			contexts = []string{"%s"}
		}
		for _, ctx := range contexts {
			in := strings.Replace(ctx, "%s", e.text, 1)
			want := strings.Replace(in, e.secret, "["+kind+"]", 1)
			got, reds := Redact(in)
			if got != want || len(reds) != 1 || reds[0] != (Redaction{Kind: kind, Count: 1}) {
				t.Errorf("%s in %q:\n got %q %v\nwant %q", e.rule, ctx, got, reds, want)
			}
		}
	}
	for _, r := range vendorRules {
		if !covered[r.id] {
			t.Errorf("rule %s has no example", r.id)
		}
	}
}

// TestVendorExamplesGlued checks that an example glued to a word before it
// is not a token (URLs excepted: their host starts a word anyway).
func TestVendorExamplesGlued(t *testing.T) {
	t.Parallel()
	for _, e := range vtExamples() {
		r := vendorRules[slices.IndexFunc(vendorRules, func(r vendorRule) bool { return r.id == e.rule })]
		if r.url || e.whole {
			continue
		}
		// Glued to a word before: no token starts there (a token inside
		// it, after a dot, may).
		for _, glue := range []string{"x", "7", "_", "-"} {
			if glue == "7" && isASCIIDigit(e.text[0]) {
				continue // a longer number: Telegram's bot id
			}
			in := "see " + glue + e.text + " here"
			for _, s := range findVendorTokens(in, nil) {
				if s.start <= 4+len(glue) {
					t.Errorf("%s glued after %q: found %q as %s", e.rule, glue, in[s.start:s.end], kindNames[s.kind])
				}
			}
		}
		// Glued to letters after: the token is longer, or ends at one of
		// its own separators, but never just before the letters.
		in := "see " + e.text + "Zq here"
		for _, s := range findVendorTokens(in, nil) {
			if s.end == 4+len(e.text) {
				t.Errorf("%s followed by letters: found %q", e.rule, in[s.start:s.end])
			}
		}
	}
}

// TestVendorFormsGenerated builds tokens from every pattern itself, at the
// shortest and longest lengths it allows, and checks that each is found
// whole, and that the same token made of lower-case letters (a word, not a
// secret) is not found, unless the rule is loose.
func TestVendorFormsGenerated(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(4, 2))
	for fi := range vendorForms {
		f := &vendorForms[fi]
		r := &vendorRules[f.rule]
		if slices.ContainsFunc(f.parts, func(p vendorPart) bool { return p.class&vQuoted != 0 }) {
			continue // a quoted value: TestVendorExamples has it in its quotes
		}
		for _, longest := range []bool{false, true} {
			tok, prose := vtBuild(rng, f, longest)
			in := "x " + tok + " y"
			got := findVendorTokens(in, nil)
			start := 2
			if r.keep {
				start = 2 + strings.Index(tok, f.prefix) + len(f.prefix)
			}
			if len(got) != 1 || got[0] != (redSpan{start, 2 + len(tok), f.kind}) {
				t.Errorf("%s: %q: found %v", r.id, tok, got)
			}
			if prose != "" && !r.loose {
				for _, s := range findVendorTokens("x "+prose+" y", nil) {
					if s.kind == f.kind {
						t.Errorf("%s: the word %q is taken for a token", r.id, prose)
					}
				}
			}
		}
	}
}

// vtBuild returns a token of form f, and the same with its random parts
// in lower-case letters ("" when a part cannot be a letter).
func vtBuild(rng *rand.Rand, f *vendorForm, longest bool) (tok, prose string) {
	var b, p strings.Builder
	proseOK := true
	emit := func(parts []vendorPart) {
		for _, part := range parts {
			if part.lit != "" {
				b.WriteString(part.lit)
				p.WriteString(part.lit)
				continue
			}
			n := part.min
			if longest {
				n = part.max
				if n < 0 {
					n = part.min + 40
				}
			}
			var alpha, lower []byte
			for c := 0; c < 256; c++ {
				if vendorClass[c]&part.class != 0 && c < 0x7F && c > ' ' && c != '"' {
					alpha = append(alpha, byte(c))
					if c >= 'a' && c <= 'z' {
						lower = append(lower, byte(c))
					}
				}
			}
			if len(lower) == 0 {
				proseOK = false
			}
			for i := range n {
				c := alpha[rng.IntN(len(alpha))]
				// Letters and digits at the ends, where a symbol would end
				// the token or be taken for punctuation.
				if i == 0 || i == n-1 || rng.IntN(4) > 0 {
					for !isASCIIAlnum(c) && slices.ContainsFunc(alpha, func(a byte) bool { return isASCIIAlnum(a) }) {
						c = alpha[rng.IntN(len(alpha))]
					}
				}
				b.WriteByte(c)
				if len(lower) > 0 {
					p.WriteByte(lower[rng.IntN(len(lower))])
				}
			}
		}
	}
	emit(f.lead)
	b.WriteString(f.prefix)
	p.WriteString(f.prefix)
	emit(f.parts)
	if !proseOK {
		return b.String(), ""
	}
	return b.String(), p.String()
}

// vtNegatives are look-alikes that must stay: prose, identifiers, docs,
// masked and placeholder values, hashes, ids.
var vtNegatives = []string{
	"the sk-learn package, a risk-free whisk-ing, sk-abc, sk-this-is-only-a-hyphenated-phrase",
	"sk-proj-management-for-teams and sk-ant-colony-simulation",
	"npm_config_cache is ignored; npm_modules, npm_token_placeholder",
	"hf_hub_download() times out; hf_transfer is off",
	"Calling SG.send() raises; SG.mail.v3 too",
	"GitLab tokens start with glpat- and runners with glrt-",
	"the ghp_ prefix marks classic tokens; gho_ is OAuth",
	"thanks team xoxo, xoxb- tokens are long",
	"AKIAXXXXXXXXXXXXXXXX and AKIA followed by 16 characters",
	"a key-value store and key-0123 in the cache",
	"SKU-12345, SKIP this, SK-II",
	"API-KEY header, API-v2 endpoint",
	"pat.json and sat.txt and pat.ABC.DEF",
	"v1.0-beta and v1.0-rc1",
	"dp.pt. prefix, dp.st.dev",
	"hvs. and hvb. are Vault's prefixes",
	"pk_live_51Hx0aQ2eZvKYlo2C8fL3mPqR7sT9uV1wX3yZ5aB7cD9 is the publishable key",
	"rk_later, sk_test_placeholder, sk_live_xxxxxxxxxxxxxxxx",
	"sl.next() and sl.log",
	"at 12:30:45 the job 1234567:ABC failed",
	"sha256~ marks OpenShift tokens",
	"ops_eyJ is how they start",
	`<add key="Password" value="short" />`,
	`<add key="ClearTextPassword" value="[password]" />`,
	"The key list shows every Google key as AIzaSy…3kQ",
	"dop_v1_<redacted> and shpat_…",
	"commit 0123456789abcdef0123456789abcdef01234567 of 123e4567-e89b-12d3-a456-426614174000",
	"sha256 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
	"ghp_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX and glpat-xxxxxxxxxxxxxxxxxxxx",
	"EAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
	"hooks.slack.com/services/ docs and https://hooks.slack.com/",
	"the 1password app, A3-ABCDEF, LTAI, ABSK, AQVN",
	"tk-us-east-1 and ico-cache and pul-request",
	"mailchimp keys end in -us21; the datacentre is us6",
	"an ntn_ token, a pnu_ token, a pplx- key",
	"a Q~ in text, x~y, ~/.ssh",
}

func TestVendorNegatives(t *testing.T) {
	t.Parallel()
	for _, in := range vtNegatives {
		if got := findVendorTokens(in, nil); len(got) != 0 {
			t.Errorf("%q: found %q as %s", in, in[got[0].start:got[0].end], kindNames[got[0].kind])
		}
	}
}

// TestVendorOrder checks which rule names a token that several patterns
// could take: the specific before the general.
func TestVendorOrder(t *testing.T) {
	t.Parallel()
	g := newVTGen()
	cases := []struct{ token, rule string }{
		{"glpat-" + g.b64url(27) + ".01" + g.lowAlnum(7), "gitlab-pat-routable"},
		{"glpat-" + g.b64url(27), "gitlab-pat"},
		{"glrt-t3_" + g.b64url(30) + ".0a" + g.lowAlnum(7), "gitlab-runner-authentication-token-routable"},
		{"xoxb-" + g.digits(10) + "-" + g.alnum(22), "slack-legacy-bot-token"},
		{"xoxb-" + g.digits(11) + "-" + g.digits(12) + "-" + g.alnum(24), "slack-bot-token"},
		{"xoxe-1-" + g.alnum(146), "slack-config-refresh-token"},
		{"xoxe-" + g.digits(12) + "-" + g.digits(12) + "-" + g.digits(12) + "-" + g.hex(32), "slack-user-token"},
		{"sk-ant-api03-" + g.b64url(40), "anthropic-api-key"},
		{"sk-ant-oat01-" + g.b64url(40), "anthropic-api-key"},
		{"sk-ant-xyz99-" + g.b64url(40), "generic-sk-key"},
		{"sk-" + g.alnum(20) + "T3BlbkFJ" + g.alnum(20), "openai-api-key"},
		{"sk-" + g.alnum(48), "generic-sk-key"},
		{"sk-proj-" + g.b64url(40), "openai-api-key"},
		{"sgp_local_" + g.hex(40), "sourcegraph-access-token"},
		{"FLWSECK_TEST-" + g.hex(32) + "-X", "flutterwave-secret-key"},
		{"FLWSECK_TEST-" + g.hex(12), "flutterwave-encryption-key"},
		{"EAAA" + g.b64url(40), "square-access-token"},
		{"EAAC" + g.alnum(120), "facebook-page-access-token"},
	}
	for _, c := range cases {
		in := "token " + c.token + " end"
		got := findVendorTokens(in, nil)
		want := redSpan{6, 6 + len(c.token), kindNamed(vtKind(t, c.rule))}
		if len(got) != 1 || got[0] != want {
			t.Errorf("%q: got %v, want %s over the token", c.token, got, c.rule)
		}
	}
}

// TestVendorTrailing checks where a token ends: punctuation after it stays,
// a longer run is not a token of an exact length.
func TestVendorTrailing(t *testing.T) {
	t.Parallel()
	g := newVTGen()
	hex, b64 := g.hex(32), g.b64url(43)
	cases := []struct{ name, in, want string }{
		{"sentence end", "key shpat_" + hex + ".", "key [shopify-access-token]."},
		{"path end", "/tokens/shpat_" + hex + "/", "/tokens/[shopify-access-token]/"},
		{"too long for an exact length", "shpat_" + hex + "ab", "shpat_" + hex + "ab"},
		{"range gives back a dot", "pscale_tkn_" + b64 + ". Next", "[planetscale-api-token]. Next"},
		{"range gives back a dash", "token pscale_tkn_" + b64 + "- and", "token [planetscale-api-token]- and"},
		{"underscore after", "shpat_" + hex + "_old", "[shopify-access-token]_old"},
		{"exact run with a dot in its class", "tfp_" + b64 + "0123456789abcdef. Done", "[typeform-api-token]. Done"},
	}
	for _, c := range cases {
		got, _ := Redact(c.in)
		if got != c.want {
			t.Errorf("%s: Redact(%q) = %q, want %q", c.name, c.in, got, c.want)
		}
	}
}

// TestVendorSpansSorted checks that tokens found by the rare-byte scan
// (Azure's "~") fall in order among the others, and that overlaps go.
func TestVendorSpansSorted(t *testing.T) {
	t.Parallel()
	g := newVTGen()
	azure := "ab1" + "7Q~" + g.alnum(34)
	gh := "ghp_" + g.alnum(36)
	in := gh + " " + azure + " " + gh + " x" + azure
	got := findVendorTokens(in, nil)
	if len(got) != 3 || !slices.IsSortedFunc(got, func(a, b redSpan) int { return a.start - b.start }) {
		t.Fatalf("spans %v", got)
	}
	for i := 1; i < len(got); i++ {
		if got[i].start < got[i-1].end {
			t.Fatalf("spans overlap: %v", got)
		}
	}
}

// TestAlnumBlock compares the eight-bytes-at-a-time classification with
// isASCIIAlnum, for every byte value in every position and at every tail
// length.
func TestAlnumBlock(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(8, 8))
	for round := range 2000 {
		n := rng.IntN(200)
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.IntN(256))
			if round < 256 && i%7 == 0 {
				b[i] = byte(round)
			}
		}
		s := string(b)
		for base := 0; base < n; base += 64 {
			got := alnumBlock(s, base)
			for j := range 64 {
				want := base+j < n && isASCIIAlnum(s[base+j])
				if got>>j&1 == 1 != want {
					t.Fatalf("alnumBlock(%q, %d) bit %d = %v", s, base, j, !want)
				}
			}
		}
	}
}

// TestVendorLinear feeds texts made of prefixes and near-tokens: the scan
// must stay linear (a quadratic one takes minutes on these).
func TestVendorLinear(t *testing.T) {
	t.Parallel()
	const n = 1 << 20
	for _, unit := range []string{
		"glc_/", "SG.", "sk-", "A", "ghp_", "xoxb-1-", "pypi-AgEIcHlwaS5vcmc-", "ops_eyJ/", "hvs.",
		"fm2_+", "1234567890:", ":AA", "AA", "us1-", "_mmk", "Q~", "a1Q~", ".atlasv1.", "dp.st.",
		`Password" value="`, "https://hooks.slack.com/services/", "x.webhook.office.com/webhookb2/",
	} {
		text := strings.Repeat(unit, n/len(unit))
		start := time.Now()
		findVendorTokens(text, nil)
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%q repeated to 1 MiB: %v", unit, d)
		}
	}
}
