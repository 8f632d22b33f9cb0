package airlock

// Fourth attacker round, on bareKey/sepSkip (a key written as another key's
// value judges its own value) and the refusal of pwd paths. It found a
// 40-byte cap on the inner key too short for environment variable names
// and a 256-byte skip of long refused paths that hid pairs after them
// (the skip was replaced by refusing a path from its first bytes). Forms
// left as they were before are listed in docs/airlock.md Known limits:
// a quoted bare key ("api_key: 'password:' X"), "password=pass: X",
// "Authorization: password: X", and a key's own refusal of a label
// ("Password: Token: see below" loses "see").

import (
	"strings"
	"testing"
	"time"
)

const abSecret = "Xk9mQ2vL7pqR8sT4wZ"

func TestAttackBareLeak(t *testing.T) {
	long := "/srv/" + strings.Repeat("deep/", 60)  // 305 bytes
	short := "/srv/" + strings.Repeat("deep/", 30) // 155 bytes
	rows := []struct{ in, secret, note string }{
		// chains, mixed separators
		{"api_key: password: " + abSecret, abSecret, "base"},
		{"api_key= password:= " + abSecret, abSecret, ":= inner"},
		{"api_key=> password== " + abSecret, abSecret, "== inner"},
		{"api_key: password=> " + abSecret, abSecret, "=> inner"},
		{"secret: token: password: api_key: pwd: " + abSecret, abSecret, "chain 5"},
		{strings.Repeat("secret: ", 9) + abSecret, abSecret, "chain 9"},
		{"password: secret: hunter2", "hunter2", "inner too short, outer judges"},
		{"password: token: hunter2", "hunter2", "inner too short"},
		{"api_key: token: " + abSecret[:12], abSecret[:12], "token min 16, api_key min 8"},
		{"password: db_password_confirmation: hunter2", "hunter2", "suffix inner"},
		// quotes
		{`api_key: "password": "` + abSecret + `"`, abSecret, "quoted inner key"},
		{`api_key: password: "` + abSecret + ` x"`, abSecret, "quoted inner value"},
		// references between
		{"secret:&nbsp;password:&nbsp;" + abSecret, abSecret, "&nbsp; both"},
		{"secret:%20password:%20" + abSecret, abSecret, "%20 both"},
		{"secret: password:&quot;" + abSecret + "&quot;", abSecret, "&quot;"},
		{"api_key: password:&nbsp;&nbsp;&nbsp;&nbsp;&nbsp;" + abSecret, abSecret, "5 nbsp"},
		// CJK / Cyrillic
		{"api_key: 密码: " + abSecret, abSecret, "cjk"},
		{"api_key: 密码:" + abSecret, abSecret, "cjk no space"},
		{"api_key: пароль:= " + abSecret, abSecret, "cyrillic :="},
		{"token: パスワード=> " + abSecret, abSecret, "katakana =>"},
		{"api_key: mot de passe: " + abSecret, abSecret, "key with spaces"},
		// Authorization
		{"api_key: authorization: Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA==", "auth inner"},
		{"password: proxy-authorization: Bearer " + abSecret, abSecret, "proxy auth inner"},
		{"secret: Authorization: Digest username=\"u\", response=\"" + abSecret + "\"", abSecret, "digest inner"},
		// inner keys longer than the first cap (40 bytes)
		{"password: MY_APP_PRODUCTION_DATABASE_MASTER_PASSWORD: " + abSecret, abSecret, "inner key 42 bytes"},
		{"secret: SPRING_DATASOURCE_REPLICA_PRIMARY_DB_PASSWORD: " + abSecret, abSecret, "inner key 43 bytes"},
		// equals-only 'pass' as the inner key
		{"api_key: pass= " + abSecret, abSecret, "pass= inner"},
		// pairs after a long refused pwd path
		{"pwd=" + short + "run|password=hunter2|user=bob", "hunter2", "short path, pipe-separated log"},
		{"pwd=" + long + "run|password=hunter2|user=bob", "hunter2", "long path, pipe-separated log"},
		{"pwd: " + long + "x.cgi?password=hunter2", "hunter2", "long path with query"},
		{"pwd=" + long + "x?user=bob&password=hunter2", "hunter2", "long path, & param"},
		{"PWD=" + long + "x:API_KEY=" + abSecret, abSecret, "long path, ':' joined"},
		{"pwd=~" + long + "|token=" + abSecret + abSecret, abSecret, "long ~ path"},
	}
	for _, r := range rows {
		out, _ := Redact(r.in)
		if strings.Contains(out, r.secret) {
			t.Errorf("leak (%s):\n in  %q\n out %q", r.note, r.in, out)
		}
	}
}

// End of text: nothing must panic.
func TestAttackBareEnd(t *testing.T) {
	for _, in := range []string{
		"password: secret:", "password: secret: ", "password: secret:=", "api_key: password:=",
		"api_key: password=>", "api_key: password==", "x: password:&nbsp;", "x: password:%2", "pwd:/",
		"password: secret: a", "password: secret: a:", "secret: pass=", "token: :", "password: ==",
		"password:=>", "a:=>", "password: \"secret:", "password: 密码:", "password: пароль:=",
		"api_key: authorization:", "api_key: authorization: Basic", "api_key: authorization: Basic ",
		"password: &nbsp;&nbsp;&nbsp;&nbsp;&nbsp;", "pwd:" + strings.Repeat("/", 300),
	} {
		func() {
			defer func() {
				if e := recover(); e != nil {
					t.Errorf("panic on %q: %v", in, e)
				}
			}()
			Redact(in)
		}()
	}
}

func TestAttackBareOver(t *testing.T) {
	rows := []struct{ in, want string }{
		{"password: required: true", ""},
		{"Password: Token: see below", ""},
		{"auth failed: password: token: expired", ""},
		{"secret: api_key: missing", "secret: api_key: missing"},
		{"password: pwd: ~/x", "password: pwd: ~/x"},
		{"Secret: Password: Label:", ""},
		{"fields: password: secret: id", ""},
		{"api_key: authorization: Bearer abc123\nSend a Bearer header", ""},
		{"cwd: /home/u pwd: /home/u/src password: hunter2", "cwd: /home/u pwd: /home/u/src password: [password]"},
		{"password: " + strings.Repeat("x", 20) + "_token: ok", ""},
		{"token: password: 1\nretry 1 of 3", ""},
	}
	for _, r := range rows {
		out, _ := Redact(r.in)
		t.Logf("in  %q\n out %q", r.in, out)
		if r.want != "" && out != r.want {
			t.Errorf("over-redaction:\n in   %q\n out  %q\n want %q", r.in, out, r.want)
		}
	}
}

func TestAttackBareTime(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	pats := map[string]string{
		"pwd:/":             "pwd:/",
		"pwd256":            "pwd:/" + strings.Repeat("pwd:/", 50) + " ",
		"pwd256eq":          "pwd=." + strings.Repeat("pwd=.", 50) + " ",
		"chain":             "secret: password: ",
		"shortinner":        "password: token: ab ",
		"auth inner digest": "api_key: authorization: Digest ",
		"auth inner short":  "api_key: authorization: Basic a ",
		"nbsp":              "x: password:&nbsp;&nbsp;&nbsp;&nbsp;",
		"quote open":        "api_key: password: \"",
		"bare eq chain":     "password=password=",
		"pct":               "secret:%20password:%20",
	}
	for name, p := range pats {
		run := func(n int) time.Duration {
			s := strings.Repeat(p, n/len(p)+1)[:n]
			best := time.Hour
			for i := 0; i < 3; i++ {
				st := time.Now()
				Redact(s)
				best = min(best, time.Since(st))
			}
			return best
		}
		a, b := run(64<<10), run(512<<10)
		t.Logf("%-18s 64KB %v  512KB %v  ratio %.1f", name, a, b, float64(b)/float64(a))
		if b > 2*time.Second && float64(b)/float64(a) > 20 {
			t.Errorf("%s looks quadratic: %v vs %v", name, a, b)
		}
	}
}

func TestAttackBareExtra(t *testing.T) {
	p := func(n int) string { return "/" + strings.Repeat("a", n-1) }
	rows := []struct{ in, secret, note string }{
		{"pwd=" + p(256) + "|password=hunter2", "hunter2", "value 256+ bytes before '|'"},
		{"pwd=" + p(240) + "|password=hunter2", "hunter2", "value < 256"},
		{`pwd: C:\Users\u\` + strings.Repeat(`node_modules\`, 22) + `x?password=hunter2`, "hunter2", "windows long path"},
		{"password: MY_APP_PRODUCTION_DATABASE_MASTER_PASSWORD: " + abSecret + "\nexport MY_APP_PRODUCTION_DATABASE_MASTER_PASSWORD", abSecret, "long key propagated?"},
	}
	for _, r := range rows {
		out, _ := Redact(r.in)
		t.Logf("%s: out %q", r.note, out[max(0, len(out)-120):])
		if strings.Contains(out, r.secret) {
			t.Errorf("leak (%s)", r.note)
		}
	}
}
