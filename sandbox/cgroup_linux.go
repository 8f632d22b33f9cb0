package sandbox

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A run gets a cgroup of its own when the machine lets this process create
// one below its own (as root on cgroup v1, or on a delegated cgroup v2
// subtree): pids.max bounds the run's tasks, which RLIMIT_NPROC cannot do
// for a caller that is root (the kernel exempts uid 0, and inside the run
// the sandbox user is the caller's uid); the memory controller bounds the
// run's total memory and tells an out-of-memory kill apart; CPU accounting
// gives the run's total CPU time. Without one, the rlimits alone apply.

// cgroupController is where one controller's hierarchy puts this process.
type cgroupController struct {
	name   string // "pids" or "memory"
	parent string // directory of this process's cgroup
	v2     bool
}

type cgroupSupport struct {
	controllers []cgroupController
	desc        string // for the runner version: "cgroup v1 pids memory", or ""
}

var cgroupInfo = sync.OnceValue(func() cgroupSupport {
	var cs cgroupSupport
	for _, name := range []string{"pids", "memory", "cpuacct"} {
		c, ok := findController(name)
		if !ok {
			continue
		}
		// Prove it: create, limit and remove a cgroup.
		dir := filepath.Join(c.parent, "signoff-sandbox-probe-"+randomHex())
		if err := os.Mkdir(dir, 0o755); err != nil {
			continue
		}
		probe := int64(1 << 30)
		if name == "pids" {
			probe = 1024 // pids.max tops out at 2^22
		}
		if name == "cpuacct" && c.v2 {
			continue // cgroup v2 counts CPU time in every cgroup: cpu.stat
		}
		err := writeLimit(dir, c, probe)
		os.Remove(dir)
		if err == nil {
			cs.controllers = append(cs.controllers, c)
		}
	}
	if len(cs.controllers) > 0 {
		v := "v1"
		if cs.controllers[0].v2 {
			v = "v2"
		}
		parts := []string{"cgroup", v}
		for _, c := range cs.controllers {
			parts = append(parts, c.name)
		}
		cs.desc = strings.Join(parts, " ")
	}
	return cs
})

// findController locates name in a cgroup v1 hierarchy, else in the v2
// hierarchy when that controller is enabled for this process's children.
func findController(name string) (cgroupController, bool) {
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return cgroupController{}, false
	}
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return cgroupController{}, false
	}
	paths := map[string]string{} // controller (or "" for v2) -> path
	for _, line := range strings.Split(strings.TrimSpace(string(self)), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		if f[1] == "" {
			paths[""] = f[2]
			continue
		}
		for _, c := range strings.Split(f[1], ",") {
			paths[c] = f[2]
		}
	}
	var v2mount, v2root string
	sc := bufio.NewScanner(strings.NewReader(string(mounts)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		sep := slices.Index(f, "-")
		if sep < 0 || len(f) < sep+4 || len(f) < 5 {
			continue
		}
		root, point, fstype, super := f[3], unescapeMount(f[4]), f[sep+1], f[sep+3]
		switch fstype {
		case "cgroup":
			if slices.Contains(strings.Split(super, ","), name) {
				if p, ok := paths[name]; ok {
					return cgroupController{name: name, parent: joinCgroup(point, root, p)}, true
				}
			}
		case "cgroup2":
			v2mount, v2root = point, root
		}
	}
	p, ok := paths[""]
	if v2mount == "" || !ok {
		return cgroupController{}, false
	}
	parent := joinCgroup(v2mount, v2root, p)
	ctl, err := os.ReadFile(filepath.Join(parent, "cgroup.subtree_control"))
	if err != nil {
		return cgroupController{}, false
	}
	// A controller has to be enabled for this cgroup's children already:
	// enabling it is the delegating manager's business (and cgroup v2's
	// no-internal-processes rule forbids it while this cgroup has
	// processes of its own, the usual case).
	if !slices.Contains(strings.Fields(string(ctl)), name) {
		return cgroupController{}, false
	}
	return cgroupController{name: name, parent: parent, v2: true}, true
}

// joinCgroup maps a cgroup path to a directory: the mount shows the
// hierarchy from root on.
func joinCgroup(point, root, p string) string {
	if root != "/" {
		if rel, ok := strings.CutPrefix(p, root); ok {
			p = rel
		}
	}
	return filepath.Join(point, p)
}

func unescapeMount(s string) string {
	r := strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`)
	return r.Replace(s)
}

func randomHex() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func writeLimit(dir string, c cgroupController, v int64) error {
	switch {
	case c.name == "cpuacct":
		return nil // accounting only
	case c.name == "pids":
		return os.WriteFile(filepath.Join(dir, "pids.max"), []byte(strconv.FormatInt(v, 10)), 0)
	case c.v2:
		if err := os.WriteFile(filepath.Join(dir, "memory.max"), []byte(strconv.FormatInt(v, 10)), 0); err != nil {
			return err
		}
		os.WriteFile(filepath.Join(dir, "memory.swap.max"), []byte("0"), 0) // absent without swap accounting
		return nil
	default:
		if err := os.WriteFile(filepath.Join(dir, "memory.limit_in_bytes"), []byte(strconv.FormatInt(v, 10)), 0); err != nil {
			return err
		}
		os.WriteFile(filepath.Join(dir, "memory.memsw.limit_in_bytes"), []byte(strconv.FormatInt(v, 10)), 0) // likewise
		return nil
	}
}

// runCgroup is the cgroup (one directory per hierarchy) of one run.
type runCgroup struct {
	dirs   []string
	memory string // the memory controller's directory, "" without one
	cpu    string // where the run's CPU time is counted, "" nowhere
	v2     bool
}

// newRunCgroup creates the run's cgroup with its limits, or returns nil
// when the machine offers none or the limits are off.
func newRunCgroup(l Limits) (*runCgroup, error) {
	cs := cgroupInfo()
	if len(cs.controllers) == 0 {
		return nil, nil
	}
	cg := &runCgroup{}
	name := "signoff-sandbox-" + randomHex()
	for _, c := range cs.controllers {
		limit := int64(l.Processes)
		switch c.name {
		case "memory":
			limit = l.MemoryBytes
		case "cpuacct":
			limit = 1
		}
		if limit <= 0 {
			continue
		}
		dir := filepath.Join(c.parent, name)
		if !slices.Contains(cg.dirs, dir) {
			if err := os.Mkdir(dir, 0o755); err != nil {
				cg.remove()
				return nil, fmt.Errorf("create cgroup: %w", err)
			}
			cg.dirs = append(cg.dirs, dir)
		}
		if err := writeLimit(dir, c, limit); err != nil {
			cg.remove()
			return nil, fmt.Errorf("cgroup %s limit: %w", c.name, err)
		}
		switch {
		case c.name == "memory":
			cg.memory = dir
		case c.name == "cpuacct":
			cg.cpu = dir
		}
		cg.v2 = c.v2
	}
	if cg.v2 && len(cg.dirs) > 0 {
		cg.cpu = cg.dirs[0]
	}
	if len(cg.dirs) == 0 {
		return nil, nil
	}
	return cg, nil
}

// add moves pid (with all its threads) into the run's cgroup. It must
// happen before pid forks anything the limits are meant to cover.
func (cg *runCgroup) add(pid int) error {
	for _, d := range cg.dirs {
		if err := os.WriteFile(filepath.Join(d, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
			return fmt.Errorf("join cgroup %s: %w", d, err)
		}
	}
	return nil
}

// oomKilled reports whether the kernel killed a process of the run for
// exceeding the cgroup's memory limit.
func (cg *runCgroup) oomKilled() bool {
	if cg == nil || cg.memory == "" {
		return false
	}
	file := "memory.oom_control"
	if cg.v2 {
		file = "memory.events"
	}
	b, err := os.ReadFile(filepath.Join(cg.memory, file))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if n, ok := strings.CutPrefix(line, "oom_kill "); ok {
			v, _ := strconv.Atoi(strings.TrimSpace(n))
			return v > 0
		}
	}
	return false
}

// cpuTime is the CPU time every process of the run used, or 0 when the
// run's cgroup does not count it.
func (cg *runCgroup) cpuTime() time.Duration {
	if cg == nil || cg.cpu == "" {
		return 0
	}
	if !cg.v2 {
		b, err := os.ReadFile(filepath.Join(cg.cpu, "cpuacct.usage"))
		if err != nil {
			return 0
		}
		ns, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		return time.Duration(ns)
	}
	b, err := os.ReadFile(filepath.Join(cg.cpu, "cpu.stat"))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if us, ok := strings.CutPrefix(line, "usage_usec "); ok {
			v, _ := strconv.ParseInt(strings.TrimSpace(us), 10, 64)
			return time.Duration(v) * time.Microsecond
		}
	}
	return 0
}

// remove deletes the cgroup once its last task is gone; the kernel may
// take a moment to release the tasks of a PID namespace just killed.
func (cg *runCgroup) remove() {
	if cg == nil {
		return
	}
	deadline := time.Now().Add(2 * time.Second)
	for _, d := range cg.dirs {
		for {
			err := os.Remove(d)
			if err == nil || errors.Is(err, os.ErrNotExist) || time.Now().After(deadline) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}
