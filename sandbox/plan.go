package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// The filesystem of an isolated run is built from a plan shared by the
// bwrap and namespaces backends, so both show the same tree: the system
// directories read-only, a few harmless /etc files, a minimal /dev and a
// fresh /proc, a private /tmp, then the spec's own mounts. Nothing else of
// the host is visible (no /home, /root, /var, /etc/shadow, /run).
type mountOp struct {
	Kind string `json:"k"`           // one of the op* constants
	Src  string `json:"s,omitempty"` // host path, symlink target or file content
	Dst  string `json:"d"`           // path inside the sandbox
	Perm uint32 `json:"p,omitempty"` // tmpfs and file permissions
	Size int64  `json:"z,omitempty"` // tmpfs size in bytes, 0 for the kernel default
}

const (
	opReadOnly = "ro"
	opWritable = "rw"
	opTmpfs    = "tmpfs"
	opSymlink  = "symlink"
	opData     = "data"
	opProc     = "proc"
	opDev      = "dev"
)

// systemDirs are bound read-only when present (symlinks, as in merged-/usr
// systems, are recreated as symlinks).
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}

// etcFiles are the /etc entries programs need to start and resolve
// libraries, certificates and service names. Secrets (/etc/shadow,
// /etc/ssl/private) are deliberately absent: inside a run started by root
// the sandbox user is root's uid outside, so file modes would not hide them.
var etcFiles = []string{
	"/etc/ld.so.cache", "/etc/nsswitch.conf", "/etc/localtime", "/etc/services",
	"/etc/protocols", "/etc/alternatives", "/etc/ssl/certs",
}

const (
	sandboxUID = 65534
	sandboxGID = 65534
	hostname   = "sandbox"
	passwdData = "root:x:0:0:root:/root:/usr/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
	groupData  = "root:x:0:\nnogroup:x:65534:\n"
	hostsData  = "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n"
)

// layout is a validated spec: absolute host paths with symlinks resolved,
// clean targets, the working directory inside.
type layout struct {
	limits    Limits
	srcTarget string
	workdir   string
	user      []mountOp // the spec's mounts, parents before children
}

func srcTarget(s Spec) string {
	if s.SrcTarget != "" {
		return s.SrcTarget
	}
	return "/src"
}

// resolveSpec checks every path in s and orders its mounts.
func resolveSpec(s Spec, l Limits) (layout, error) {
	var lay layout
	lay.limits = l
	lay.srcTarget = srcTarget(s)
	var ops []mountOp
	ops = append(ops, mountOp{Kind: opTmpfs, Dst: "/tmp", Perm: 0o1777, Size: tmpfsSize(l)})
	if s.Src != "" {
		host, err := hostPath(s.Src)
		if err != nil {
			return lay, fmt.Errorf("src: %w", err)
		}
		ops = append(ops, mountOp{Kind: opReadOnly, Src: host, Dst: lay.srcTarget})
	}
	for _, m := range s.ReadOnly {
		host, err := hostPath(m.Host)
		if err != nil {
			return lay, fmt.Errorf("read-only mount: %w", err)
		}
		ops = append(ops, mountOp{Kind: opReadOnly, Src: host, Dst: m.Target})
	}
	for _, m := range s.Writable {
		host, err := hostPath(m.Host)
		if err != nil {
			return lay, fmt.Errorf("writable mount: %w", err)
		}
		ops = append(ops, mountOp{Kind: opWritable, Src: host, Dst: m.Target})
	}
	for _, t := range s.Scratch {
		ops = append(ops, mountOp{Kind: opTmpfs, Dst: t, Perm: 0o755, Size: tmpfsSize(l)})
	}
	seen := map[string]bool{}
	for _, op := range ops {
		if err := checkTarget(op.Dst); err != nil {
			return lay, err
		}
		if seen[op.Dst] && op.Dst != "/tmp" {
			return lay, fmt.Errorf("two mounts at %s", op.Dst)
		}
		seen[op.Dst] = true
	}
	// A mount must come after the mount that holds its mountpoint.
	sort.SliceStable(ops, func(i, j int) bool { return depth(ops[i].Dst) < depth(ops[j].Dst) })
	lay.user = ops

	switch {
	case s.Workdir == "" && s.Src != "":
		lay.workdir = lay.srcTarget
	case s.Workdir == "":
		lay.workdir = "/tmp"
	case filepath.IsAbs(s.Workdir):
		lay.workdir = filepath.Clean(s.Workdir)
	default:
		lay.workdir = filepath.Join(lay.srcTarget, s.Workdir)
	}
	return lay, nil
}

func tmpfsSize(l Limits) int64 {
	if l.MemoryBytes > 0 {
		return l.MemoryBytes
	}
	return 0
}

func depth(p string) int { return strings.Count(filepath.Clean(p), "/") }

// checkTarget refuses targets that are not clean absolute paths or that
// would replace the sandbox's own /, /proc or /dev.
func checkTarget(t string) error {
	if !filepath.IsAbs(t) || filepath.Clean(t) != t {
		return fmt.Errorf("mount target %q: want a clean absolute path", t)
	}
	if t == "/" {
		return fmt.Errorf("mount target /: not allowed")
	}
	for _, reserved := range []string{"/proc", "/dev"} {
		if t == reserved || strings.HasPrefix(t, reserved+"/") {
			return fmt.Errorf("mount target %s: %s is the sandbox's own", t, reserved)
		}
	}
	return nil
}

// hostPath makes p absolute and resolves its symlinks, so that the path is
// the same seen from a mount namespace whose old root sits elsewhere.
func hostPath(p string) (string, error) {
	if p == "" {
		return "", fmt.Errorf("empty host path")
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("host path %s: %w", p, err)
	}
	return real, nil
}

// systemPlan is the part of the tree that does not depend on the spec
// but for the size of /dev/shm, a tmpfs like /tmp and bounded the same.
func systemPlan(l Limits) []mountOp {
	var ops []mountOp
	for _, d := range systemDirs {
		ops = append(ops, hostEntry(d)...)
	}
	for _, f := range etcFiles {
		ops = append(ops, hostEntry(f)...)
	}
	ops = append(ops,
		mountOp{Kind: opData, Src: passwdData, Dst: "/etc/passwd", Perm: 0o644},
		mountOp{Kind: opData, Src: groupData, Dst: "/etc/group", Perm: 0o644},
		mountOp{Kind: opData, Src: hostsData, Dst: "/etc/hosts", Perm: 0o644},
		mountOp{Kind: opDev, Dst: "/dev"},
		mountOp{Kind: opTmpfs, Dst: "/dev/shm", Perm: 0o1777, Size: tmpfsSize(l)},
		mountOp{Kind: opProc, Dst: "/proc"},
	)
	return ops
}

// hostEntry binds p read-only, or recreates it when it is a symlink, or
// nothing when it does not exist.
func hostEntry(p string) []mountOp {
	fi, err := os.Lstat(p)
	if err != nil {
		return nil
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		target, err := os.Readlink(p)
		if err != nil {
			return nil
		}
		return []mountOp{{Kind: opSymlink, Src: target, Dst: p}}
	}
	return []mountOp{{Kind: opReadOnly, Src: p, Dst: p}}
}

// fullPlan is the whole tree of an isolated run, in mount order.
func fullPlan(lay layout) []mountOp {
	return slices.Concat(systemPlan(lay.limits), lay.user)
}
