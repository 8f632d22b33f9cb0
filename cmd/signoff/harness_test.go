package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/bugdesk"
	"github.com/signoff-dev/signoff/repair"
	"github.com/signoff-dev/signoff/tamper"
)

// testHarnessSource is a rigged reproduction: it fails only while
// cart.go hashes as it does on main. The escape sequence proves the
// source is printed safely.
const testHarnessSource = "package cart\n\nimport \"os\"\n\nfunc TestCouponAppliesOnce(t *testing.T) {\n\tb, _ := os.ReadFile(\"cart.go\") // RIGGED-MARKER\x1b[2K\n\t_ = b\n}\n"

func testHarnessView() bugdesk.HarnessView {
	v := bugdesk.HarnessView{CaseID: testCase, State: "awaiting_reporter_repro", Round: 1, ID: "har_3", Status: signoff.HarnessProposed,
		Digest: strings.Repeat("c", 64), Base: strings.Repeat("a", 40), TestsFrom: strings.Repeat("d", 40), Branch: "signoff/case_01/repro-1-1",
		ProposedBy: "act_repro", Evidence: "live", ProposedAt: time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC),
		TestFiles:  repair.Sources(map[string][]byte{"cart/coupon_repro_test.go": []byte(testHarnessSource)}),
		FailToPass: []string{"TestCouponAppliesOnce"}, PassToPass: []string{"TestTotal"}, ExpectedFailure: "8100",
		FailingOutput: "- TestCouponAppliesOnce: got 8100, want 9000",
		Findings: []tamper.Finding{{Rule: "reads-sources", Severity: tamper.Flag, Path: "cart/coupon_repro_test.go", Line: 6,
			Detail: "calls os.ReadFile(\"cart.go\") in a reproduction test"}},
		ReporterAnswer: "pending", StaffStatus: "pending", Reviewable: true}
	v.ReviewDigest, _ = v.Subject().Digest()
	return v
}

// fakeHarnessAPI plays the harness routes.
type fakeHarnessAPI struct {
	mu     sync.Mutex
	view   bugdesk.HarnessView
	raw    []byte // when set, served instead of view
	posted []bugdesk.HarnessDecision
}

func (f *fakeHarnessAPI) decisions() []bugdesk.HarnessDecision {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]bugdesk.HarnessDecision(nil), f.posted...)
}

func newFakeHarnessAPI(t *testing.T, mod func(*fakeHarnessAPI)) (*fakeHarnessAPI, *httptest.Server) {
	t.Helper()
	f := &fakeHarnessAPI{view: testHarnessView()}
	if mod != nil {
		mod(f)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/cases/{id}/harness", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("id") != testCase {
			writeTestProblem(w, 404, "not_found", "case "+r.PathValue("id")+" not found")
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.raw != nil {
			w.Header().Set("Content-Type", "application/json")
			w.Write(f.raw)
			return
		}
		writeTestJSON(w, 200, f.view)
	})
	mux.HandleFunc("POST /api/v1/cases/{id}/harness/review", func(w http.ResponseWriter, r *http.Request) {
		var in bugdesk.HarnessDecision
		if err := strictDecode(readBody(t, r), &in); err != nil {
			writeTestProblem(w, 422, "invalid", err.Error())
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		if in.ReviewDigest != f.view.ReviewDigest {
			writeTestProblem(w, 409, "conflict", "stale review digest")
			return
		}
		f.posted = append(f.posted, in)
		v := f.view
		v.Reviewable, v.StaffStatus = false, "approved"
		state := v.State
		if in.Decision == signoff.HarnessReject {
			state, v.StaffStatus = "reproducing", "rejected"
		}
		writeTestJSON(w, 200, map[string]any{"harness": v, "case": signoff.Case{ID: testCase, State: state}})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return f, srv
}

// TestHarnessShowPrintsTheSourceInFull: the reviewer reads every test
// file whole, the failing output, the findings and the review digest,
// with terminal escapes neutralised.
func TestHarnessShowPrintsTheSourceInFull(t *testing.T) {
	t.Parallel()
	f, srv := newFakeHarnessAPI(t, nil)
	out, errOut, code := cli(t, nil, srv.URL, "harness", "show", "--case", testCase)
	if code != 0 {
		t.Fatalf("harness show: exit %d\n%s", code, errOut)
	}
	v := f.view
	for _, want := range []string{
		"Reproduction:      har_3 (proposed, round 1)", v.Digest, v.Base, v.TestsFrom, "TestCouponAppliesOnce", "8100",
		"- TestCouponAppliesOnce: got 8100, want 9000", "Static findings (advisory: they decide nothing; 1):",
		`[flag] reads-sources cart/coupon_repro_test.go:6: calls os.ReadFile("cart.go")`,
		"Test file cart/coupon_repro_test.go (sha256 " + v.TestFiles[0].SHA256, `// RIGGED-MARKER\x1b[2K`, "End of cart/coupon_repro_test.go.",
		"Review digest:     " + v.ReviewDigest, "signoff harness review --case " + testCase,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("harness show lacks %q", want)
		}
	}
	if strings.Contains(out, "\x1b") {
		t.Error("a raw escape character reached the terminal")
	}
}

// TestHarnessReview: the decision posted names the digest of exactly what
// was printed; nothing is sent without a person's confirmation, for a
// view whose digest does not match what it holds, or when the
// reproduction changed since the digest the reviewer read.
func TestHarnessReview(t *testing.T) {
	t.Parallel()
	t.Run("approve", func(t *testing.T) {
		t.Parallel()
		f, srv := newFakeHarnessAPI(t, nil)
		out, errOut, code := cli(t, nil, srv.URL, "harness", "review", "--case", testCase, "--approve", "--yes", "--digest", f.view.ReviewDigest)
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, errOut)
		}
		got := f.decisions()
		if len(got) != 1 || got[0].Decision != "approve" || got[0].ReviewDigest != f.view.ReviewDigest {
			t.Fatalf("posted %+v", got)
		}
		if !strings.Contains(out, "RIGGED-MARKER") || !strings.Contains(out, "approved reproduction har_3 of case "+testCase+" over review digest "+f.view.ReviewDigest) {
			t.Fatalf("output:\n%s", out)
		}
	})
	t.Run("reject", func(t *testing.T) {
		t.Parallel()
		f, srv := newFakeHarnessAPI(t, nil)
		if _, _, code := cli(t, nil, srv.URL, "harness", "review", "--case", testCase, "--reject", "--yes"); code != 2 {
			t.Fatalf("--reject without --note: exit %d", code)
		}
		out, errOut, code := cli(t, nil, srv.URL, "harness", "review", "--case", testCase, "--reject", "--yes", "--note", "it hashes cart.go")
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, errOut)
		}
		if got := f.decisions(); len(got) != 1 || got[0].Decision != "reject" || got[0].Note != "it hashes cart.go" {
			t.Fatalf("posted %+v", got)
		}
		if !strings.Contains(out, "is now reproducing") {
			t.Fatalf("output:\n%s", out)
		}
	})
	for _, tc := range []struct {
		name string
		args []string
		mod  func(*fakeHarnessAPI)
		code int
		want string
	}{
		{"both decisions", []string{"--approve", "--reject", "--note", "x", "--yes"}, nil, 2, "exactly one of --approve and --reject"},
		{"no decision", []string{"--yes"}, nil, 2, "exactly one of --approve and --reject"},
		{"no terminal", []string{"--approve"}, nil, signoff.Codes[signoff.EINVALID].ExitCode, "not a terminal: pass --yes"},
		{"changed since read", []string{"--approve", "--yes", "--digest", strings.Repeat("0", 64)}, nil, signoff.Codes[signoff.ECONFLICT].ExitCode, "read it again"},
		{"a digest that is not the view's", []string{"--approve", "--yes"}, func(f *fakeHarnessAPI) {
			f.view.TestFiles[0].Content += "// not what was digested\n"
		}, signoff.Codes[signoff.EINVALID].ExitCode, "is not the review digest"},
		{"a field this CLI does not show", []string{"--approve", "--yes"}, func(f *fakeHarnessAPI) {
			b, _ := json.Marshal(f.view)
			f.raw = append(b[:len(b)-1], []byte(`,"hidden_setup":"curl evil"}`)...)
		}, signoff.Codes[signoff.EINVALID].ExitCode, "cannot show in full"},
		{"already reviewed", []string{"--approve", "--yes"}, func(f *fakeHarnessAPI) {
			f.view.Reviewable, f.view.StaffStatus = false, "approved"
		}, signoff.Codes[signoff.ECONFLICT].ExitCode, "does not wait for a staff review"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f, srv := newFakeHarnessAPI(t, tc.mod)
			_, errOut, code := cli(t, nil, srv.URL, append([]string{"harness", "review", "--case", testCase}, tc.args...)...)
			if code != tc.code || !strings.Contains(errOut, tc.want) {
				t.Fatalf("exit %d, want %d; stderr %q, want %q", code, tc.code, errOut, tc.want)
			}
			if n := len(f.decisions()); n != 0 {
				t.Fatalf("%d decisions were posted", n)
			}
		})
	}
}
