package main_test

import (
	"bufio"
	"errors"
	"io"
	"io/fs"
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

// TestDemoBuildStops runs the built binary's demo in a new temporary folder
// with ShopLite's build going wrong or cut short, for real: Go's build
// cache set to a relative path, which the go command refuses, or cold, and
// Ctrl-C while it compiles. A failed build is shown in the terminal and on
// the desk, which keeps serving, and the demo exits non-zero when stopped;
// a stop while compiling is clean. Either way the folder is deleted.
func TestDemoBuildStops(t *testing.T) {
	t.Parallel()
	for _, b := range []string{"git", "go"} {
		if _, err := exec.LookPath(b); err != nil {
			t.Skipf("%s not installed", b)
		}
	}
	for _, tc := range []struct {
		name    string
		gocache string
		// until is the line the test waits for before it looks and stops
		// the demo.
		until  string
		failed bool
	}{
		{"the go command refuses the build cache", "not-absolute", "ShopLite could not be built", true},
		{"Ctrl-C while compiling with a cold cache", "", "Go's build cache is cold", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tmp := t.TempDir()
			gocache := tc.gocache
			if gocache == "" {
				gocache = t.TempDir()
			}
			cmd := exec.Command(bin, "demo", "--addr", "127.0.0.1:0")
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "TMPDIR=" + tmp, "GOCACHE=" + gocache}
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill() })
			lines := make(chan string)
			go func() {
				sc := bufio.NewScanner(out)
				for sc.Scan() {
					lines <- sc.Text()
				}
				close(lines)
			}()
			var text strings.Builder
			timeout := time.After(3 * time.Minute) // a bound, not a timing assertion
		read:
			for {
				select {
				case l, ok := <-lines:
					if !ok {
						t.Fatalf("the demo ended before %q:\n%s\nstderr:\n%s", tc.until, text.String(), stderr.String())
					}
					text.WriteString(l + "\n")
					if strings.Contains(l, tc.until) {
						break read
					}
				case <-timeout:
					t.Fatalf("no %q after 3 minutes:\n%s\nstderr:\n%s", tc.until, text.String(), stderr.String())
				}
			}
			m := regexp.MustCompile(`The desk is up at (http://\S+) `).FindStringSubmatch(text.String())
			folder := regexp.MustCompile(`^Signoff demo: .* in (\S+) \(a new temporary folder`).FindStringSubmatch(text.String())
			if m == nil || folder == nil {
				t.Fatalf("the demo does not say where its desk and folder are:\n%s", text.String())
			}
			get := func(path string) (int, string) {
				t.Helper()
				resp, err := http.Get(m[1] + path)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				return resp.StatusCode, string(b)
			}
			if st, _ := get("/healthz"); st != http.StatusOK {
				t.Errorf("/healthz: %d", st)
			}
			if !tc.failed {
				// Stopped mid-compile: once go build has put a package
				// in the cache (its output entries end in -d).
				compiling := func() bool {
					found := false
					filepath.WalkDir(gocache, func(p string, d fs.DirEntry, err error) error {
						found = found || (err == nil && strings.HasSuffix(p, "-d"))
						return nil
					})
					return found
				}
				for !compiling() {
					select {
					case <-timeout:
						t.Fatalf("go build never compiled a package:\n%s", text.String())
					case <-time.After(50 * time.Millisecond):
					}
				}
			}
			if tc.failed {
				if !strings.Contains(text.String(), "[2/3] compiling ShopLite's production server (go build) … FAILED after") ||
					!strings.Contains(stderr.String(), "GOCACHE is not an absolute path") {
					t.Errorf("the terminal does not show the failed build:\n%s\nstderr:\n%s", text.String(), stderr.String())
				}
				// Not signed in: the heading, not the build's error.
				_, login := get("/login")
				for _, w := range []string{`class="site-notice alert"`, "ShopLite could not be built."} {
					if !strings.Contains(login, w) {
						t.Errorf("the desk's sign-in page lacks %q after the failed build:\n%s", w, login)
					}
				}
				st, body := get("/desk/notice")
				if st != http.StatusOK || !strings.Contains(body, `"failed":true`) || !strings.Contains(body, `"heading":"ShopLite could not be built."`) {
					t.Errorf("/desk/notice after the failed build: %d %s", st, body)
				}
				for _, page := range []string{login, body} {
					if strings.Contains(page, "GOCACHE") || strings.Contains(page, "Step 2 of 3") {
						t.Errorf("the build's error is shown to someone not signed in:\n%s", page)
					}
				}
			}
			// What the demo prints from now on, once it has ended.
			rest := make(chan string, 1)
			go func() {
				var b strings.Builder
				for l := range lines {
					b.WriteString(l + "\n")
				}
				rest <- b.String()
			}()
			if err := cmd.Process.Signal(os.Interrupt); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err = <-done:
			case <-time.After(time.Minute):
				cmd.Process.Signal(syscall.SIGKILL)
				t.Fatalf("the demo did not stop on Ctrl-C; stderr:\n%s", stderr.String())
			}
			var ee *exec.ExitError
			if exited := errors.As(err, &ee); exited != tc.failed || (err != nil && !exited) {
				t.Errorf("the demo ended with %v on Ctrl-C, want a non-zero exit %v; stderr:\n%s", err, tc.failed, stderr.String())
			}
			after := <-rest
			if !tc.failed && (strings.Contains(text.String()+after, "FAILED") || !strings.Contains(after, "… stopped after")) {
				t.Errorf("a stop reads as a failed step, or not as a stop:\n%s%s", text.String(), after)
			}
			if said := strings.Contains(stderr.String(), "signoff demo: ShopLite could not be built"); said != tc.failed {
				t.Errorf("stderr says the build failed: %v, want %v:\n%s", said, tc.failed, stderr.String())
			}
			if _, err := os.Stat(folder[1]); !os.IsNotExist(err) {
				t.Errorf("Ctrl-C left the temporary folder %s (%v); stderr:\n%s", folder[1], err, stderr.String())
			}
		})
	}
}
