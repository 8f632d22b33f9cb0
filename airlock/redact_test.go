package airlock_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/airlock"
)

// redactCase is one row of a redaction table: the input and the exact
// output. The expected counts are derived from the placeholders the output
// gains, so every row also checks what Redact reports.
type redactCase struct {
	name string
	in   string
	want string
}

// countOverrides replaces the derived counts of the rows where a later
// detector swallowed an earlier one's placeholder: both were found.
var countOverrides = map[string][]airlock.Redaction{
	"password swallows a partial key": {{Kind: airlock.KindAPIKey, Count: 1}, {Kind: airlock.KindPassword, Count: 1}},
}

// wantRedactions returns the counts Redact should report when it turns in
// into want: one per placeholder gained, in the order of the kinds.
func wantRedactions(in, want string) []airlock.Redaction {
	var out []airlock.Redaction
	for _, k := range airlock.KindNames() {
		p := "[" + k + "]"
		if n := strings.Count(want, p) - strings.Count(in, p); n > 0 {
			out = append(out, airlock.Redaction{Kind: k, Count: n})
		}
	}
	return out
}

func runRedactCases(t *testing.T, cases []redactCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, reds := airlock.Redact(tc.in)
			if got != tc.want {
				t.Fatalf("Redact(%q)\n got %q\nwant %q", tc.in, got, tc.want)
			}
			want, ok := countOverrides[tc.name]
			if !ok {
				want = wantRedactions(tc.in, tc.want)
			}
			if !reflect.DeepEqual(reds, want) {
				t.Fatalf("Redact(%q) redactions=%v, want %v", tc.in, reds, want)
			}
			again, more := airlock.Redact(got)
			if again != got || more != nil {
				t.Fatalf("Redact is not idempotent on %q: got %q %v", got, again, more)
			}
		})
	}
}

var privateKeyBody = "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n" +
	"VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n"

var privateKeyCases = []redactCase{
	{"rsa", "key:\n-----BEGIN RSA PRIVATE KEY-----\n" + privateKeyBody + "-----END RSA PRIVATE KEY-----\nthanks", "key:\n[private-key]\nthanks"},
	{"ec", "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg4LVWM9nuwNSk3yPtz\n-----END EC PRIVATE KEY-----", "[private-key]"},
	{"openssh", "~/.ssh/id_ed25519:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU=\n-----END OPENSSH PRIVATE KEY-----", "~/.ssh/id_ed25519:\n[private-key]"},
	{"encrypted", "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIFHDBOBgkqhkiG9w0BBQ0wQTApBgkq\n-----END ENCRYPTED PRIVATE KEY----- done", "[private-key] done"},
	{"pkcs8", "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----", "[private-key]"},
	{"pgp", "-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOYBF0\n-----END PGP PRIVATE KEY BLOCK-----", "[private-key]"},
	{"escaped newlines in json", `{"key":"-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----\n"}`, `{"key":"[private-key]\n"}`},
	{"unterminated runs to the end", "paste:\n-----BEGIN RSA PRIVATE KEY-----\n" + privateKeyBody + "and then my log lines", "paste:\n[private-key]"},
	{"two blocks", "-----BEGIN EC PRIVATE KEY-----\nAAA\n-----END EC PRIVATE KEY-----\nand\n-----BEGIN EC PRIVATE KEY-----\nBBB\n-----END EC PRIVATE KEY-----", "[private-key]\nand\n[private-key]"},
	{"certificate is public", "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIE\n-----END CERTIFICATE-----", "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIE\n-----END CERTIFICATE-----"},
	{"public key is public", "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYI\n-----END PUBLIC KEY-----", "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYI\n-----END PUBLIC KEY-----"},
	{"prose about keys", "I pasted my private key by mistake, BEGIN and END lines included", "I pasted my private key by mistake, BEGIN and END lines included"},
}

func TestRedactPrivateKey(t *testing.T) {
	t.Parallel()
	runRedactCases(t, privateKeyCases)
}

var urlCredentialCases = []redactCase{
	{"https user and password", "clone https://alice:s3cr3t@example.com/x failed", "clone https://[url-credentials]@example.com/x failed"},
	{"postgres dsn", "DATABASE_URL=postgres://admin:hunter22@db.internal:5432/app", "DATABASE_URL=postgres://[url-credentials]@db.internal:5432/app"},
	{"redis password only", "redis://:p4ssw0rd@cache:6379/0", "redis://[url-credentials]@cache:6379/0"},
	{"token as user", "https://x-access-token:ghs_16C7e42F292c6912E7710c838347Ae178B4a@github.com/o/r.git", "https://[url-credentials]@github.com/o/r.git"},
	{"long token without password", "https://0123456789abcdef0123456789abcdef@sentry.io/42", "https://[url-credentials]@sentry.io/42"},
	{"at sign in password", "ftp://bob:p@ss@files.example.org/pub", "ftp://[url-credentials]@files.example.org/pub"},
	{"git user is not a secret", "ssh://git@github.com/org/repo.git", "ssh://git@github.com/org/repo.git"},
	{"at sign in path", "https://example.com/@user/status/1", "https://example.com/@user/status/1"},
	{"no user info", "https://example.com:8443/login?next=/home", "https://example.com:8443/login?next=/home"},
	{"no host", "see https://user:pass@ for details", "see https://user:pass@ for details"},
	{"already redacted", "https://[url-credentials]@example.com/x", "https://[url-credentials]@example.com/x"},
}

func TestRedactURLCredentials(t *testing.T) {
	t.Parallel()
	runRedactCases(t, urlCredentialCases)
}

const sampleJWT = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"

var jwtCases = []redactCase{
	{"signed", "token=" + sampleJWT + " expired", "token=[jwt] expired"},
	{"bearer header keeps the scheme", "Authorization: Bearer " + sampleJWT, "Authorization: Bearer [jwt]"},
	{"in json", `{"id_token":"` + sampleJWT + `"}`, `{"id_token":"[jwt]"}`},
	{"unsigned", "alg none: eyJhbGciOiJub25lIn0.eyJzdWIiOiIxMjM0NTY3ODkwIn0.", "alg none: [jwt]."},
	{"encrypted five segments", "eyJhbGciOiJSU0EtT0FFUCJ9.OKOawDo13gRp2ojaHV7LFpZcgV7T6DVZKTyKOMTYUmKoTCVJRgckCL9kiMT03JGe.48V1_ALb6US04U3b.5eym8TW_c8SuK0ltJ3rpYIzOeDQz7TALvtu6UG9oMo4vpzs9tX_EFShS8iB7j6ji.XFBoMYUZodetZdvTiFvSkQ", "[jwt]"},
	{"header alone is not a token", "header eyJhbGciOiJIUzI1NiJ9 only", "header eyJhbGciOiJIUzI1NiJ9 only"},
	{"two segments without json payload", "eyJhbGciOiJIUzI1NiJ9.notjsonatall", "eyJhbGciOiJIUzI1NiJ9.notjsonatall"},
	{"eyJ inside a word", "keyJar.eyJustKidding.whatever", "keyJar.eyJustKidding.whatever"},
	{"short segments", "eyJhbGci.eyJz.abc", "eyJhbGci.eyJz.abc"},
}

func TestRedactJWT(t *testing.T) {
	t.Parallel()
	runRedactCases(t, jwtCases)
}

var awsCases = []redactCase{
	{"access key id", "key AKIAIOSFODNN7EXAMPLE leaked", "key [aws-access-token] leaked"},
	{"temporary key id", "ASIAY34FZKBOKMUTVV7A", "[aws-access-token]"},
	{"role id", "AROAJ2UCCR6DPCEXAMPLE? no: AROA1234567890ABCDEF", "AROAJ2UCCR6DPCEXAMPLE? no: [aws-access-token]"},
	{"in env dump", "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\nAWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n", "AWS_ACCESS_KEY_ID=[aws-access-token]\nAWS_SECRET_ACCESS_KEY=[aws-key]\n"},
	{"secret in credentials file", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws_secret_access_key = [aws-key]"},
	{"secret in json", `"SecretAccessKey": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"`, `"SecretAccessKey": "[aws-key]"`},
	{"secret of the wrong length is still a secret", "aws_secret_access_key=notfortycharsbutsecret", "aws_secret_access_key=[api-key]"},
	{"too short", "AKIAIOSFODNN7EXAMPL", "AKIAIOSFODNN7EXAMPL"},
	{"glued before", "XAKIAIOSFODNN7EXAMPLE", "XAKIAIOSFODNN7EXAMPLE"},
	{"glued after", "AKIAIOSFODNN7EXAMPLEX", "AKIAIOSFODNN7EXAMPLEX"},
	{"lower case", "AKIAiosfodnn7example", "AKIAiosfodnn7example"},
	{"unknown prefix", "ABCDIOSFODNN7EXAMPLE", "ABCDIOSFODNN7EXAMPLE"},
}

func TestRedactAWSKey(t *testing.T) {
	t.Parallel()
	runRedactCases(t, awsCases)
}

var gitHubCases = []redactCase{
	{"classic pat", "GITHUB_TOKEN=ghp_16C7e42F292c6912E7710c838347Ae178B4a in CI", "GITHUB_TOKEN=[github-pat] in CI"},
	{"oauth", "gho_16C7e42F292c6912E7710c838347Ae178B4a", "[github-oauth]"},
	{"user to server", "(ghu_16C7e42F292c6912E7710c838347Ae178B4a)", "([github-app-token])"},
	{"server to server", "ghs_16C7e42F292c6912E7710c838347Ae178B4a,", "[github-app-token],"},
	{"refresh", "ghr_1B4a2e77838347a7E420ce178F2E7c6912E169246c34E1ccbF66C46812d16D5B1A9Dc86A1498", "[github-refresh-token]"},
	{"fine grained", "token: github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUV", "token: [github-fine-grained-pat]"},
	{"too short", "ghp_short", "ghp_short"},
	{"prefix in prose", "the ghp_ prefix marks classic tokens", "the ghp_ prefix marks classic tokens"},
	{"glued to a word", "xghp_16C7e42F292c6912E7710c838347Ae178B4a", "xghp_16C7e42F292c6912E7710c838347Ae178B4a"},
	{"github_pat too short", "github_pat_123", "github_pat_123"},
}

func TestRedactGitHubToken(t *testing.T) {
	t.Parallel()
	runRedactCases(t, gitHubCases)
}

var slackCases = []redactCase{
	{"bot token", "SLACK_BOT_TOKEN=xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "SLACK_BOT_TOKEN=[slack-bot-token]"},
	{"user token", "xoxp-123456789012-123456789012-123456789012-0123456789abcdef0123456789abcdef", "[slack-user-token]"},
	{"legacy and refresh", "xoxa-2-1234567890 xoxr-1234567890-abc", "[slack-legacy-workspace-token] [slack-legacy-workspace-token]"},
	{"webhook", "posting to https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX failed", "posting to [slack-webhook-url] failed"},
	{"webhook without scheme", "hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX", "[slack-webhook-url]"},
	{"xoxo is a hug", "thanks team xoxo", "thanks team xoxo"},
	{"prefix alone", "tokens start with xoxb- and are long", "tokens start with xoxb- and are long"},
	{"webhook host without path", "see hooks.slack.com/services/ docs", "see hooks.slack.com/services/ docs"},
}

func TestRedactSlackToken(t *testing.T) {
	t.Parallel()
	runRedactCases(t, slackCases)
}

var apiKeyCases = []redactCase{
	{"openai project key", "OPENAI_API_KEY=sk-proj-abc123def456ghi789jkl012mno345", "OPENAI_API_KEY=[openai-api-key]"},
	{"anthropic key", "using sk-ant-api03-AbCdEf0123456789_xyz-QRSTuv in the app", "using [anthropic-api-key] in the app"},
	{"plain sk key", "(sk-0123456789abcdefABCDEF)", "([api-key])"},
	{"stripe secret", "sk_live_4eC39HqLyjWDarjtT1zdp7dc", "[stripe-access-token]"},
	{"google key", "key=AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY&q=x", "key=[gcp-api-key]&q=x"},
	{"api_key pair", "GET /v1/items?api_key=abcd1234efgh5678&page=2", "GET /v1/items?api_key=[api-key]&page=2"},
	{"apikey colon", "apikey: 0123456789abcdef", "apikey: [api-key]"},
	{"x-api-key header", "-H 'x-api-key: 0123456789abcdef'", "-H 'x-api-key: [api-key]'"},
	{"bearer header", "Authorization: Bearer abcdef0123456789abcdef", "Authorization: Bearer [api-key]"},
	{"bearer in curl", `curl -H "Authorization: Bearer abcdef0123456789abcdef" https://api.example.com`, `curl -H "Authorization: Bearer [api-key]" https://api.example.com`},
	{"bearer alone", "sent bearer 0a1b2c3d4e5f6a7b8c9d0e1f", "sent bearer [api-key]"},
	{"basic auth", "Authorization: Basic dXNlcjpwYXNzd29yZA==", "Authorization: Basic [api-key]"},
	{"token in json", `{"token": "abcdef0123456789abcdef"}`, `{"token": "[api-key]"}`},
	{"client secret", "client_secret=Zm9vYmFyYmF6cXV4", "client_secret=[api-key]"},
	{"task-list is prose", "see the task-list and the desk-lamp", "see the task-list and the desk-lamp"},
	{"sk- words", "sk-learn risk-free whisk-ing sk-abc", "sk-learn risk-free whisk-ing sk-abc"},
	{"long sk- word without digits", "sk-this-is-only-a-hyphenated-phrase", "sk-this-is-only-a-hyphenated-phrase"},
	{"bearer in prose", "I am the bearer of bad news", "I am the bearer of bad news"},
	{"short api key value", "api_key=short", "api_key=short"},
	{"token counts", "tokens: 4096, max_tokens=4096", "tokens: 4096, max_tokens=4096"},
	{"short token value", "token: expired", "token: expired"},
	{"already redacted", "Authorization: Bearer [jwt]", "Authorization: Bearer [jwt]"},
	{"digest parameters", `Authorization: Digest username="bob", response="6629fae49393a05397450978507c4ef1"` + "\nnext", "Authorization: Digest [api-key]\nnext"},
	{"very long credential goes whole", "Authorization:" + strings.Repeat("0", 1000), "Authorization:[api-key]"},
}

func TestRedactAPIKey(t *testing.T) {
	t.Parallel()
	runRedactCases(t, apiKeyCases)
}

var passwordCases = []redactCase{
	{"equals", "login with password=hunter22 fails", "login with password=[password] fails"},
	{"passwd colon", "passwd: s3cret!", "passwd: [password]"},
	{"pwd", "user=bob pwd=abc123", "user=bob pwd=[password]"},
	{"json with spaces", `{"user": "bob", "password": "correct horse battery"}`, `{"user": "bob", "password": "[password]"}`},
	{"query string", "/login?user=bob&pass=letmein&next=/", "/login?user=bob&pass=[password]&next=/"},
	{"env var", "DB_PASSWORD=Sup3rS3cret", "DB_PASSWORD=[password]"},
	{"camel case", "newPassword: Tr0ub4dor, oldPassword: 0ldPa55", "newPassword: [password], oldPassword: [password]"},
	{"confirmation", "password_confirmation=hunter22;", "password_confirmation=[password];"},
	{"upper case", "PASSWORD: ABC-123", "PASSWORD: [password]"},
	{"yaml", "db:\n  user: app\n  password: 'p@ss w0rd'\n", "db:\n  user: app\n  password: '[password]'\n"},
	{"escaped json", `{\"password\":\"hunter22\"}`, `{\"password\":\"[password]\"}`},
	{"markdown bold", "**Password:** hunter22", "**Password:** [password]"},
	{"spanish", "mi contraseña: Secreto123", "mi contraseña: [password]"},
	{"french", "Mot de passe : azerty123", "Mot de passe : [password]"},
	{"german", "Passwort: geheim99", "Passwort: [password]"},
	{"portuguese", "senha=minhasenha", "senha=[password]"},
	{"russian", "пароль: qwerty123", "пароль: [password]"},
	{"chinese", "我的密码: 123456", "我的密码: [password]"},
	{"japanese", "パスワード=abc123", "パスワード=[password]"},
	{"ruby hash", `{ 'password' => 'hunter22' }`, `{ 'password' => '[password]' }`},
	{"go short assignment", `password := "hunter22"`, `password := "[password]"`},
	{"test results", "Tests pass: 12, fail: 0", "Tests pass: 12, fail: 0"},
	{"working directory", "PWD=/home/runner/work pwd: ~/src", "PWD=/home/runner/work pwd: ~/src"},
	{"masked", "password: ********", "password: ********"},
	{"bypass", "bypass=true compass=north", "bypass=true compass=north"},
	{"passwordless", "passwordless: true", "passwordless: true"},
	{"no separator", "I forgot my password yesterday", "I forgot my password yesterday"},
	{"empty value", "password=\nuser=bob", "password=\nuser=bob"},
	{"already redacted", "password: [password]", "password: [password]"},
	{"no value words", "password: null, passwd=true, pwd: none", "password: null, passwd=true, pwd: none"},
	{"schema, not a value", `"password": {"type": "string"}`, `"password": {"type": "string"}`},
	{"masked with x", "password=xxxxxx", "password=xxxxxx"},
	{"long quoted value falls back to one word", `password="` + strings.Repeat("ab ", 200) + `"`, `password="[password] ` + strings.Repeat("ab ", 199) + `"`},
}

func TestRedactPassword(t *testing.T) {
	t.Parallel()
	runRedactCases(t, passwordCases)
}

var emailCases = []redactCase{
	{"plain", "mail me at jane.doe@example.com please", "mail me at [email] please"},
	{"plus tag and sentence end", "jane+bugs@example.co.uk.", "[email]."},
	{"angle brackets", "From: Jane <jane_doe99@mail.example.org>", "From: Jane <[email]>"},
	{"two", "a.b@c.io, d-e@f.io", "[email], [email]"},
	{"non ascii local part", "Contact: josé.garcía@correo.es", "Contact: [email]"},
	{"idn domain", "пишите на ivan@пример.рф", "пишите на [email]"},
	{"trailing numeric label dropped", "john@example.com.5", "[email].5"},
	{"url user", "https://user@example.com", "https://[email]"},
	{"version", "v1.2@beta", "v1.2@beta"},
	{"localhost", "user@localhost", "user@localhost"},
	{"package version", "npm i left-pad@1.3.0", "npm i left-pad@1.3.0"},
	{"retina asset", "icon@2x.png is blurry", "icon@2x.png is blurry"},
	{"reflog", "HEAD@{1}", "HEAD@{1}"},
	{"git remote", "git@github.com:org/repo.git", "git@github.com:org/repo.git"},
	{"mention", "@jane can you look", "@jane can you look"},
	{"price per unit", "3 @ $5.00", "3 @ $5.00"},
	{"decorator", "@Override public void run()", "@Override public void run()"},
}

func TestRedactEmail(t *testing.T) {
	t.Parallel()
	runRedactCases(t, emailCases)
}

var ibanCases = []redactCase{
	{"grouped", "IBAN DE89 3704 0044 0532 0130 00, BIC COBADEFFXXX", "IBAN [iban], BIC COBADEFFXXX"},
	{"compact", "DE89370400440532013000", "[iban]"},
	{"letters in account", "GB82 WEST 1234 5698 7654 32", "[iban]"},
	{"france", "FR14 2004 1010 0505 0001 3M02 606.", "[iban]."},
	{"netherlands", "NL91ABNA0417164300", "[iban]"},
	{"label", "IBAN: BE68539007547034", "IBAN: [iban]"},
	{"lower case", "de89 3704 0044 0532 0130 00", "[iban]"},
	{"italy", "IT60X0542811101000000123456", "[iban]"},
	{"followed by a year", "DE89 3704 0044 0532 0130 00 2026", "[iban] 2026"},
	{"bad checksum", "DE89 3704 0044 0532 0130 01", "DE89 3704 0044 0532 0130 01"},
	{"bad checksum with letters", "GB82 WEST 1234 5698 7654 33", "GB82 WEST 1234 5698 7654 33"},
	{"wrong length for the country", "DE89370400440532013", "DE89370400440532013"},
	{"iso code", "ISO 8601 and RFC3339", "ISO 8601 and RFC3339"},
	{"model number", "Pixel 8 Pro, SM-S918B, AB12 3456", "Pixel 8 Pro, SM-S918B, AB12 3456"},
}

func TestRedactIBAN(t *testing.T) {
	t.Parallel()
	runRedactCases(t, ibanCases)
}

var cardCases = []redactCase{
	{"visa spaced", "card 4111 1111 1111 1111 declined", "card [card] declined"},
	{"visa dashed", "4111-1111-1111-1111", "[card]"},
	{"visa compact", "4111111111111111", "[card]"},
	{"mastercard", "5555 5555 5555 4444", "[card]"},
	{"mastercard 2-series", "2223 0031 2200 3222", "[card]"},
	{"amex", "3782 822463 10005", "[card]"},
	{"discover", "6011111111111117", "[card]"},
	{"diners", "3056 9309 0259 04", "[card]"},
	{"visa 13", "4222222222222", "[card]"},
	{"then expiry", "4111 1111 1111 1111 exp 12/27", "[card] exp 12/27"},
	{"luhn invalid", "4111 1111 1111 1112", "4111 1111 1111 1112"},
	{"luhn valid but no issuer", "1234 5678 9012 3452", "1234 5678 9012 3452"},
	{"luhn valid order number", "order 7000000000000005", "order 7000000000000005"},
	{"timestamp millis", "at 1733140800009", "at 1733140800009"},
	{"too long", "41111111111111111111", "41111111111111111111"},
	{"order id", "#100234 and ORD-2024-000123", "#100234 and ORD-2024-000123"},
	{"decimal", "4111111111111111.50", "4111111111111111.50"},
	{"odd groups", "4111 11 1111 1111 111", "4111 11 1111 1111 111"},
	{"mixed separators", "4111 1111-1111 1111", "4111 1111-1111 1111"},
	{"version", "4.1.1111", "4.1.1111"},
}

func TestRedactCard(t *testing.T) {
	t.Parallel()
	runRedactCases(t, cardCases)
}

var phoneCases = []redactCase{
	{"international us", "call +1 (555) 123-4567 now", "call [phone] now"},
	{"international de", "+49 30 1234567", "[phone]"},
	{"international uk", "+44 20 7946 0958", "[phone]"},
	{"international fr", "+33 6 12 34 56 78", "[phone]"},
	{"international compact", "+8613800138000", "[phone]"},
	{"international trunk zero", "+49 (0)30 1234567", "[phone]"},
	{"international dots", "+1.555.123.4567", "[phone]"},
	{"us parentheses", "(555) 123-4567", "[phone]"},
	{"us dashes", "555-123-4567", "[phone]"},
	{"us dots", "555.123.4567", "[phone]"},
	{"us with country", "1-800-555-0199", "[phone]"},
	{"france", "06 12 34 56 78", "[phone]"},
	{"germany", "030 1234567", "[phone]"},
	{"germany mobile", "0151 23456789", "[phone]"},
	{"germany slash", "0151/23456789", "[phone]"},
	{"uk", "020 7946 0958", "[phone]"},
	{"netherlands", "06-12345678", "[phone]"},
	{"double zero prefix", "Tel: 0049 30 1234567", "Tel: [phone]"},
	{"spain", "llámame al 612 34 56 78", "llámame al [phone]"},
	{"version", "4.2.1 and 1.10.3", "4.2.1 and 1.10.3"},
	{"date", "2026-12-02", "2026-12-02"},
	{"european date", "02.12.2026 and 12/02/2026", "02.12.2026 and 12/02/2026"},
	{"time", "12:30:45", "12:30:45"},
	{"timestamp", "2026-09-12T09:14:00Z", "2026-09-12T09:14:00Z"},
	{"price", "$1,299.99 or 12,50 €", "$1,299.99 or 12,50 €"},
	{"order ids", "#100234 ORD-2024-000123", "#100234 ORD-2024-000123"},
	{"build number", "build 20261202 (4102)", "build 20261202 (4102)"},
	{"crash count", "crashed 1234567 times", "crashed 1234567 times"},
	{"thousands", "1 234 567 users", "1 234 567 users"},
	{"ip address", "192.168.100.200 and 10.0.2.15", "192.168.100.200 and 10.0.2.15"},
	{"api level", "Android 14 (API 34)", "Android 14 (API 34)"},
	{"uuid", "123e4567-e89b-12d3-a456-426614174000", "123e4567-e89b-12d3-a456-426614174000"},
	{"area code starting with 1", "123-456-7890", "123-456-7890"},
	{"plus count", "+1 vote, +12 more", "+1 vote, +12 more"},
	{"coordinates", "at +48.856614, +2.352222 and +48.856614 2.352222", "at +48.856614, +2.352222 and +48.856614 2.352222"},
	{"time zone offset", "2026-09-12T09:14:00+0200", "2026-09-12T09:14:00+0200"},
	{"tel uri", "tel:+15551234567", "tel:[phone]"},
	{"in json", `{"phone":"+49-30-1234567"}`, `{"phone":"[phone]"}`},
	{"extension", "+1 555 123 4567 ext. 89", "[phone] ext. 89"},
	{"bare digits", "5551234567", "5551234567"},
	{"chinese mobile", "快递员打不通我的电话 13800138000，包裹被退回了", "快递员打不通我的电话 [phone]，包裹被退回了"},
	{"chinese mobile glued to han", "电话13800138000", "电话[phone]"},
	{"japanese mobile", "携帯: 09012345678", "携帯: [phone]"},
	{"korean mobile", "010-1234-5678 또는 01012345678", "[phone] 또는 [phone]"},
	{"eleven digits of another shape", "build 12345678901 and 20261202123", "build 12345678901 and 20261202123"},
	{"chinese mobile inside a longer id", "id 138001380001 and x13800138000", "id 138001380001 and x13800138000"},
	{"percent", "555 123 4567%", "555 123 4567%"},
}

func TestRedactPhone(t *testing.T) {
	t.Parallel()
	runRedactCases(t, phoneCases)
}

// Order: the most specific detector wins, a secret goes whole, and a lower
// detector never sees part of it.
var orderCases = []redactCase{
	{"url credentials before email", "https://bob:hunter22@example.com", "https://[url-credentials]@example.com"},
	{"jwt before api key pair", "api_key=" + sampleJWT, "api_key=[jwt]"},
	{"token before password value", "password=ghp_16C7e42F292c6912E7710c838347Ae178B4a", "password=[github-pat]"},
	{"password swallows a partial key", "password=sk-0123456789abcdefABCDEF.tail", "password=[password]"},
	{"email before card", "4111111111111111@example.com", "[email]"},
	{"iban before card and phone", "DE89 3704 0044 0532 0130 00", "[iban]"},
	{"private key swallows everything", "-----BEGIN RSA PRIVATE KEY-----\npassword=x jane@example.com\n-----END RSA PRIVATE KEY-----", "[private-key]"},
	{"mixed report", "I'm jane@example.com, +1 (555) 123-4567, card 4111 1111 1111 1111, key AKIAIOSFODNN7EXAMPLE",
		"I'm [email], [phone], card [card], key [aws-access-token]"},
}

func TestRedactOrder(t *testing.T) {
	t.Parallel()
	runRedactCases(t, orderCases)
}

// A value found once is replaced wherever else it appears, so the output
// never contains a value Redact reported; short values only as whole words.
var propagationCases = []redactCase{
	{"password repeated in prose", "password=hunter22, then I typed hunter22 again", "password=[password], then I typed [password] again"},
	{"long value inside a word", "pwd=Tr0ub4dor&3 and xTr0ub4dor&3x", "pwd=[password] and x[password]x"},
	{"short value only as a word", "pwd=test; latest test run", "pwd=[password]; latest [password] run"},
	{"url password alone", "https://bob:Sw0rdfish9@example.com and Sw0rdfish9", "https://[url-credentials]@example.com and [url-credentials]"},
	{"key glued to a word", "AKIAIOSFODNN7EXAMPLE and xAKIAIOSFODNN7EXAMPLE", "[aws-access-token] and x[aws-access-token]"},
	{"value spelled in a placeholder", "pwd=mail jane@example.com", "pwd=[password] [email]"},
	{"tiny value is not searched", "pwd=ab; ab", "pwd=[password]; ab"},
}

func TestRedactPropagation(t *testing.T) {
	t.Parallel()
	runRedactCases(t, propagationCases)
}

func TestRedactNothingFound(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"", "The app crashes when I open the shop on 2.4.1.", "日本語のテキスト"} {
		got, reds := airlock.Redact(in)
		if got != in || reds != nil {
			t.Fatalf("Redact(%q) = %q, %v; want the input and nil", in, got, reds)
		}
	}
}

func TestRedactCountOrder(t *testing.T) {
	t.Parallel()
	in := "password=x1 sk-0123456789abcdefABCDEF jane@example.com +49 30 1234567 a@b.io"
	_, got := airlock.Redact(in)
	want := []airlock.Redaction{
		{Kind: airlock.KindEmail, Count: 2},
		{Kind: airlock.KindPhone, Count: 1},
		{Kind: airlock.KindAPIKey, Count: 1},
		{Kind: airlock.KindPassword, Count: 1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Redact(%q) redactions=%v, want %v", in, got, want)
	}
}

// allRedactCases is every table above, for the fuzz seed corpus.
func allRedactCases() []redactCase {
	var all []redactCase
	for _, cs := range [][]redactCase{
		privateKeyCases, urlCredentialCases, jwtCases, awsCases, gitHubCases, slackCases,
		apiKeyCases, passwordCases, emailCases, ibanCases, cardCases, phoneCases,
		orderCases, propagationCases,
	} {
		all = append(all, cs...)
	}
	return all
}
