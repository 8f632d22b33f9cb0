package sandbox

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"unsafe"
)

const rlimitNPROC = 6

// Constants the frozen syscall package lacks.
const (
	prSetNoNewPrivs      = 38
	prCapbsetRead        = 23
	prCapbsetDrop        = 24
	prCapAmbient         = 47
	prCapAmbientClearAll = 4
	linuxCapabilityV3    = 0x20080522
	sysCloseRange        = 436 // the same number on every architecture
	closeRangeCloexec    = 1 << 2
	sysMountSetattr      = 442 // likewise
	atRecursive          = 0x8000
	mountAttrRdonly      = 0x1
	mountAttrNosuid      = 0x2
	mountAttrNodev       = 0x4
	capSetpcap           = 8
	capNetAdmin          = 12
	capSysAdmin          = 21
)

// closeExtraFDs marks every inherited descriptor above stderr close-on-exec
// so nothing of the host (bwrap's data pipes, a caller's open files) leaks
// into the command.
func closeExtraFDs() error {
	_, _, errno := syscall.Syscall(sysCloseRange, 3, math.MaxUint32, closeRangeCloexec)
	if errno == 0 {
		return nil
	}
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return err
	}
	for _, e := range entries {
		var fd int
		if _, err := fmt.Sscan(e.Name(), &fd); err == nil && fd > 2 {
			syscall.CloseOnExec(fd)
		}
	}
	return nil
}

// protectInheritedFDs marks close-on-exec every descriptor above stderr
// that this process inherited without the flag (Go opens its own with it),
// so that bwrap, which passes on whatever it gets, cannot hand one of them
// to a sandboxed command. The side effect is process-wide: such a
// descriptor is no longer inherited by any child started later, which is
// what a program that runs untrusted code should want anyway.
func protectInheritedFDs() {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range entries {
		var fd int
		if _, err := fmt.Sscan(e.Name(), &fd); err != nil || fd <= 2 {
			continue
		}
		flags, _, errno := syscall.RawSyscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFD, 0)
		if errno == 0 && flags&syscall.FD_CLOEXEC == 0 {
			syscall.CloseOnExec(fd)
		}
	}
}

// dropPrivileges leaves the calling thread, and so the command it forks,
// with no capability in any set and no way to gain one: no_new_privs makes
// setuid bits and file capabilities inert.
func dropPrivileges() error {
	if _, _, errno := syscall.RawSyscall6(syscall.SYS_PRCTL, prSetNoNewPrivs, 1, 0, 0, 0, 0); errno != 0 {
		return fmt.Errorf("no_new_privs: %w", errno)
	}
	for c := uintptr(0); c < 64; c++ {
		in, _, errno := syscall.RawSyscall6(syscall.SYS_PRCTL, prCapbsetRead, c, 0, 0, 0, 0)
		if errno != 0 {
			break // past the last capability this kernel knows
		}
		if in == 1 {
			if _, _, errno := syscall.RawSyscall6(syscall.SYS_PRCTL, prCapbsetDrop, c, 0, 0, 0, 0); errno != 0 {
				return fmt.Errorf("drop capability %d from the bounding set: %w", c, errno)
			}
		}
	}
	if _, _, errno := syscall.RawSyscall6(syscall.SYS_PRCTL, prCapAmbient, prCapAmbientClearAll, 0, 0, 0, 0); errno != 0 {
		return fmt.Errorf("clear ambient capabilities: %w", errno)
	}
	hdr := struct {
		version uint32
		pid     int32
	}{linuxCapabilityV3, 0}
	var data [2]struct{ effective, permitted, inheritable uint32 }
	if _, _, errno := syscall.RawSyscall(syscall.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0); errno != 0 {
		return fmt.Errorf("capset: %w", errno)
	}
	return nil
}

// prlimit sets r on another process (bwrap's init, before it forks).
func prlimit(pid int, r rlimit) error {
	lim := syscall.Rlimit{Cur: r.Cur, Max: r.Max}
	if _, _, errno := syscall.RawSyscall6(syscall.SYS_PRLIMIT64, uintptr(pid), uintptr(r.Resource), uintptr(unsafe.Pointer(&lim)), 0, 0, 0); errno != 0 {
		return fmt.Errorf("%s: %w", r.Name, errno)
	}
	return nil
}

const prSetChildSubreaper = 36

func becomeSubreaper() {
	syscall.RawSyscall6(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0, 0, 0, 0)
}

// reapAll kills and reaps every remaining descendant of the helper (a none
// run's background processes, whatever session or group they moved to):
// each one killed hands its own children to the helper, the subreaper,
// until none is left. A run with a PID namespace needs none of this.
func reapAll() {
	self := os.Getpid()
	for i := 0; i < 1000; i++ {
		killed := 0
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == self {
				continue
			}
			if parentOf(pid) == self {
				syscall.Kill(pid, syscall.SIGKILL)
				killed++
			}
		}
		for {
			if _, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil); err != nil {
				break
			}
		}
		if killed == 0 {
			return
		}
		// Let the killed die, so their children are handed over.
		var ws syscall.WaitStatus
		syscall.Wait4(-1, &ws, 0, nil)
	}
}

// parentOf reads the parent pid from /proc/PID/stat, or -1.
func parentOf(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return -1
	}
	// The command name, in parentheses, may hold spaces: the fields
	// after the last ')' are "state ppid ...".
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return -1
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return -1
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return -1
	}
	return ppid
}

// commandSysProcAttr: an isolated command dies with its namespace; a none
// command dies with the helper.
func commandSysProcAttr(cfg helperConfig) *syscall.SysProcAttr {
	if cfg.Isolated {
		return nil
	}
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// buildRoot turns the helper's fresh mount namespace into the sandbox's
// filesystem, the way bubblewrap does: a tmpfs on /tmp becomes a staging
// root holding the old root (for bind sources) and the new root; the plan
// is applied to the new root, which is then made read-only and pivoted
// into, and the old root is detached.
func buildRoot(plan []mountOp) error {
	const (
		base    = "/tmp"
		oldroot = "/oldroot"
		newroot = "/newroot"
	)
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make / private: %w", err)
	}
	if err := syscall.Mount("tmpfs", base, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, "mode=0755"); err != nil {
		return fmt.Errorf("staging tmpfs: %w", err)
	}
	for _, d := range []string{base + oldroot, base + newroot} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return err
		}
	}
	if err := syscall.PivotRoot(base, base+oldroot); err != nil {
		return fmt.Errorf("pivot_root into staging: %w", err)
	}
	if err := os.Chdir("/"); err != nil {
		return err
	}
	if err := syscall.Mount("tmpfs", newroot, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, "mode=0755"); err != nil {
		return fmt.Errorf("root tmpfs: %w", err)
	}
	for _, op := range plan {
		if err := applyOp(op, oldroot, newroot); err != nil {
			return fmt.Errorf("%s %s: %w", op.Kind, op.Dst, err)
		}
	}
	if err := syscall.Sethostname([]byte(hostname)); err != nil {
		return fmt.Errorf("hostname: %w", err)
	}
	if err := loopbackUp(); err != nil {
		return fmt.Errorf("loopback: %w", err)
	}
	if err := syscall.Mount("", newroot, "", syscall.MS_REMOUNT|syscall.MS_RDONLY|syscall.MS_NOSUID|syscall.MS_NODEV, ""); err != nil {
		return fmt.Errorf("remount root read-only: %w", err)
	}
	if err := os.Chdir(newroot); err != nil {
		return err
	}
	if err := syscall.PivotRoot(".", "."); err != nil {
		return fmt.Errorf("pivot_root into the sandbox: %w", err)
	}
	if err := syscall.Unmount(".", syscall.MNT_DETACH); err != nil {
		return fmt.Errorf("detach old root: %w", err)
	}
	return os.Chdir("/")
}

func applyOp(op mountOp, oldroot, newroot string) error {
	dst := newroot + op.Dst
	switch op.Kind {
	case opReadOnly, opWritable:
		src := oldroot + op.Src
		fi, err := os.Stat(src)
		if err != nil {
			return err
		}
		if err := mountpoint(dst, fi.IsDir()); err != nil {
			return err
		}
		if err := syscall.Mount(src, dst, "", syscall.MS_BIND|syscall.MS_REC, ""); err != nil {
			return err
		}
		attr := uint64(mountAttrNosuid | mountAttrNodev)
		if op.Kind == opReadOnly {
			attr |= mountAttrRdonly
		}
		return setMountAttr(dst, attr)
	case opTmpfs:
		if err := os.MkdirAll(dst, 0o755); err != nil {
			return err
		}
		data := fmt.Sprintf("mode=%o", op.Perm)
		if op.Size > 0 {
			data += fmt.Sprintf(",size=%d", op.Size)
		}
		return syscall.Mount("tmpfs", dst, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, data)
	case opSymlink:
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.Symlink(op.Src, dst)
	case opData:
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, []byte(op.Src), os.FileMode(op.Perm))
	case opProc:
		if err := os.MkdirAll(dst, 0o755); err != nil {
			return err
		}
		return syscall.Mount("proc", dst, "proc", syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, "")
	case opDev:
		return buildDev(dst, oldroot)
	}
	return fmt.Errorf("unknown mount op")
}

// buildDev makes a minimal /dev: the harmless character devices bound from
// the host, the usual symlinks, and a private devpts when the kernel
// allows one.
func buildDev(dst, oldroot string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	if err := syscall.Mount("tmpfs", dst, "tmpfs", syscall.MS_NOSUID|syscall.MS_NOEXEC, "mode=0755"); err != nil {
		return err
	}
	for _, n := range []string{"null", "zero", "full", "random", "urandom", "tty"} {
		if err := mountpoint(dst+"/"+n, false); err != nil {
			return err
		}
		if err := syscall.Mount(oldroot+"/dev/"+n, dst+"/"+n, "", syscall.MS_BIND, ""); err != nil {
			return fmt.Errorf("/dev/%s: %w", n, err)
		}
	}
	links := [][2]string{{"/proc/self/fd", "fd"}, {"/proc/self/fd/0", "stdin"}, {"/proc/self/fd/1", "stdout"}, {"/proc/self/fd/2", "stderr"}, {"pts/ptmx", "ptmx"}}
	for _, l := range links {
		if err := os.Symlink(l[0], dst+"/"+l[1]); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dst+"/pts", 0o755); err != nil {
		return err
	}
	// Pseudo-terminals are a convenience; a kernel that refuses a private
	// devpts in a user namespace still gets a working sandbox.
	_ = syscall.Mount("devpts", dst+"/pts", "devpts", syscall.MS_NOSUID|syscall.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=620")
	return nil
}

// mountpoint creates an empty directory or file to mount on.
func mountpoint(p string, dir bool) error {
	if dir {
		return os.MkdirAll(p, 0o755)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_RDONLY, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
}

// setMountAttr applies attr to p and every mount below it. Kernels before
// 5.12 lack mount_setattr; there the top mount is remounted, keeping the
// flags a user namespace may not clear.
func setMountAttr(p string, attr uint64) error {
	a := struct{ set, clr, propagation, usernsFD uint64 }{set: attr}
	dirfd := -100 // AT_FDCWD
	ptr, err := syscall.BytePtrFromString(p)
	if err != nil {
		return err
	}
	_, _, errno := syscall.Syscall6(sysMountSetattr, uintptr(dirfd), uintptr(unsafe.Pointer(ptr)), atRecursive, uintptr(unsafe.Pointer(&a)), unsafe.Sizeof(a), 0)
	if errno == 0 {
		return nil
	}
	if errno != syscall.ENOSYS {
		return fmt.Errorf("mount_setattr: %w", errno)
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(p, &st); err != nil {
		return err
	}
	const keep = syscall.MS_NOSUID | syscall.MS_NODEV | syscall.MS_NOEXEC | syscall.MS_NOATIME | syscall.MS_NODIRATIME | syscall.MS_RELATIME | syscall.MS_RDONLY
	flags := uintptr(st.Flags)&keep | syscall.MS_BIND | syscall.MS_REMOUNT | syscall.MS_NOSUID | syscall.MS_NODEV
	if attr&mountAttrRdonly != 0 {
		flags |= syscall.MS_RDONLY
	}
	return syscall.Mount("", p, "", flags, "")
}

// loopbackUp brings up the namespace's own loopback so a test can listen on
// 127.0.0.1 and talk to itself; the host's loopback stays unreachable.
func loopbackUp() error {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	var ifr [40]byte
	copy(ifr[:], "lo")
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.SIOCGIFFLAGS, uintptr(unsafe.Pointer(&ifr[0]))); errno != 0 {
		return errno
	}
	flags := (*uint16)(unsafe.Pointer(&ifr[16]))
	*flags |= syscall.IFF_UP
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.SIOCSIFFLAGS, uintptr(unsafe.Pointer(&ifr[0]))); errno != 0 {
		return errno
	}
	return nil
}
