package sandbox

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestResolveSpecWorkdir(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	for _, tc := range []struct {
		name string
		spec Spec
		want string
	}{
		{"defaults to the snapshot", Spec{Src: src}, "/src"},
		{"follows SrcTarget", Spec{Src: src, SrcTarget: "/work"}, "/work"},
		{"without a snapshot, /tmp", Spec{}, "/tmp"},
		{"relative is inside the snapshot", Spec{Src: src, Workdir: "cmd/x"}, "/src/cmd/x"},
		{"absolute is taken as is", Spec{Src: src, Workdir: "/tmp/w/"}, "/tmp/w"},
	} {
		lay, err := resolveSpec(tc.spec, DefaultLimits)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if lay.workdir != tc.want {
			t.Errorf("%s: workdir %q, want %q", tc.name, lay.workdir, tc.want)
		}
	}
}

func TestResolveSpecRejects(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		spec Spec
	}{
		{"relative target", Spec{ReadOnly: []Mount{{Host: dir, Target: "gopath"}}}},
		{"unclean target", Spec{ReadOnly: []Mount{{Host: dir, Target: "/a/../b"}}}},
		{"root target", Spec{Writable: []Mount{{Host: dir, Target: "/"}}}},
		{"over /proc", Spec{Writable: []Mount{{Host: dir, Target: "/proc/sys"}}}},
		{"over /dev", Spec{Scratch: []string{"/dev"}}},
		{"two mounts at one target", Spec{ReadOnly: []Mount{{Host: dir, Target: "/x"}}, Writable: []Mount{{Host: dir, Target: "/x"}}}},
		{"missing host path", Spec{Src: dir + "/missing"}},
		{"empty host path", Spec{ReadOnly: []Mount{{Target: "/x"}}}},
	} {
		if _, err := resolveSpec(tc.spec, DefaultLimits); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

// Parents are mounted before what is mounted inside them, whatever the
// order in the spec.
func TestResolveSpecOrder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	lay, err := resolveSpec(Spec{
		Src:      dir,
		Writable: []Mount{{Host: dir, Target: "/tmp/cache/go"}},
		ReadOnly: []Mount{{Host: dir, Target: "/tmp/cache"}},
		Scratch:  []string{"/work/scratch"},
	}, Limits{MemoryBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, op := range lay.user {
		got = append(got, op.Kind+" "+op.Dst)
	}
	want := []string{"tmpfs /tmp", "ro /src", "ro /tmp/cache", "tmpfs /work/scratch", "rw /tmp/cache/go"}
	if !slices.Equal(got, want) {
		t.Errorf("mount order %q, want %q", got, want)
	}
	if lay.user[0].Size != 1<<20 || lay.user[0].Perm != 0o1777 {
		t.Errorf("/tmp tmpfs: size %d perm %o, want the memory limit and 1777", lay.user[0].Size, lay.user[0].Perm)
	}
}

// The system part of the tree shows nothing secret and nothing personal.
func TestSystemPlan(t *testing.T) {
	t.Parallel()
	for _, op := range systemPlan(DefaultLimits) {
		for _, bad := range []string{"/etc/shadow", "/etc/ssl/private", "/root", "/home", "/var", "/run"} {
			if op.Dst == bad || strings.HasPrefix(op.Dst, bad+"/") {
				t.Errorf("system plan exposes %s (%s)", op.Dst, op.Kind)
			}
		}
		if op.Kind == opWritable {
			t.Errorf("system plan has a writable mount: %s", op.Dst)
		}
	}
}

func TestPathMap(t *testing.T) {
	t.Parallel()
	src, cache := t.TempDir(), t.TempDir()
	s := Spec{Src: src, Writable: []Mount{{Host: cache, Target: "/gocache"}}, Scratch: []string{"/scratch"}}
	lay, err := resolveSpec(s, DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	m, cleanup, err := newPathMap(s, lay)
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	for in, want := range map[string]string{
		"/src":          lay.user[1].Src,
		"/src/a/b.go":   lay.user[1].Src + "/a/b.go",
		"/srcfoo":       "/srcfoo",
		"/gocache/x":    cache + "/x",
		"/usr/bin/go":   "/usr/bin/go",
		"relative/path": "relative/path",
	} {
		if got := m.path(in); got != want {
			t.Errorf("path(%q)=%q, want %q", in, got, want)
		}
	}
	if tmp := m.path("/tmp"); tmp == "/tmp" || !strings.Contains(tmp, "signoff-sandbox-none-") {
		t.Errorf("/tmp maps to %q, want a private directory", tmp)
	}
	env := m.env([]string{"PATH=/src/bin:/usr/bin", "GOFLAGS=-mod=mod", "GOCACHE=/gocache"})
	if env[0] != "PATH="+lay.user[1].Src+"/bin:/usr/bin" || env[1] != "GOFLAGS=-mod=mod" || env[2] != "GOCACHE="+cache {
		t.Errorf("env %q", env)
	}
}

func TestCapture(t *testing.T) {
	t.Parallel()
	calls := 0
	c := &capture{limit: 10, full: func() { calls++ }}
	for _, s := range []string{"abcd", "efgh", "ijkl", "mnop"} {
		if n, err := c.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write=%d,%v: a full capture must still accept (drain) everything", n, err)
		}
	}
	if string(c.bytes()) != "abcdefghij" || !c.truncated || calls != 1 {
		t.Errorf("kept %q truncated %v full called %d times; want the first 10 bytes, truncated, once", c.bytes(), c.truncated, calls)
	}
	u := &capture{limit: -1}
	u.Write(make([]byte, 1<<20))
	if len(u.bytes()) != 1<<20 || u.truncated {
		t.Errorf("unlimited capture kept %d bytes", len(u.bytes()))
	}
}

func TestKernelKill(t *testing.T) {
	t.Parallel()
	l := Limits{MemoryBytes: 1 << 30, CPUTime: 2 * time.Second}
	for _, tc := range []struct {
		name string
		res  Result
		want string
	}{
		{"SIGXCPU is the CPU limit", Result{ExitCode: -1, Signal: "SIGXCPU"}, KilledCPU},
		{"SIGKILL after the CPU limit", Result{ExitCode: -1, Signal: "SIGKILL", CPUTime: 3 * time.Second}, KilledCPU},
		{"SIGKILL before the CPU limit is not", Result{ExitCode: -1, Signal: "SIGKILL", CPUTime: time.Second}, ""},
		{"Go out of memory", Result{ExitCode: 2, Stderr: []byte("fatal error: runtime: out of memory\n")}, KilledMemory},
		{"ENOMEM", Result{ExitCode: 1, Stderr: []byte("mmap: Cannot allocate memory")}, KilledMemory},
		{"a clean exit mentioning memory", Result{ExitCode: 0, Stderr: []byte("out of memory")}, ""},
		{"an ordinary failure", Result{ExitCode: 1, Stderr: []byte("--- FAIL: TestX")}, ""},
	} {
		if got := kernelKill(tc.res, l); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := kernelKill(Result{ExitCode: 2, Stderr: []byte("out of memory")}, Limits{MemoryBytes: -1}); got != "" {
		t.Errorf("no memory limit: %q", got)
	}
}

func TestEnvList(t *testing.T) {
	t.Parallel()
	env, err := envList(map[string]string{"B": "2", "A": "1=x", "E": ""})
	if err != nil || !slices.Equal(env, []string{"A=1=x", "B=2", "E="}) {
		t.Errorf("envList=%q, %v", env, err)
	}
	for _, bad := range []map[string]string{{"": "x"}, {"A=B": "x"}, {"A": "x\x00y"}} {
		if _, err := envList(bad); err == nil {
			t.Errorf("envList(%q): no error", bad)
		}
	}
}

func TestBwrapArgs(t *testing.T) {
	t.Parallel()
	r := &helperRunner{backend: BackendBwrap, bwrapV: bwrapFeatures{disableUserns: true, tmpfsOptions: true}}
	plan := []mountOp{
		{Kind: opData, Src: "x", Dst: "/etc/hosts", Perm: 0o644},
		{Kind: opTmpfs, Dst: "/tmp", Perm: 0o1777, Size: 100},
		{Kind: opReadOnly, Src: "/h/src", Dst: "/src"},
		{Kind: opWritable, Src: "/h/cache", Dst: "/cache"},
	}
	args, data := r.bwrapArgs(plan, []string{"A=1"}, "/src")
	got := " " + strings.Join(args, " ") + " "
	for _, want := range []string{
		" --unshare-all --unshare-user --uid 65534 --gid 65534 ", " --cap-drop ALL --clearenv ",
		" --die-with-parent --new-session --disable-userns ", " --setenv A 1 ",
		" --perms 0644 --file 3 /etc/hosts ", " --perms 1777 --size 100 --tmpfs /tmp ",
		" --ro-bind /h/src /src ", " --bind /h/cache /cache ",
		" --remount-ro / --chdir /src --info-fd 4 --block-fd 5 ",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("bwrap args lack %q:\n%s", want, got)
		}
	}
	if len(data) != 1 || string(data[0]) != "x" {
		t.Errorf("data %q", data)
	}
}
