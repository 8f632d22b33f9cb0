package airlock

import (
	"math/bits"
	"slices"
	"strconv"
	"strings"
)

// The vendor rule set: secret tokens recognised by the format their
// provider gives them, each rule named after the gitleaks default rule
// (config/gitleaks.toml) that finds the same tokens, so that a token is
// reported as "[github-pat]" or "[stripe-access-token]" rather than as a
// generic key.
//
// The rules are written here from the providers' published token formats,
// as data: a rule is one or more patterns in a small notation of our own,
// and one scan of the text tries them all (findVendorTokens). Gitleaks
// itself is not used: as a library it weighs 8 MB and 61 modules, builds
// its detector in 25 to 32 ms on global state, and scans at under 1 MB/s.
//
// A pattern is a literal prefix followed by runs and literals:
//
//	"glpat-{dul_-:20+}"        glpat-, then 20 or more of [0-9A-Za-z_-]
//	"SG.{dul_-:22}.{dul_-:43}" SG., 22 of them, a dot, 43 of them
//	"dapi{dh:32}-{d:1}"        dapi, 32 lower-case hex digits, '-', a digit
//
// A run is "{classes:length}", the length n, n-m or n+ bytes, the classes
// any of d (0-9), u (A-Z), l (a-z), h (a-f), H (A-F), and the bytes _ - . +
// / = ~ @ themselves, or * (any byte but a double quote or a line break).
// Runs are greedy and never give back: a run's class must not contain the
// first byte of the literal after it, unless the run has an exact length.
//
// A token starts a word: the byte before it is not a letter, digit, '_' or
// '-' (tokenBoundary). It must not be followed by a letter or a digit, nor
// by more of its last run when that run is at its longest. A last run
// longer than its shortest gives back a trailing '.', '-' or '/': the end
// of a sentence or a path, not of the token. Its runs (what is neither
// prefix nor literal) must not be one byte repeated, and unless the rule is
// loose they must look random: a digit, or both upper and lower case, as
// no English word or identifier in prose has ("sk-learn", "npm_modules",
// "glpat-token-for-ci").
//
// The prefix is where the scan finds a token: at the start of a run of
// letters and digits, by its first two bytes. Tokens whose literal is in
// the middle (Telegram's "<bot id>:AA...", Terraform's "<14>.atlasv1....",
// Mailchimp's "<hex>-us<n>") put the part before it ahead of a '|', as in
// "{d:5-16}:|AA{dul_-:30-34}": that part is matched backwards from the
// literal, and the token starts where it starts. A prefix may start with
// a byte other than a letter or digit if that byte is rare in text
// (Azure's "~" after "Q"): the scan finds it with strings.IndexByte.

// vendorRule is one rule of the set.
type vendorRule struct {
	id       string   // the gitleaks rule id: the kind and its placeholder
	patterns []string // tried in order
	// kind, when set, is the airlock kind reported instead of id: the
	// catch-all "sk-" keys, which no vendor can be told for.
	kind string
	// keep leaves the literal prefix in place and replaces the rest: the
	// prefix is a key name ("gitlab_session=").
	keep bool
	// url takes a scheme ("https://", "http://", "//") before the token
	// with it: the token is a whole URL.
	url bool
	// loose skips the randomness test, for tokens of one letter case
	// and exact length whose prefix is rare enough (AWS key ids) or whose
	// value is a password of any form.
	loose bool
}

// vendorRules is the rule set. A token is reported as the first rule
// that matches it, in the order of the longest prefix first and then of
// this table; the table is also the order Redact reports the kinds in.
var vendorRules = []vendorRule{
	// 1Password.
	{id: "1password-secret-key", patterns: []string{
		"A3-{du:6}-{du:11}-{du:5}-{du:5}-{du:5}", "A3-{du:6}-{du:6}-{du:5}-{du:5}-{du:5}-{du:5}"}},
	{id: "1password-service-account-token", patterns: []string{"ops_eyJ{dul+/:250+}{=:0-3}"}},
	// Adobe, Age, Airtable, Alibaba, Anthropic.
	{id: "adobe-client-secret", patterns: []string{"p8e-{dul:32}"}},
	{id: "age-secret-key", patterns: []string{"AGE-SECRET-KEY-1{du:58}"}},
	{id: "airtable-personnal-access-token", patterns: []string{"pat{dul:14}.{dh:64}"}},
	{id: "alibaba-access-key-id", patterns: []string{"LTAI{dul:20}"}},
	{id: "anthropic-admin-api-key", patterns: []string{"sk-ant-admin01-{dul_-:20+}"}},
	{id: "anthropic-api-key", patterns: []string{"sk-ant-api03-{dul_-:20+}", "sk-ant-oat01-{dul_-:20+}", "sk-ant-ort01-{dul_-:20+}"}},
	// Artifactory, Atlassian.
	{id: "artifactory-api-key", patterns: []string{"AKCp{dul:69}"}},
	{id: "artifactory-reference-token", patterns: []string{"cmVmd{dul:59}"}},
	{id: "atlassian-api-token", patterns: []string{"ATATT3{dul_=-:150+}"}},
	// AWS: access key ids (AKIA, ASIA, ...) and the unique ids of users,
	// groups, roles and policies, and Bedrock API keys.
	{id: "aws-access-token", loose: true, patterns: []string{
		"AKIA{du:16}", "ASIA{du:16}", "ABIA{du:16}", "ACCA{du:16}", "A3T{du:17}",
		"AGPA{du:16}", "AIDA{du:16}", "AROA{du:16}", "ANPA{du:16}", "ANVA{du:16}", "AIPA{du:16}"}},
	{id: "aws-amazon-bedrock-api-key-long-lived", patterns: []string{"ABSK{dul+/:109-269}{=:0-2}"}},
	{id: "aws-amazon-bedrock-api-key-short-lived", patterns: []string{"bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t{dul+/=:16+}"}},
	// Azure AD client secrets: three characters, a digit, "Q~", the rest.
	{id: "azure-ad-client-secret", patterns: []string{"{dul_:3}{d:1}Q|~{dul_.~-:31-34}"}},
	// ClickHouse Cloud, Clojars, Cloudflare origin CA.
	{id: "clickhouse-cloud-api-secret-key", patterns: []string{"4b1d{dul:38}"}},
	{id: "clojars-api-token", patterns: []string{"CLOJARS_{dul:60}"}},
	{id: "cloudflare-origin-ca-key", patterns: []string{"v1.0-{dh:24}-{dh:146}"}},
	// Databricks, DigitalOcean, Docker Hub, Doppler, Dropbox, Duffel,
	// Dynatrace.
	{id: "databricks-api-token", patterns: []string{"dapi{dh:32}-{d:1}", "dapi{dh:32}"}},
	{id: "digitalocean-access-token", patterns: []string{"doo_v1_{dh:64}"}},
	{id: "digitalocean-pat", patterns: []string{"dop_v1_{dh:64}"}},
	{id: "digitalocean-refresh-token", patterns: []string{"dor_v1_{dh:64}"}},
	// Not a gitleaks default rule: Docker Hub personal and organization
	// access tokens, named in its style.
	{id: "dockerhub-pat", patterns: []string{"dckr_pat_{dul_-:27+}", "dckr_oat_{dul_-:27+}"}},
	{id: "doppler-api-token", patterns: []string{
		"dp.pt.{dul:40+}", "dp.ct.{dul:40+}", "dp.sa.{dul:40+}", "dp.scim.{dul:40+}", "dp.audit.{dul:40+}",
		"dp.st.{dul_-:1-64}.{dul:40+}", "dp.st.{dul:40+}"}},
	{id: "dropbox-short-lived-api-token", patterns: []string{"sl.{dul_=-:130+}"}},
	{id: "duffel-api-token", patterns: []string{"duffel_test_{dul_=-:43}", "duffel_live_{dul_=-:43}"}},
	{id: "dynatrace-api-token", patterns: []string{"dt0c01.{dul:24}.{dul:64}"}},
	// EasyPost, Facebook, Flutterwave, Fly.io, Frame.io.
	{id: "easypost-api-token", patterns: []string{"EZAK{dul:54}"}},
	{id: "easypost-test-api-token", patterns: []string{"EZTK{dul:54}"}},
	{id: "facebook-page-access-token", patterns: []string{"EAAM{dul:100+}", "EAAC{dul:100+}"}},
	{id: "flutterwave-secret-key", patterns: []string{"FLWSECK_TEST-{dhH:32}-X", "FLWSECK-{dhH:32}-X"}},
	{id: "flutterwave-encryption-key", patterns: []string{"FLWSECK_TEST-{dhH:12}", "FLWSECK_TEST{dhH:12}"}},
	{id: "flyio-access-token", patterns: []string{
		"fo1_{dul_-:43}", "fm1a_{dul+/:100+}{=:0-3}", "fm1r_{dul+/:100+}{=:0-3}", "fm2_{dul+/:100+}{=:0-3}"}},
	{id: "frameio-api-token", patterns: []string{"fio-u-{dul_=-:64}"}},
	// Google Cloud.
	{id: "gcp-api-key", patterns: []string{"AIza{dul_-:30-40}"}},
	// GitHub.
	{id: "github-app-token", patterns: []string{"ghu_{dul:36+}", "ghs_{dul:36+}"}},
	{id: "github-fine-grained-pat", patterns: []string{"github_pat_{dul_:22+}"}},
	{id: "github-oauth", patterns: []string{"gho_{dul:36+}"}},
	{id: "github-pat", patterns: []string{"ghp_{dul:36+}"}},
	{id: "github-refresh-token", patterns: []string{"ghr_{dul:36+}"}},
	// GitLab: the routable forms (with a dot and a 9-character tail) before
	// the short ones, which would take their first part.
	{id: "gitlab-cicd-job-token", patterns: []string{"glcbt-{dul:1-5}_{dul_-:20+}"}},
	{id: "gitlab-deploy-token", patterns: []string{"gldt-{dul_-:20+}"}},
	{id: "gitlab-feature-flag-client-token", patterns: []string{"glffct-{dul_-:20+}"}},
	{id: "gitlab-feed-token", patterns: []string{"glft-{dul_-:20+}"}},
	{id: "gitlab-incoming-mail-token", patterns: []string{"glimt-{dul_-:25+}"}},
	{id: "gitlab-kubernetes-agent-token", patterns: []string{"glagent-{dul_-:50+}"}},
	{id: "gitlab-oauth-app-secret", patterns: []string{"gloas-{dul_-:64+}"}},
	{id: "gitlab-pat-routable", patterns: []string{"glpat-{dul_-:27-300}.{dl:9}"}},
	{id: "gitlab-pat", patterns: []string{"glpat-{dul_-:20+}"}},
	{id: "gitlab-ptt", patterns: []string{"glptt-{dh:40}"}},
	{id: "gitlab-rrt", patterns: []string{"GR1348941{dul_-:20+}"}},
	{id: "gitlab-runner-authentication-token-routable", patterns: []string{"glrt-t{d:1}_{dul_-:27-300}.{dl:9}"}},
	{id: "gitlab-runner-authentication-token", patterns: []string{"glrt-{dul_-:20+}"}},
	{id: "gitlab-scim-token", patterns: []string{"glsoat-{dul_-:20+}"}},
	{id: "gitlab-session-cookie", keep: true, patterns: []string{"_|gitlab_session={dl:32}"}},
	// Grafana, Harness, HashiCorp (Terraform Cloud, Vault), Heroku,
	// Hugging Face.
	{id: "grafana-api-key", patterns: []string{"eyJrIjoi{dul:70-400}{=:0-3}"}},
	{id: "grafana-cloud-api-token", patterns: []string{"glc_{dul+/:32-400}{=:0-3}"}},
	{id: "grafana-service-account-token", patterns: []string{"glsa_{dul:32}_{dhH:8}"}},
	{id: "harness-api-key", patterns: []string{"pat.{dul_-:22}.{dul:24}.{dul:20}", "sat.{dul_-:22}.{dul:24}.{dul:20}"}},
	{id: "hashicorp-tf-api-token", patterns: []string{"{dul:14}.|atlasv1.{dul_=-:60-70}"}},
	{id: "heroku-api-key-v2", patterns: []string{"HRKU-AA{dul_-:58}"}},
	{id: "huggingface-access-token", patterns: []string{"hf_{ul:34}"}},
	{id: "huggingface-organization-api-token", patterns: []string{"api_org_{ul:34}"}},
	// Infracost, Intra 42, Linear, Mailchimp, Mailgun, MaxMind.
	{id: "infracost-api-token", patterns: []string{"ico-{dul:32}"}},
	{id: "intra42-client-secret", patterns: []string{"s-s4t2ud-{dhH:64}", "s-s4t2af-{dhH:64}"}},
	{id: "linear-api-key", patterns: []string{"lin_api_{dul:40}"}},
	{id: "mailchimp-api-key", patterns: []string{"{dh:32}-|us{d:1-2}"}},
	{id: "mailgun-private-api-token", patterns: []string{"key-{dh:32}"}},
	{id: "maxmind-license-key", patterns: []string{"{dul:6}_{dul:29}_|mmk"}},
	// Microsoft Teams incoming webhooks: the whole URL.
	{id: "microsoft-teams-webhook", url: true, patterns: []string{
		"{dul-:1-63}.|webhook.office.com/webhookb2/{dul-:36}@{dul-:36}/IncomingWebhook/{dul:32}/{dul-:36}/{dul_-:20+}",
		"{dul-:1-63}.|webhook.office.com/webhookb2/{dul-:36}@{dul-:36}/IncomingWebhook/{dul:32}/{dul-:36}"}},
	// New Relic, Notion, npm, NuGet.
	{id: "new-relic-insert-key", patterns: []string{"NRII-{dul-:32}"}},
	{id: "new-relic-user-api-key", patterns: []string{"NRAK-{dul:27}"}},
	{id: "notion-api-token", patterns: []string{"ntn_{d:11}{dul:35}"}},
	{id: "npm-access-token", patterns: []string{"npm_{dul:36}"}},
	{id: "nuget-config-password", keep: true, loose: true, patterns: []string{
		`ClearTextPassword" value="{*:8+}`, `Password" value="{*:8+}`}},
	// Not a gitleaks default rule: NuGet.org API keys, named in its style.
	{id: "nuget-api-key", patterns: []string{"oy2{dl:43}"}},
	// Octopus Deploy, OpenAI, OpenShift.
	{id: "octopus-deploy-api-key", patterns: []string{"API-{du:26}"}},
	{id: "openai-api-key", patterns: []string{
		"sk-proj-{dul_-:20+}", "sk-svcacct-{dul_-:20+}", "sk-admin-{dul_-:20+}", "sk-{dul:20}T3BlbkFJ{dul:20}"}},
	{id: "openshift-user-token", patterns: []string{"sha256~{dul_-:43}"}},
	// Perplexity, PlanetScale, Postman, Prefect, Pulumi, PyPI.
	{id: "perplexity-api-key", patterns: []string{"pplx-{dul:48}"}},
	{id: "planetscale-api-token", patterns: []string{"pscale_tkn_{dul_=.-:32-64}"}},
	{id: "planetscale-oauth-token", patterns: []string{"pscale_oauth_{dul_=.-:32-64}"}},
	{id: "planetscale-password", patterns: []string{"pscale_pw_{dul_=.-:32-64}"}},
	{id: "postman-api-token", patterns: []string{"PMAK-{dhH:24}-{dhH:34}"}},
	{id: "prefect-api-token", patterns: []string{"pnu_{dul:36}"}},
	{id: "pulumi-api-token", patterns: []string{"pul-{dh:40}"}},
	{id: "pypi-upload-token", patterns: []string{"pypi-AgEIcHlwaS5vcmc{dul_-:50+}"}},
	// Readme, RubyGems, Scalingo, SendGrid, Sendinblue (Brevo), Sentry,
	// SettleMint, Shippo, Shopify.
	{id: "readme-api-token", patterns: []string{"rdme_{dl:70}"}},
	{id: "rubygems-api-token", patterns: []string{"rubygems_{dh:48}"}},
	{id: "scalingo-api-token", patterns: []string{"tk-us-{dul_-:48}"}},
	{id: "sendgrid-api-token", patterns: []string{"SG.{dul_-:22}.{dul_-:43}"}},
	{id: "sendinblue-api-token", patterns: []string{"xkeysib-{dh:64}-{dul:16}"}},
	{id: "sentry-org-token", patterns: []string{"sntrys_eyJpYXQiO{dul+/=_:60+}"}},
	{id: "sentry-user-token", patterns: []string{"sntryu_{dh:64}"}},
	{id: "settlemint-application-access-token", patterns: []string{"sm_aat_{dul:16}"}},
	{id: "settlemint-personal-access-token", patterns: []string{"sm_pat_{dul:16}"}},
	{id: "settlemint-service-access-token", patterns: []string{"sm_sat_{dul:16}"}},
	{id: "shippo-api-token", patterns: []string{"shippo_live_{dhH:40}", "shippo_test_{dhH:40}"}},
	{id: "shopify-access-token", patterns: []string{"shpat_{dhH:32}"}},
	{id: "shopify-custom-access-token", patterns: []string{"shpca_{dhH:32}"}},
	{id: "shopify-private-app-access-token", patterns: []string{"shppa_{dhH:32}"}},
	{id: "shopify-shared-secret", patterns: []string{"shpss_{dhH:32}"}},
	// Slack: the legacy bot token's shape before the catch-all bot token,
	// the configuration refresh token before the user token.
	{id: "slack-app-token", patterns: []string{"xapp-{dul-:10+}"}},
	{id: "slack-legacy-bot-token", patterns: []string{"xoxb-{d:8-14}-{dul:18-26}"}},
	{id: "slack-bot-token", patterns: []string{"xoxb-{dul-:10+}"}},
	{id: "slack-config-access-token", patterns: []string{"xoxe.xoxb-{d:1}-{dul:150-170}", "xoxe.xoxp-{d:1}-{dul:150-170}"}},
	{id: "slack-config-refresh-token", patterns: []string{"xoxe-{d:1}-{dul:140-150}"}},
	{id: "slack-legacy-token", patterns: []string{"xoxo-{dhH-:10+}", "xoxs-{dhH-:10+}"}},
	{id: "slack-legacy-workspace-token", patterns: []string{"xoxa-{dul-:8+}", "xoxr-{dul-:8+}"}},
	{id: "slack-user-token", patterns: []string{"xoxp-{dul-:10+}", "xoxe-{dul-:10+}"}},
	{id: "slack-webhook-url", url: true, patterns: []string{
		"hooks.slack.com/services/{dul+/_-:20+}", "hooks.slack.com/workflows/{dul+/_-:20+}", "hooks.slack.com/triggers/{dul+/_-:20+}"}},
	// Sourcegraph, Square, Stripe, Telegram, Twilio, Typeform, Vault,
	// Yandex.
	{id: "sourcegraph-access-token", patterns: []string{"sgp_local_{dhH:40}", "sgp_{dhH:16}_{dhH:40}", "sgp_{dhH:40}"}},
	{id: "square-access-token", patterns: []string{"sq0atp-{dul_-:22-60}", "EAAA{dul_-:22-60}"}},
	{id: "stripe-access-token", patterns: []string{
		"sk_live_{dul:10+}", "sk_test_{dul:10+}", "sk_prod_{dul:10+}", "rk_live_{dul:10+}", "rk_test_{dul:10+}", "rk_prod_{dul:10+}"}},
	{id: "telegram-bot-api-token", patterns: []string{"bot{d:5-16}:|AA{dul_-:30-34}", "{d:5-16}:|AA{dul_-:30-34}"}},
	{id: "twilio-api-key", patterns: []string{"SK{dhH:32}"}},
	{id: "typeform-api-token", patterns: []string{"tfp_{dul_.=-:59}"}},
	{id: "vault-batch-token", patterns: []string{"hvb.{dul_-:138-300}"}},
	{id: "vault-service-token", patterns: []string{"hvs.{dul_-:24-120}"}},
	{id: "yandex-api-key", patterns: []string{"AQVN{dul_-:35-38}"}},
	// Secret keys in the "sk-" form of OpenAI that no vendor above claims
	// (DeepSeek, Moonshot and others use it): an API key all the same.
	{id: "generic-sk-key", kind: KindAPIKey, patterns: []string{"sk-{dul_-:20+}"}},
}

// vendorKindNames names the kinds of the vendor rule set, in rule order:
// the rule ids, without the airlock's own kinds that some rules report.
func vendorKindNames() []string {
	var names []string
	for _, r := range vendorRules {
		if r.kind == "" {
			names = append(names, r.id)
		}
	}
	return names
}

// Byte classes of the pattern notation.
const (
	vDigit  uint16 = 1 << iota // d
	vUpper                     // u
	vLower                     // l
	vHexLow                    // h: a-f
	vHexUp                     // H: A-F
	vUnder                     // _
	vDash                      // -
	vDot                       // .
	vPlus                      // +
	vSlash                     // /
	vEquals                    // =
	vTilde                     // ~
	vAt                        // @
	vQuoted                    // *: any byte but '"', '\n' and '\r'
)

var vendorClassLetters = map[byte]uint16{
	'd': vDigit, 'u': vUpper, 'l': vLower, 'h': vHexLow, 'H': vHexUp, '_': vUnder, '-': vDash,
	'.': vDot, '+': vPlus, '/': vSlash, '=': vEquals, '~': vTilde, '@': vAt, '*': vQuoted,
}

// vendorClass holds the classes of every byte.
var vendorClass = func() (t [256]uint16) {
	for c := range 256 {
		b := byte(c)
		switch {
		case b >= '0' && b <= '9':
			t[c] |= vDigit
		case b >= 'A' && b <= 'Z':
			t[c] |= vUpper
			if b <= 'F' {
				t[c] |= vHexUp
			}
		case b >= 'a' && b <= 'z':
			t[c] |= vLower
			if b <= 'f' {
				t[c] |= vHexLow
			}
		}
		switch b {
		case '_':
			t[c] |= vUnder
		case '-':
			t[c] |= vDash
		case '.':
			t[c] |= vDot
		case '+':
			t[c] |= vPlus
		case '/':
			t[c] |= vSlash
		case '=':
			t[c] |= vEquals
		case '~':
			t[c] |= vTilde
		case '@':
			t[c] |= vAt
		}
		if b != '"' && b != '\n' && b != '\r' {
			t[c] |= vQuoted
		}
	}
	return t
}()

// vendorPart is a literal or a run of a pattern.
type vendorPart struct {
	lit      string
	class    uint16
	min, max int // max < 0: no limit
}

// vendorForm is one compiled pattern: lead, then prefix, then parts.
type vendorForm struct {
	rule   int
	kind   secretKind
	lead   []vendorPart // matched backwards from the prefix
	prefix string
	parts  []vendorPart
}

// parseVendorPattern compiles a pattern of the notation above.
func parseVendorPattern(p string) (f vendorForm, err error) {
	if lead, rest, ok := strings.Cut(p, "|"); ok {
		if f.lead, err = parseVendorParts(lead); err != nil {
			return f, err
		}
		for _, part := range f.lead {
			if part.lit == "" && part.max < 0 {
				return f, errorString("unbounded run before '|' in " + strconv.Quote(p))
			}
		}
		p = rest
	}
	i := strings.IndexByte(p, '{')
	if i < 0 {
		i = len(p)
	}
	f.prefix = p[:i]
	if f.parts, err = parseVendorParts(p[i:]); err != nil {
		return f, err
	}
	if len(f.parts)+len(f.lead) == 0 || f.prefix == "" || len(f.prefix) < 2 && isASCIIAlnum(f.prefix[0]) {
		return f, errorString("no run, or a prefix of less than two bytes, in " + strconv.Quote(p))
	}
	return f, nil
}

// parseVendorParts compiles runs and literals.
func parseVendorParts(p string) (parts []vendorPart, err error) {
	for rest := p; rest != ""; {
		if rest[0] != '{' {
			j := strings.IndexByte(rest, '{')
			if j < 0 {
				j = len(rest)
			}
			parts = append(parts, vendorPart{lit: rest[:j]})
			rest = rest[j:]
			continue
		}
		j := strings.IndexByte(rest, '}')
		colon := strings.IndexByte(rest, ':')
		if j < 0 || colon < 0 || colon > j {
			return nil, errorString("bad run in " + strconv.Quote(p))
		}
		var part vendorPart
		for k := 1; k < colon; k++ {
			c, ok := vendorClassLetters[rest[k]]
			if !ok {
				return nil, errorString("bad class in " + strconv.Quote(p))
			}
			part.class |= c
		}
		n := rest[colon+1 : j]
		switch {
		case strings.HasSuffix(n, "+"):
			part.min, err = strconv.Atoi(n[:len(n)-1])
			part.max = -1
		case strings.Contains(n, "-"):
			lo, hi, _ := strings.Cut(n, "-")
			if part.min, err = strconv.Atoi(lo); err == nil {
				part.max, err = strconv.Atoi(hi)
			}
		default:
			part.min, err = strconv.Atoi(n)
			part.max = part.min
		}
		if err != nil || part.class == 0 || (part.max >= 0 && part.max < part.min) || part.max == 0 {
			return nil, errorString("bad length in " + strconv.Quote(p))
		}
		parts = append(parts, part)
		rest = rest[j+1:]
	}
	return parts, nil
}

type errorString string

func (e errorString) Error() string { return string(e) }

// The compiled rule set. vendorPairs maps the first two bytes of a prefix
// that starts with a letter or digit to its group in vendorGroups (0:
// none), the forms with that start, longest prefix first; vendorThird[g]
// holds the third bytes of group g's prefixes, a bit each (all of them for
// a prefix of two bytes). vendorRare holds the forms whose prefix starts
// with another byte, by that byte.
var (
	vendorForms  []vendorForm
	vendorGroups [][]uint16
	vendorThird  [][4]uint64
	vendorPairs  [1 << 16]uint8
	vendorRare   []vendorRareForms
)

type vendorRareForms struct {
	c     byte
	forms []uint16
}

func init() {
	seen := map[string]bool{}
	for ri, r := range vendorRules {
		if seen[r.id] {
			panic("airlock: vendor rule named twice: " + r.id)
		}
		seen[r.id] = true
		name := r.id
		if r.kind != "" {
			name = r.kind
		}
		kind := kindNamed(name)
		for _, p := range r.patterns {
			f, err := parseVendorPattern(p)
			if err != nil {
				panic("airlock: vendor rule " + r.id + ": " + err.Error())
			}
			f.rule, f.kind = ri, kind
			vendorForms = append(vendorForms, f)
		}
	}
	if len(vendorForms) >= 1<<16 {
		panic("airlock: too many vendor patterns")
	}
	groups := map[uint16][]uint16{}
	var pairs []uint16
	for i, f := range vendorForms {
		if c := f.prefix[0]; !isASCIIAlnum(c) {
			k := slices.IndexFunc(vendorRare, func(r vendorRareForms) bool { return r.c == c })
			if k < 0 {
				k = len(vendorRare)
				vendorRare = append(vendorRare, vendorRareForms{c: c})
			}
			vendorRare[k].forms = append(vendorRare[k].forms, uint16(i))
			continue
		}
		pair := uint16(f.prefix[0]) | uint16(f.prefix[1])<<8
		if groups[pair] == nil {
			pairs = append(pairs, pair)
		}
		groups[pair] = append(groups[pair], uint16(i))
	}
	if len(pairs) >= 1<<8 {
		panic("airlock: too many vendor prefix pairs")
	}
	vendorGroups = make([][]uint16, 1, len(pairs)+1)
	vendorThird = make([][4]uint64, 1, len(pairs)+1)
	for _, pair := range pairs {
		g := groups[pair]
		// Longest prefix first; the sort is stable, so table order next.
		slices.SortStableFunc(g, func(a, b uint16) int {
			return len(vendorForms[b].prefix) - len(vendorForms[a].prefix)
		})
		var third [4]uint64
		for _, fi := range g {
			if f := &vendorForms[fi]; len(f.prefix) == 2 {
				third = [4]uint64{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)}
			} else {
				c := f.prefix[2]
				third[c>>6] |= 1 << (c & 63)
			}
		}
		vendorPairs[pair] = uint8(len(vendorGroups))
		vendorGroups = append(vendorGroups, g)
		vendorThird = append(vendorThird, third)
	}
}

// vendorScan is the state of one findVendorTokens call.
type vendorScan struct {
	text  string
	spans []redSpan
	skip  int // no token starts before skip: the last one found ends there
	// retry[f], once allocated, is where form f may be tried again: a
	// failed match that read far past its start read the words it crossed,
	// and trying it there again would read the same bytes, so that a text
	// made of prefixes stays linear.
	retry []int32
}

// vendorRetryAfter is how far a failed match reads before its form is not
// tried again in what it read.
const vendorRetryAfter = 64

// findVendorTokens finds the tokens of the vendor rule set in one pass. It
// reads the text 64 bytes at a time, classifying eight bytes at once
// ("SIMD within a register") into a bitmap of letters and digits, and
// looks at the first bytes of each word that the bitmap shows: a table
// look-up passes over almost every word, and only the forms whose prefix
// starts with a word's first two bytes are tried there.
func findVendorTokens(text string, spans []redSpan) []redSpan {
	s := vendorScan{text: text, spans: spans}
	n := len(text)
	var prev uint64 // the bitmap of the previous block
	for base := 0; base < n; base += 64 {
		alnum := alnumBlock(text, base)
		starts := alnum &^ (alnum<<1 | prev>>63)
		prev = alnum
		if d := s.skip - base; d > 0 {
			if d >= 64 {
				continue
			}
			starts &^= 1<<d - 1
		}
		for starts != 0 {
			p := base + bits.TrailingZeros64(starts)
			starts &= starts - 1
			if p+2 >= n {
				break
			}
			w := text[p : p+3]
			if g := vendorPairs[uint16(w[0])|uint16(w[1])<<8]; g != 0 && vendorThird[g][w[2]>>6]&(1<<(w[2]&63)) != 0 && p >= s.skip {
				s.tryGroup(vendorGroups[g], p)
			}
		}
	}
	for _, rare := range vendorRare {
		c, forms := rare.c, rare.forms
		for off := 0; ; {
			j := strings.IndexByte(text[off:], c)
			if j < 0 {
				break
			}
			p := off + j
			off = p + 1
			before := len(s.spans)
			s.tryGroup(forms, p)
			if len(s.spans) > before {
				// Found after the tokens of the pass above: put it in
				// order, or drop it where it overlaps one of them.
				sp := s.spans[len(s.spans)-1]
				s.spans = appendSorted(s.spans[:len(s.spans)-1], sp)
				off = sp.end
			}
		}
	}
	return s.spans
}

// alnumBlock returns a bitmap of the 64 bytes of text from base: bit j is
// set when text[base+j] is an ASCII letter or digit.
func alnumBlock(text string, base int) uint64 {
	var alnum uint64
	for c := 0; c < 64; c += 8 {
		var x uint64
		if i := base + c; i+8 <= len(text) {
			x = load64(text, i)
		} else {
			for k := len(text) - 1; k >= i; k-- {
				x = x<<8 | uint64(text[k])
			}
		}
		// swarRange(x|0x20..., 'a', 'z') | swarRange(x, '0', '9'), written
		// out to share its steps: with 0x20 set, a capital is small.
		y := x &^ swarHighs
		l := y | 0x2020202020202020
		m := ((l+(0x80-'a')*swarOnes)&^(l+(0x7F-'z')*swarOnes) | (y+(0x80-'0')*swarOnes)&^(y+(0x7F-'9')*swarOnes)) &^ x & swarHighs
		// The high bit of byte k to bit k: the products of the bits and
		// the powers of two in the constant never overlap.
		alnum |= m >> 7 * 0x0102040810204080 >> 56 << c
	}
	return alnum
}

// tryGroup tries the forms at p, where a prefix may start, until one
// matches.
func (s *vendorScan) tryGroup(forms []uint16, p int) {
	for _, fi := range forms {
		f := &vendorForms[fi]
		if !strings.HasPrefix(s.text[p:], f.prefix) || s.retry != nil && p < int(s.retry[fi]) {
			continue
		}
		start, end, read, ok := f.match(s.text, p)
		if !ok {
			if read-p > vendorRetryAfter {
				if s.retry == nil {
					s.retry = make([]int32, len(vendorForms))
				}
				s.retry[fi] = int32(min(read, 1<<31-1))
			}
			continue
		}
		r := &vendorRules[f.rule]
		if r.keep {
			start = p + len(f.prefix)
			if isPlaceholder(s.text[start:end]) {
				continue // a value already redacted
			}
		}
		if r.url {
			floor := 0
			if len(s.spans) > 0 {
				floor = s.spans[len(s.spans)-1].end
			}
			for _, scheme := range [...]string{"https://", "http://", "//"} {
				if start-len(scheme) >= floor && strings.HasSuffix(s.text[:start], scheme) {
					start -= len(scheme)
					break
				}
			}
		}
		s.spans = append(s.spans, redSpan{start, end, f.kind})
		s.skip = end
		return
	}
}

// match matches form f where its prefix is, at p. It returns where the
// token starts and ends, or how far it read when there is none.
func (f *vendorForm) match(text string, p int) (start, end, read int, ok bool) {
	var runs vendorRuns
	start = p
	if f.lead != nil {
		if start, ok = matchBack(text, p, f.lead, &runs); !ok {
			return 0, 0, p, false
		}
	}
	if !tokenBoundary(text, start) {
		return 0, 0, p, false
	}
	n := len(text)
	i := p + len(f.prefix)
	var last vendorPart
	cut := false // the last run stopped at its longest
	for k, part := range f.parts {
		if part.lit != "" {
			if !strings.HasPrefix(text[i:], part.lit) {
				return 0, 0, i, false
			}
			i += len(part.lit)
			continue
		}
		lim := n
		if part.max >= 0 {
			lim = min(n, i+part.max)
		}
		j := i
		for j < lim && vendorClass[text[j]]&part.class != 0 {
			j++
		}
		read = j
		if k == len(f.parts)-1 {
			last = part
			cut = j == lim && j < n
			for j-i > part.min && (text[j-1] == '.' || text[j-1] == '-' || text[j-1] == '/') {
				j--
				cut = false
			}
		}
		if j-i < part.min {
			return 0, 0, max(read, j+1), false
		}
		runs.add(i, j)
		i = j
	}
	read = max(read, i+1)
	if i < n && (isASCIIAlnum(text[i]) || cut && vendorClass[text[i]]&last.class != 0 && !endsRun(text, i, last.class)) {
		return 0, 0, read, false
	}
	if !runs.random(text, vendorRules[f.rule].loose) {
		return 0, 0, read, false
	}
	return start, i, read, true
}

// vendorRuns holds where the runs of a match are: what the randomness
// test reads, without the literals.
type vendorRuns struct {
	n  int
	at [16][2]int
}

func (r *vendorRuns) add(i, j int) {
	if r.n < len(r.at) && j > i {
		r.at[r.n] = [2]int{i, j}
		r.n++
	}
}

// random judges the runs of a token: not one byte repeated, and unless
// loose, random-looking: a digit, or both upper and lower case.
func (r *vendorRuns) random(text string, loose bool) bool {
	var classes uint16
	same := true
	for _, at := range r.at[:r.n] {
		for k := at[0]; k < at[1]; k++ {
			classes |= vendorClass[text[k]]
			same = same && text[k] == text[r.at[0][0]]
		}
	}
	if same {
		return false
	}
	return loose || classes&vDigit != 0 || classes&(vUpper|vLower) == vUpper|vLower
}

// endsRun reports whether text[i] is a '.', '-' or '/' that ends a run of
// class: the end of a sentence or a path after a token at its longest.
func endsRun(text string, i int, class uint16) bool {
	c := text[i]
	return (c == '.' || c == '-' || c == '/') && (i+1 == len(text) || vendorClass[text[i+1]]&class == 0)
}

// matchBack matches the lead of a form backwards from q, where its prefix
// is, and returns where it starts.
func matchBack(text string, q int, lead []vendorPart, runs *vendorRuns) (int, bool) {
	for k := len(lead) - 1; k >= 0; k-- {
		part := lead[k]
		if part.lit != "" {
			if !strings.HasSuffix(text[:q], part.lit) {
				return 0, false
			}
			q -= len(part.lit)
			continue
		}
		j := q
		for lim := max(0, q-part.max); j > lim && vendorClass[text[j-1]]&part.class != 0; j-- {
		}
		if q-j < part.min {
			return 0, false
		}
		runs.add(j, q)
		q = j
	}
	return q, true
}
