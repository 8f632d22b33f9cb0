package sandbox_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/sandbox"
)

// toolDir holds the test tool (testdata/tool), built once; runs see it
// read-only at /tool.
var toolDir string

const toolPath = "/tool/tool"

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "sandbox-test-tool-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	build := exec.Command(goBin, "build", "-o", filepath.Join(dir, "tool"), "./testdata/tool")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build test tool: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	// The directory must be readable by the sandbox user when the tests
	// run as an ordinary user (inside, 65534 is then that user anyway).
	os.Chmod(dir, 0o755)
	toolDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// backends are the backends every isolation test runs on: all that work
// here, and namespaces always on Linux (a failure to start it is a test
// failure, not a skip).
func backends(t *testing.T) []string {
	t.Helper()
	bs := sandbox.Available()
	if runtime.GOOS == "linux" && !slices.Contains(bs, sandbox.BackendNamespaces) {
		bs = append(bs, sandbox.BackendNamespaces)
	}
	if len(bs) == 0 {
		t.Skip("no sandbox backend works here")
	}
	return bs
}

func newRunner(t *testing.T, backend string) sandbox.Runner {
	t.Helper()
	var opts []sandbox.Option
	if backend == sandbox.BackendDocker || backend == sandbox.BackendPodman {
		image := os.Getenv("SIGNOFF_SANDBOX_IMAGE")
		if image == "" {
			image = "debian:bookworm-slim"
		}
		if err := exec.Command(backend, "image", "inspect", image).Run(); err != nil {
			t.Skipf("%s: image %s not present locally (set SIGNOFF_SANDBOX_IMAGE)", backend, image)
		}
		opts = append(opts, sandbox.WithImage(image))
	}
	r, err := sandbox.New(backend, opts...)
	if err != nil {
		t.Fatalf("New(%s): %v", backend, err)
	}
	if r.Name() != backend {
		t.Fatalf("Name()=%q, want %q", r.Name(), backend)
	}
	return r
}

// toolSpec runs the test tool with args.
func toolSpec(args ...string) sandbox.Spec {
	return sandbox.Spec{
		Command:  append([]string{toolPath}, args...),
		Env:      map[string]string{},
		ReadOnly: []sandbox.Mount{{Host: toolDir, Target: "/tool"}},
		Limits:   sandbox.Limits{WallTime: time.Minute},
	}
}

func run(t *testing.T, r sandbox.Runner, s sandbox.Spec) sandbox.Result {
	t.Helper()
	res, err := r.Run(context.Background(), s)
	if err != nil {
		t.Fatalf("Run(%q): %v", s.Command, err)
	}
	return res
}

// tool runs the test tool in r and fails the test if the run could not
// execute.
func tool(t *testing.T, r sandbox.Runner, s sandbox.Spec) sandbox.Result {
	t.Helper()
	return run(t, r, s)
}

func isolated(backend string) bool { return backend != sandbox.BackendNone }

func TestNetwork(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var accepted atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	addr := ln.Addr().String()
	// Parallel subtests run after this function returns: check and close
	// once they are done.
	t.Cleanup(func() {
		defer ln.Close()
		// Give a connection that did get through time to be accepted.
		time.Sleep(50 * time.Millisecond)
		if n := accepted.Load(); n != 1 && !t.Failed() {
			t.Errorf("host listener accepted %d connections, want 1 (the none control only)", n)
		}
	})

	for _, b := range append(backends(t), sandbox.BackendNone) {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			r := newRunner(t, b)
			res := tool(t, r, toolSpec("connect", addr))
			if !isolated(b) {
				// The control: the same tool does reach the host's
				// loopback when nothing isolates it.
				if res.ExitCode != 0 {
					t.Fatalf("none: connect exit %d, want 0: %s", res.ExitCode, res.Stdout)
				}
				return
			}
			if res.ExitCode != 3 {
				t.Fatalf("connect to the host's %s: exit %d (%s), want 3 (connection fails)", addr, res.ExitCode, res.Stdout)
			}
			res = tool(t, r, toolSpec("selfnet"))
			if res.ExitCode != 0 {
				t.Fatalf("the sandbox's own loopback: exit %d: %s", res.ExitCode, res.Stdout)
			}
		})
	}
}

func TestFilesystem(t *testing.T) {
	t.Parallel()
	for _, b := range backends(t) {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			r := newRunner(t, b)
			src, out := t.TempDir(), t.TempDir()
			if err := os.WriteFile(filepath.Join(src, "existing.txt"), []byte("original\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			tmpName := fmt.Sprintf("signoff-sandbox-test-%d-%s", os.Getpid(), b)
			want := map[string]string{
				"/src/new.txt":      "fail",
				"/src/existing.txt": "fail",
				"/newfile":          "fail",
				"/usr/newfile":      "fail",
				"/etc/newfile":      "fail",
				"/tool/newfile":     "fail",
				"/tmp/" + tmpName:   "ok",
				"/scratch/x":        "ok",
				"/out/x":            "ok",
			}
			var paths []string
			for p := range want {
				paths = append(paths, p)
			}
			slices.Sort(paths)
			s := toolSpec(append([]string{"writes"}, paths...)...)
			s.Src = src
			s.Writable = []sandbox.Mount{{Host: out, Target: "/out"}}
			s.Scratch = []string{"/scratch"}
			res := tool(t, r, s)
			if res.ExitCode != 0 {
				t.Fatalf("writes: exit %d: %s %s", res.ExitCode, res.Stdout, res.Stderr)
			}
			for _, line := range strings.Split(strings.TrimSpace(string(res.Stdout)), "\n") {
				f := strings.Fields(line)
				if len(f) < 2 {
					t.Fatalf("bad line %q", line)
				}
				if want[f[0]] != f[1] {
					t.Errorf("write %s: %s, want %s", f[0], line, want[f[0]])
				}
			}
			if b, err := os.ReadFile(filepath.Join(src, "existing.txt")); err != nil || string(b) != "original\n" {
				t.Errorf("host snapshot file changed: %q %v", b, err)
			}
			if _, err := os.Stat(filepath.Join(src, "new.txt")); err == nil {
				t.Errorf("a file appeared in the host snapshot")
			}
			if b, err := os.ReadFile(filepath.Join(out, "x")); err != nil || string(b) != "written inside\n" {
				t.Errorf("writable mount: host sees %q, %v", b, err)
			}
			if _, err := os.Stat(filepath.Join(os.TempDir(), tmpName)); err == nil {
				os.Remove(filepath.Join(os.TempDir(), tmpName))
				t.Errorf("a write to the sandbox's /tmp reached the host's")
			}

			// What the sandbox shows of the host: no secrets, no homes,
			// not the host path behind /src.
			res = tool(t, r, toolSpec("exists", "/etc/shadow", "/root", "/home", "/work", src, "/etc/passwd", "/usr/bin", "/proc/self", "/dev/null"))
			wantSeen := map[string]string{"/etc/shadow": "no", "/root": "no", "/home": "no", "/work": "no", src: "no", "/etc/passwd": "yes", "/usr/bin": "yes", "/proc/self": "yes", "/dev/null": "yes"}
			for _, line := range strings.Split(strings.TrimSpace(string(res.Stdout)), "\n") {
				f := strings.Fields(line)
				if b != sandbox.BackendDocker && b != sandbox.BackendPodman && wantSeen[f[0]] != f[1] {
					t.Errorf("exists %s: %s, want %s", f[0], f[1], wantSeen[f[0]])
				}
			}
		})
	}
}

func TestEnvironmentAndUser(t *testing.T) {
	t.Parallel()
	for _, b := range append(backends(t), sandbox.BackendNone) {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			r := newRunner(t, b)
			s := toolSpec("env")
			s.Env = map[string]string{"FOO": "bar", "EMPTY": "", "SPACED": "a b=c"}
			res := tool(t, r, s)
			got := string(res.Stdout)
			want := "EMPTY=\nFOO=bar\nSPACED=a b=c"
			if b == sandbox.BackendDocker || b == sandbox.BackendPodman {
				// Engines add the image's ENV and HOSTNAME.
				for _, kv := range strings.Split(want, "\n") {
					if !strings.Contains(got, kv) {
						t.Errorf("env %q lacks %q", got, kv)
					}
				}
			} else if got != want {
				t.Errorf("environment inside:\n%s\nwant exactly:\n%s", got, want)
			}
			for _, leak := range []string{"HOME=", "USER=", "GOPATH=", "PWD="} {
				if strings.Contains(got, leak) && b != sandbox.BackendDocker && b != sandbox.BackendPodman {
					t.Errorf("host variable %s leaked", leak)
				}
			}
			if !isolated(b) {
				if res.Isolated {
					t.Errorf("none: Isolated=true")
				}
				return
			}
			if !res.Isolated {
				t.Errorf("Isolated=false")
			}
			res = tool(t, r, toolSpec("id"))
			var uid, gid, pid int
			if _, err := fmt.Sscan(string(res.Stdout), &uid, &gid, &pid); err != nil {
				t.Fatalf("id: %q: %v", res.Stdout, err)
			}
			if uid == 0 || gid == 0 {
				t.Errorf("uid/gid inside = %d/%d, want non-root", uid, gid)
			}
			if uid != 65534 || gid != 65534 {
				t.Errorf("uid/gid inside = %d/%d, want 65534/65534", uid, gid)
			}
		})
	}
}

// TestDescriptors: a descriptor this process holds without close-on-exec
// (as one inherited from its parent would be) does not reach the command.
func TestDescriptors(t *testing.T) {
	t.Parallel()
	fd, err := syscall.Open(os.DevNull, syscall.O_RDONLY, 0) // no O_CLOEXEC
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	for _, b := range append(backends(t), sandbox.BackendNone) {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			res := tool(t, newRunner(t, b), toolSpec("fds"))
			if got := strings.TrimSpace(string(res.Stdout)); got != "" {
				t.Errorf("descriptors open in the command: %s (the test holds %d)", got, fd)
			}
		})
	}
}

func TestLimits(t *testing.T) {
	t.Parallel()
	for _, b := range append(backends(t), sandbox.BackendNone) {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			r := newRunner(t, b)

			t.Run("memory", func(t *testing.T) {
				t.Parallel()
				s := toolSpec("alloc")
				s.Limits.MemoryBytes = 256 << 20
				res := tool(t, r, s)
				if res.ExitCode == 0 || res.Killed != sandbox.KilledMemory {
					t.Fatalf("runaway allocator: exit %d signal %q killed %q, want killed %q; stderr %.300s", res.ExitCode, res.Signal, res.Killed, sandbox.KilledMemory, res.Stderr)
				}
				t.Logf("runaway allocator: exit %d signal %q max rss %d MiB", res.ExitCode, res.Signal, res.MaxRSSBytes>>20)
				if res.Limits.MemoryBytes != 256<<20 {
					t.Errorf("Result.Limits.MemoryBytes=%d", res.Limits.MemoryBytes)
				}
			})

			t.Run("memory of the whole run", func(t *testing.T) {
				t.Parallel()
				// Four processes of 100 MiB each: every one within the
				// per-process bound, together over the run's.
				s := toolSpec("group", "4", "100")
				s.Limits.MemoryBytes = 256 << 20
				res := tool(t, r, s)
				if res.ExitCode == 0 {
					t.Skip("the run's total memory is not bounded here (no memory cgroup)")
				}
				if res.Killed != sandbox.KilledMemory {
					t.Fatalf("over the run's memory: exit %d killed %q, want %q: %s", res.ExitCode, res.Killed, sandbox.KilledMemory, res.Stdout)
				}
			})

			t.Run("cpu", func(t *testing.T) {
				t.Parallel()
				s := toolSpec("spin")
				s.Limits.CPUTime = time.Second
				res := tool(t, r, s)
				if res.CPUTime == 0 && res.Signal == "SIGKILL" && res.Killed == "" {
					// bwrap without a cgroup (a caller that is not root)
					// cannot tell how much CPU the run used.
					t.Skip("killed, but the run's CPU time is not measurable here")
				}
				if res.Killed != sandbox.KilledCPU || res.ExitCode != -1 {
					t.Fatalf("spinner: exit %d signal %q killed %q cpu %v, want killed %q", res.ExitCode, res.Signal, res.Killed, res.CPUTime, sandbox.KilledCPU)
				}
			})

			t.Run("wall time", func(t *testing.T) {
				t.Parallel()
				s := toolSpec("sleep", "1h")
				s.Limits.WallTime = 500 * time.Millisecond
				res := tool(t, r, s)
				if !res.TimedOut || res.Killed != sandbox.KilledWallTime || res.ExitCode != -1 || res.Signal != "SIGKILL" {
					t.Fatalf("sleeper: %+v", res)
				}
				if res.Duration > 20*time.Second {
					t.Errorf("Duration=%v for a 500ms limit", res.Duration)
				}
			})

			t.Run("wall time kills descendants", func(t *testing.T) {
				t.Parallel()
				out := t.TempDir()
				args := []string{"spawn", "/out/marker", "2s"}
				if isolated(b) {
					// A new session and process group: only the PID
					// namespace can still catch it.
					args = append(args, "setsid")
				}
				s := toolSpec(args...)
				s.Writable = []sandbox.Mount{{Host: out, Target: "/out"}}
				s.Limits.WallTime = time.Second
				res := tool(t, r, s)
				if !res.TimedOut || !strings.HasPrefix(string(res.Stdout), "spawned") {
					t.Fatalf("spawn: %+v stdout %q", res, res.Stdout)
				}
				// The grandchild started within the second; had it
				// survived, it would have written by now.
				time.Sleep(2500 * time.Millisecond)
				if _, err := os.Stat(filepath.Join(out, "marker")); err == nil {
					t.Fatalf("a grandchild survived the wall-time kill and wrote its marker")
				}
			})

			t.Run("processes left behind end with the run", func(t *testing.T) {
				t.Parallel()
				out := t.TempDir()
				s := toolSpec("detach", "/out/marker", "2s", "setsid")
				s.Writable = []sandbox.Mount{{Host: out, Target: "/out"}}
				res := tool(t, r, s)
				if res.ExitCode != 0 || res.Killed != "" {
					t.Fatalf("detach: %+v", res)
				}
				if res.Duration >= 2*time.Second {
					t.Errorf("Duration=%v: the run waited for its leftover", res.Duration)
				}
				time.Sleep(2500 * time.Millisecond)
				if _, err := os.Stat(filepath.Join(out, "marker")); err == nil {
					t.Fatalf("a background process outlived the run and wrote its marker")
				}
			})

			t.Run("output", func(t *testing.T) {
				t.Parallel()
				s := toolSpec("print", "10000000")
				s.Limits.OutputBytes = 4096
				res := tool(t, r, s)
				if !res.Truncated || len(res.Stdout) != 4096 || res.Killed != sandbox.KilledOutput {
					t.Fatalf("printer: truncated %v, %d bytes kept, killed %q; want truncated, 4096, %q", res.Truncated, len(res.Stdout), res.Killed, sandbox.KilledOutput)
				}
			})

			t.Run("context deadline", func(t *testing.T) {
				t.Parallel()
				ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
				defer cancel()
				res, err := r.Run(ctx, toolSpec("sleep", "1h"))
				if err != nil || !res.TimedOut || res.Killed != sandbox.KilledWallTime {
					t.Fatalf("Run: %v, %+v", err, res)
				}
			})

			t.Run("cancel", func(t *testing.T) {
				t.Parallel()
				ctx, cancel := context.WithCancel(context.Background())
				time.AfterFunc(300*time.Millisecond, cancel)
				res, err := r.Run(ctx, toolSpec("sleep", "1h"))
				if err != context.Canceled || res.Killed != sandbox.KilledCanceled || res.TimedOut {
					t.Fatalf("Run: %v, killed %q timed out %v", err, res.Killed, res.TimedOut)
				}
			})

			if !isolated(b) {
				return // RLIMIT_NPROC would count the caller's every process
			}
			t.Run("processes", func(t *testing.T) {
				t.Parallel()
				s := toolSpec("fork", "200")
				s.Limits.Processes = 64
				res := tool(t, r, s)
				if res.ExitCode != 3 {
					t.Fatalf("fork bomb under a 64-task limit: exit %d: %s", res.ExitCode, res.Stdout)
				}
			})
		})
	}
}

func TestExitStatus(t *testing.T) {
	t.Parallel()
	for _, b := range append(backends(t), sandbox.BackendNone) {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			r := newRunner(t, b)
			res := tool(t, r, toolSpec("nosuchmode"))
			if res.ExitCode != 2 || res.Signal != "" || res.Killed != "" || !strings.Contains(string(res.Stderr), "unknown mode") {
				t.Errorf("exit 2: %+v", res)
			}
			if res.Backend != b || res.RunnerDigest != r.Digest(sandbox.Limits{WallTime: time.Minute}) {
				t.Errorf("Backend %q digest %q", res.Backend, res.RunnerDigest)
			}
			_, err := r.Run(context.Background(), sandbox.Spec{Command: []string{"no-such-command"}, Env: map[string]string{"PATH": "/usr/bin:/bin"}})
			if err == nil {
				t.Errorf("a command that does not exist: no error")
			}
			_, err = r.Run(context.Background(), sandbox.Spec{Command: []string{"/bin/true"}, Src: "/no/such/dir"})
			if err == nil {
				t.Errorf("a snapshot that does not exist: no error")
			}
		})
	}
}

// TestGoSpec runs `go test` on a tiny module the way the verifier will:
// toolchain and module cache read-only, build cache writable, no network.
func TestGoSpec(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	files := map[string]string{
		"go.mod":       "module example.com/tiny\n\ngo 1.26.0\n",
		"tiny.go":      "package tiny\n\nfunc Add(a, b int) int { return a + b }\n",
		"tiny_test.go": tinyTest,
	}
	// With the dependency in the host's module cache, prove the read-only
	// cache serves it offline.
	if sum := textSum(t); sum != "" {
		files["go.mod"] += "\nrequire golang.org/x/text v0.44.0\n"
		files["go.sum"] = sum
		files["width.go"] = "package tiny\n\nimport \"golang.org/x/text/width\"\n\nfunc Narrow(s string) string { return width.Narrow.String(s) }\n"
		files["width_test.go"] = "package tiny\n\nimport \"testing\"\n\nfunc TestNarrow(t *testing.T) {\n\tif got := Narrow(\"\uff41\"); got != \"a\" {\n\t\tt.Fatalf(\"Narrow=%q\", got)\n\t}\n}\n"
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(src, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The host's own build cache, writable inside as the verifier will
	// use it: warm, so the test takes seconds rather than a cold build of
	// the standard library per backend. (A cache that is not writable
	// makes go fail, so a pass also shows the writable mount works.)
	cache := goEnv(t, "GOCACHE")
	if fi, err := os.Stat(cache); err != nil || !fi.IsDir() {
		cache = filepath.Join(t.TempDir(), "gocache")
	}
	// One after the other: the first run warms the cache for the others.
	for _, b := range append(backends(t), sandbox.BackendNone) {
		t.Run(b, func(t *testing.T) {
			r := newRunner(t, b)
			s := sandbox.GoSpec(src, []string{"test", "-count=1", "-v", "./..."}, cache)
			res, err := r.Run(context.Background(), s)
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode != 0 || !strings.Contains(string(res.Stdout), "ok  \texample.com/tiny") {
				t.Fatalf("go test: exit %d killed %q\nstdout:\n%s\nstderr:\n%s", res.ExitCode, res.Killed, res.Stdout, res.Stderr)
			}
			want := []string{"SOURCE-READONLY", "HOME=/tmp"}
			if !isolated(b) {
				want = []string{"SOURCE-WRITABLE"}
			}
			for _, w := range want {
				if !strings.Contains(string(res.Stdout), w) {
					t.Errorf("go test output lacks %s:\n%s", w, res.Stdout)
				}
			}
			t.Logf("go test in %s: %v", b, res.Duration)
		})
	}
}

func goEnv(t *testing.T, name string) string {
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		t.Logf("go env %s: %v", name, err)
		return ""
	}
	return strings.TrimSpace(string(out))
}

const tinyTest = `package tiny

import (
	"os"
	"testing"
)

func TestAdd(t *testing.T) {
	if Add(2, 3) != 5 {
		t.Fatal("Add")
	}
}

func TestSandboxed(t *testing.T) {
	if err := os.WriteFile("scribble.txt", []byte("x"), 0o644); err == nil {
		os.Remove("scribble.txt")
		t.Log("SOURCE-WRITABLE")
	} else {
		t.Log("SOURCE-READONLY")
	}
	t.Log("HOME=" + os.Getenv("HOME"))
}
`

// textSum returns the go.sum lines for golang.org/x/text v0.44.0 when the
// host's module cache holds that version, else "".
func textSum(t *testing.T) string {
	mc := goEnv(t, "GOMODCACHE")
	if _, err := os.Stat(filepath.Join(mc, "cache/download/golang.org/x/text/@v/v0.44.0.zip")); err != nil {
		t.Log("golang.org/x/text v0.44.0 not in the module cache: tiny module without dependencies")
		return ""
	}
	sum, err := os.ReadFile("../go.sum")
	if err != nil {
		return ""
	}
	var lines []string
	for _, l := range strings.Split(string(sum), "\n") {
		if strings.HasPrefix(l, "golang.org/x/text v0.44.0") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 2 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}

func TestRunnerDigest(t *testing.T) {
	t.Parallel()
	// The digest is the SHA-256 of this exact canonical JSON.
	canon := `{"backend":"bwrap","limits":{"cpu_time":600000000000,"memory_bytes":2147483648,"output_bytes":16777216,"processes":1024,"wall_time":300000000000},"version":"bubblewrap 0.8.0"}`
	want := fmt.Sprintf("%x", sha256.Sum256([]byte(canon)))
	if got := sandbox.RunnerDigest("bwrap", "bubblewrap 0.8.0", sandbox.Limits{}); got != want {
		t.Errorf("RunnerDigest=%s, want %s", got, want)
	}
	if sandbox.RunnerDigest("bwrap", "v", sandbox.Limits{}) != sandbox.RunnerDigest("bwrap", "v", sandbox.DefaultLimits) {
		t.Errorf("zero limits and DefaultLimits digest differently")
	}
	base := sandbox.RunnerDigest("bwrap", "v", sandbox.Limits{})
	for name, d := range map[string]string{
		"backend": sandbox.RunnerDigest("namespaces", "v", sandbox.Limits{}),
		"version": sandbox.RunnerDigest("bwrap", "w", sandbox.Limits{}),
		"limits":  sandbox.RunnerDigest("bwrap", "v", sandbox.Limits{MemoryBytes: 1 << 20}),
	} {
		if d == base {
			t.Errorf("a different %s gives the same digest", name)
		}
	}
}

func TestNewAndDefault(t *testing.T) {
	t.Parallel()
	if _, err := sandbox.New("chroot"); err == nil {
		t.Errorf("New(chroot): no error")
	}
	if _, err := sandbox.New(sandbox.BackendDocker); err == nil {
		t.Errorf("New(docker) without an image: no error")
	}
	if _, err := sandbox.New(sandbox.BackendBwrap, sandbox.WithBinary("/no/such/bwrap")); !errors.Is(err, sandbox.ErrUnavailable) {
		t.Errorf("New(bwrap) with a missing binary: %v, want ErrUnavailable", err)
	}
	if slices.Contains(sandbox.Available(), sandbox.BackendNone) {
		t.Errorf("Available lists none")
	}
	if runtime.GOOS != "linux" {
		return
	}
	r, err := sandbox.Default()
	if err != nil {
		t.Fatalf("Default: %v", err)
	}
	want := sandbox.BackendNamespaces
	if slices.Contains(sandbox.Available(), sandbox.BackendBwrap) {
		want = sandbox.BackendBwrap
	}
	if r.Name() != want {
		t.Errorf("Default()=%s, want %s", r.Name(), want)
	}
}

// BenchmarkStartOverhead runs a trivial command (the test tool's "true")
// bare and in each backend, in one process. Every iteration runs every
// variant once, interleaved, so that a busy machine slows them alike; the
// figures are medians: <variant>-ms per run, <backend>-added-ms over bare
// and <backend>-x-bare as a ratio.
func BenchmarkStartOverhead(b *testing.B) {
	tool := filepath.Join(toolDir, "tool")
	list := append([]string{sandbox.BackendNone}, sandbox.Available()...)
	if runtime.GOOS == "linux" && !slices.Contains(list, sandbox.BackendNamespaces) {
		list = append(list, sandbox.BackendNamespaces)
	}
	runners := map[string]sandbox.Runner{}
	var names []string
	for _, backend := range list {
		if backend == sandbox.BackendDocker || backend == sandbox.BackendPodman {
			continue // needs an image; seconds per run anyway
		}
		r, err := sandbox.New(backend)
		if err != nil {
			b.Fatal(err)
		}
		runners[backend] = r
		names = append(names, backend)
	}
	s := toolSpec("true")
	s.Env["PWD"] = "/tmp" // as GoSpec sets it: bwrap then needs no env(1) step
	times := map[string][]time.Duration{}
	for b.Loop() {
		start := time.Now()
		if err := exec.Command(tool, "true").Run(); err != nil {
			b.Fatal(err)
		}
		times["bare"] = append(times["bare"], time.Since(start))
		for _, name := range names {
			start := time.Now()
			res, err := runners[name].Run(context.Background(), s)
			if err != nil || res.ExitCode != 0 {
				b.Fatalf("%s: %v %+v", name, err, res)
			}
			times[name] = append(times[name], time.Since(start))
		}
	}
	median := func(ds []time.Duration) float64 {
		slices.Sort(ds)
		return float64(ds[len(ds)/2].Microseconds()) / 1000
	}
	bare := median(times["bare"])
	b.ReportMetric(bare, "bare-ms")
	for _, name := range names {
		ms := median(times[name])
		b.ReportMetric(ms, name+"-ms")
		b.ReportMetric(ms-bare, name+"-added-ms")
		b.ReportMetric(ms/bare, name+"-x-bare")
	}
}
