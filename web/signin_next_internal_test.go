package web

import (
	"strings"
	"testing"
)

// TestSafeNextRefusesEveryWayOff: next is the classic open redirect. Only
// a canonical local path (with a query) passes; every way to leave the
// site or to smuggle a header, a hidden character or a loop is refused.
func TestSafeNextRefusesEveryWayOff(t *testing.T) {
	t.Parallel()
	for _, ok := range []struct{ in, want string }{
		{"/", "/"},
		{"/cases/bug_01m95abc", "/cases/bug_01m95abc"},
		{"/cases/bug_1/approval", "/cases/bug_1/approval"},
		{"/desk?kind=bug&state=open", "/desk?kind=bug&state=open"},
		{"/desk?q=two+words", "/desk?q=two+words"},
		{"/desk?q=two%20words", "/desk?q=two%20words"},
		{"/charts?days=30", "/charts?days=30"},
		{"/people", "/people"},
		{"/desk?", "/desk"},
	} {
		if got := safeNext(ok.in); got != ok.want {
			t.Errorf("safeNext(%q) = %q, want %q", ok.in, got, ok.want)
		}
	}
	for _, bad := range []string{
		"",
		"cases/bug_1",                     // relative
		"desk",                            // relative
		"//evil.example",                  // protocol-relative host
		"//evil.example/cases/x",          // protocol-relative host with a path
		"///evil.example",                 // three slashes
		"/\\evil.example",                 // browsers read /\ as //
		"\\\\evil.example",                // backslashes alone
		"/cases/\\evil",                   // a backslash anywhere
		"https://evil.example/",           // absolute URL
		"http:/evil.example",              // scheme without slashes
		"HTTPS://evil.example",            // upper-case scheme
		"javascript:alert(1)",             // script URL
		"data:text/html,<script>",         // data URL
		"/%2f%2fevil.example",             // encoded //
		"/%2F%2Fevil.example",             // encoded //, upper case
		"/%5cevil.example",                // encoded backslash
		"/%5Cevil.example",                // encoded backslash, upper case
		"/%252f%252fevil.example",         // double encoding
		"/cases/%2e%2e/%2e%2e/evil",       // encoded dot segments
		"/cases/../../evil",               // dot segments
		"/./desk",                         // dot segment
		"/desk/",                          // not canonical
		"/cases//x",                       // empty segment
		"/cases/x#top",                    // fragment
		"/cases/x%0d%0aSet-Cookie:%20a=b", // encoded CRLF (header injection)
		"/cases/x\r\nLocation: https://evil.example", // raw CRLF
		"/cases/x\t",                       // tab
		"/\t/evil.example",                 // tab between slashes
		"/%09/evil.example",                // encoded tab
		"/cases/x y",                       // raw space
		"/\x00",                            // NUL
		"/cases/x%00",                      // encoded NUL
		"/%E2%80%AEelpmaxe.live",           // encoded bidi override
		"/café",                            // raw non-ASCII
		"/ｅvil",                            // full-width letter
		"/desk?q=%0d%0a",                   // control in the query
		"/desk?q=%E2%80%AE",                // bidi in the query
		"/desk?q=%zz",                      // broken escape
		"/desk?a=1;b=2",                    // a query Go will not parse
		"/login",                           // a loop
		"/login/sol_abc",                   // a loop
		"/logout",                          // a loop
		"/t/sot_secret",                    // a capability, public
		"/p/prj_1/report",                  // public
		"/" + strings.Repeat("a", maxNext), // too long
		"/desk?q=" + strings.Repeat("a", maxNext), // too long with a query
	} {
		if got := safeNext(bad); got != "" {
			t.Errorf("safeNext(%q) = %q, want it refused", bad, got)
		}
	}
}

// FuzzSafeNext: whatever passes is a local path that the browser resolves
// on this site, in the form it was given.
func FuzzSafeNext(f *testing.F) {
	for _, s := range []string{"/cases/x", "//evil", "/\\evil", "/%2f%2f", "/desk?q=a", "https://x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := safeNext(s)
		if got == "" {
			return
		}
		if got[0] != '/' || strings.HasPrefix(got, "//") || strings.ContainsAny(got, "\\#\r\n\t ") || len(got) > maxNext {
			t.Fatalf("safeNext(%q) = %q", s, got)
		}
		if safeNext(got) != got {
			t.Fatalf("safeNext is not stable on %q", got)
		}
	})
}
