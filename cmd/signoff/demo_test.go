package main_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDemoTriagesAReport starts `signoff demo`, files a public report to
// its sample game project, and sees the triage crew take it: the case ends
// triaged (or parked at the human gate), through the real job queue.
func TestDemoTriagesAReport(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "demo", "--addr", "127.0.0.1:0", "--dir", t.TempDir())
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }()
	var banner strings.Builder
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		banner.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), "Press Ctrl-C") {
			break
		}
	}
	go func() {
		for sc.Scan() {
		}
	}()
	text := banner.String()
	url := regexp.MustCompile(`server\s+(http://\S+)`).FindStringSubmatch(text)
	token := regexp.MustCompile(`token: (so_\S+)`).FindStringSubmatch(text)
	projects := regexp.MustCompile(`/api/v1/projects/(prj_[0-9a-z]+)/reports`).FindAllStringSubmatch(text, -1)
	if url == nil || token == nil || len(projects) < 2 {
		t.Fatalf("demo banner:\n%s", text)
	}
	body := `{"text":"The game crashes every time I open the shop from level select","device":"Pixel 8","os":"Android 15","app_version":"2.4.1"}`
	resp, err := http.Post(url[1]+"/api/v1/projects/"+projects[1][1]+"/reports", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		CaseID string `json:"case_id"`
	}
	json.NewDecoder(resp.Body).Decode(&rep)
	resp.Body.Close()
	if resp.StatusCode != 201 || rep.CaseID == "" {
		t.Fatalf("report: %d %+v", resp.StatusCode, rep)
	}
	for {
		req, _ := http.NewRequestWithContext(ctx, "GET", url[1]+"/api/v1/cases/"+rep.CaseID+"/triage", nil)
		req.Header.Set("Authorization", "Bearer "+token[1])
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var tr struct {
			Run struct{ Status, Outcome string } `json:"run"`
		}
		json.NewDecoder(resp.Body).Decode(&tr)
		resp.Body.Close()
		if tr.Run.Status == "parked" || tr.Run.Status == "done" {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("report never triaged (last %d %+v)", resp.StatusCode, tr.Run)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// demoRun is one `signoff demo` subprocess up to its banner.
type demoRun struct {
	cmd    *exec.Cmd
	banner string
	stderr *strings.Builder
	done   chan error
}

// startDemo starts the built binary's demo with args and reads its
// terminal up to "Press Ctrl-C"; tmp is its TMPDIR.
func startDemo(t *testing.T, tmp string, args ...string) *demoRun {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"demo", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "TMPDIR=" + tmp, "GOCACHE=" + goCache(t)}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	r := &demoRun{cmd: cmd, stderr: &strings.Builder{}, done: make(chan error, 1)}
	cmd.Stderr = r.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	var banner strings.Builder
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	timeout := time.After(3 * time.Minute)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("the demo ended before its banner:\n%s\nstderr:\n%s", banner.String(), r.stderr.String())
			}
			banner.WriteString(l + "\n")
			if strings.Contains(l, "Press Ctrl-C") {
				r.banner = banner.String()
				go func() {
					for range lines {
					}
					r.done <- cmd.Wait()
				}()
				return r
			}
		case <-timeout:
			t.Fatalf("no banner after 3 minutes:\n%s\nstderr:\n%s", banner.String(), r.stderr.String())
		}
	}
}

// stop sends sig and waits for the demo to end.
func (r *demoRun) stop(t *testing.T, sig os.Signal) {
	t.Helper()
	if err := r.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-r.done:
		if err != nil {
			t.Errorf("the demo ended with %v after %v; stderr:\n%s", err, sig, r.stderr.String())
		}
	case <-time.After(time.Minute):
		t.Fatalf("the demo did not stop on %v", sig)
	}
}

// goCache is the Go build cache the tests share, so each demo's ShopLite
// build is warm.
func goCache(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Skipf("go env GOCACHE: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// TestDemoTerminal runs the built binary's demo as a person would, three
// times. With --dir D: the important lines (desk, sign-in link, tokens,
// folder) come last, after the walkthrough; HTTP requests are not logged
// in the terminal but in D/demo.log; Ctrl-C stops it and leaves D. Again
// with the same --dir: it says it replaced the earlier demo, and works.
// Without --dir: SIGTERM removes the temporary folder it made, private
// keys and all.
func TestDemoTerminal(t *testing.T) {
	t.Parallel()
	for _, b := range []string{"git", "go"} {
		if _, err := exec.LookPath(b); err != nil {
			t.Skipf("%s not installed", b)
		}
	}
	tmp, dir := t.TempDir(), t.TempDir()

	first := startDemo(t, tmp, "--dir", dir)
	text := first.banner
	desk, walk := strings.Index(text, "=== Signoff demo is ready"), strings.Index(text, "Walk the change desk")
	if desk < 0 || walk < 0 || desk < walk || !strings.Contains(text[desk:], "token: so_") || !strings.Contains(text[desk:], "/login/") ||
		!strings.Contains(text[desk:], "folder      "+dir+": kept") {
		t.Fatalf("the important lines are not last:\n%s", text)
	}
	base := regexp.MustCompile(`server\s+(http://\S+)`).FindStringSubmatch(text)
	token := regexp.MustCompile(`operator\s+token: (so_\S+)`).FindStringSubmatch(text)
	if base == nil || token == nil {
		t.Fatalf("banner:\n%s", text)
	}
	me := func(base, token string) int {
		t.Helper()
		req, _ := http.NewRequest("GET", base+"/api/v1/me", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for range 3 {
		if st := me(base[1], token[1]); st != http.StatusOK {
			t.Fatalf("GET /api/v1/me: %d", st)
		}
	}
	first.stop(t, os.Interrupt)
	if strings.Contains(first.stderr.String(), "http request") {
		t.Errorf("HTTP requests are logged in the terminal:\n%s", first.stderr.String())
	}
	if log, err := os.ReadFile(filepath.Join(dir, "demo.log")); err != nil || !strings.Contains(string(log), "route=\"GET /api/v1/me\"") {
		t.Errorf("demo.log lacks the requests (%v):\n%s", err, log)
	}
	if _, err := os.Stat(filepath.Join(dir, "signoff.db")); err != nil {
		t.Fatalf("Ctrl-C removed the --dir the user gave: %v", err)
	}

	second := startDemo(t, tmp, "--dir", dir)
	if !strings.Contains(second.banner, dir+" held an earlier demo: its database, keys and ShopLite were replaced") {
		t.Errorf("the second run does not say it replaced the first:\n%s", second.banner)
	}
	base = regexp.MustCompile(`server\s+(http://\S+)`).FindStringSubmatch(second.banner)
	token = regexp.MustCompile(`operator\s+token: (so_\S+)`).FindStringSubmatch(second.banner)
	if base == nil || token == nil || me(base[1], token[1]) != http.StatusOK {
		t.Fatalf("the second demo does not serve its operator:\n%s", second.banner)
	}
	second.stop(t, os.Interrupt)

	third := startDemo(t, tmp)
	m := regexp.MustCompile(`folder +(\S+): deleted on Ctrl-C`).FindStringSubmatch(third.banner)
	if m == nil || !strings.HasPrefix(m[1], tmp) {
		t.Fatalf("the temporary demo does not name its folder under %s:\n%s", tmp, third.banner)
	}
	if _, err := os.Stat(filepath.Join(m[1], "operator-approval.key")); err != nil {
		t.Fatalf("the temporary folder has no approval key: %v", err)
	}
	third.stop(t, syscall.SIGTERM)
	if _, err := os.Stat(m[1]); !os.IsNotExist(err) {
		t.Errorf("SIGTERM left the temporary folder %s (%v); stderr:\n%s", m[1], err, third.stderr.String())
	}
}
