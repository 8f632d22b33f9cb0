package verify

import (
	"fmt"
	"runtime"
	"syscall"
	"unsafe"
)

// Landlock lets an unprivileged process give up file-system rights for
// itself and everything it executes, for good. The -exec wrapper uses it
// to run a candidate's test binary with no way to write the shared build
// cache, read its own executable, or trace, signal or read the memory of
// the go command that runs it.

const (
	sysLandlockCreateRuleset = 444
	sysLandlockAddRule       = 445
	sysLandlockRestrictSelf  = 446

	landlockCreateRulesetVersion = 1
	landlockRulePathBeneath      = 1

	llExecute    = 1 << 0
	llWriteFile  = 1 << 1
	llReadFile   = 1 << 2
	llReadDir    = 1 << 3
	llRemoveDir  = 1 << 4
	llRemoveFile = 1 << 5
	llMakeChar   = 1 << 6
	llMakeDir    = 1 << 7
	llMakeReg    = 1 << 8
	llMakeSock   = 1 << 9
	llMakeFifo   = 1 << 10
	llMakeBlock  = 1 << 11
	llMakeSym    = 1 << 12
	llRefer      = 1 << 13 // ABI 2
	llTruncate   = 1 << 14 // ABI 3
	llIoctlDev   = 1 << 15 // ABI 5

	oPath           = 0x200000 // O_PATH
	prSetNoNewPrivs = 38

	llScopeAbstractUnix = 1 << 0 // ABI 6
	llScopeSignal       = 1 << 1 // ABI 6

	// llFileRights are the rights that apply to a file itself.
	llFileRights = llExecute | llWriteFile | llReadFile | llTruncate | llIoctlDev
)

// landlockABI is the Landlock ABI version of the running kernel, 0 when
// it has none (or it is turned off).
func landlockABI() int {
	v, _, errno := syscall.Syscall(sysLandlockCreateRuleset, 0, 0, landlockCreateRulesetVersion)
	if errno != 0 {
		return 0
	}
	return int(v)
}

// handledFS is every file-system right the ABI knows: what is not
// granted by a rule is denied.
func handledFS(abi int) uint64 {
	h := uint64(llExecute | llWriteFile | llReadFile | llReadDir | llRemoveDir | llRemoveFile | llMakeChar |
		llMakeDir | llMakeReg | llMakeSock | llMakeFifo | llMakeBlock | llMakeSym)
	if abi >= 2 {
		h |= llRefer
	}
	if abi >= 3 {
		h |= llTruncate
	}
	if abi >= 5 {
		h |= llIoctlDev
	}
	return h
}

// llRule grants access beneath path.
type llRule struct {
	path   string
	access uint64
}

type rulesetAttr struct {
	handledFS, handledNet, scoped uint64
}

type pathBeneathAttr struct {
	allowed  uint64
	parentFD int32
}

// landlockRestrict confines this thread, and whatever it executes, to
// rules. Paths that do not exist are skipped. It must be followed by an
// exec on the same thread: Landlock restricts the calling thread.
func landlockRestrict(rules []llRule) error {
	abi := landlockABI()
	if abi < 1 {
		return fmt.Errorf("landlock: not available in this kernel")
	}
	runtime.LockOSThread()
	handled := handledFS(abi)
	attr := rulesetAttr{handledFS: handled}
	size := unsafe.Sizeof(attr.handledFS)
	if abi >= 4 {
		size = unsafe.Sizeof(attr.handledFS) + unsafe.Sizeof(attr.handledNet)
	}
	if abi >= 6 {
		attr.scoped = llScopeAbstractUnix | llScopeSignal
		size = unsafe.Sizeof(attr)
	}
	fd, _, errno := syscall.Syscall(sysLandlockCreateRuleset, uintptr(unsafe.Pointer(&attr)), size, 0)
	if errno != 0 {
		return fmt.Errorf("landlock: create ruleset: %w", errno)
	}
	defer syscall.Close(int(fd))
	for _, r := range rules {
		pfd, err := syscall.Open(r.path, oPath|syscall.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		var st syscall.Stat_t
		access := r.access & handled
		if syscall.Fstat(pfd, &st) == nil && st.Mode&syscall.S_IFMT != syscall.S_IFDIR {
			access &= llFileRights
		}
		pb := pathBeneathAttr{allowed: access, parentFD: int32(pfd)}
		// The kernel reads the attribute packed: 8 + 4 bytes.
		var buf [12]byte
		*(*uint64)(unsafe.Pointer(&buf[0])) = pb.allowed
		*(*int32)(unsafe.Pointer(&buf[8])) = pb.parentFD
		_, _, errno := syscall.Syscall6(sysLandlockAddRule, fd, landlockRulePathBeneath, uintptr(unsafe.Pointer(&buf[0])), 0, 0, 0)
		syscall.Close(pfd)
		if errno != 0 {
			return fmt.Errorf("landlock: rule for %s: %w", r.path, errno)
		}
	}
	if _, _, errno := syscall.RawSyscall6(syscall.SYS_PRCTL, prSetNoNewPrivs, 1, 0, 0, 0, 0); errno != 0 {
		return fmt.Errorf("landlock: no_new_privs: %w", errno)
	}
	if _, _, errno := syscall.Syscall(sysLandlockRestrictSelf, fd, 0, 0); errno != 0 {
		return fmt.Errorf("landlock: restrict: %w", errno)
	}
	return nil
}

// shieldRules are what a candidate's test binary may do in a shielded
// run: read and execute the system, the toolchain, the source and the
// module cache; read /proc and /sys; write /tmp, /dev/shm and devices;
// neither read nor write the shared build cache or the witness's files
// (the placeholder is in both); execute its
// own executable (which Landlock counts as reading it too) and nothing
// else of the go command's work directory; nothing else at all.
func shieldRules(goroot, bin string) []llRule {
	const rx = llReadFile | llReadDir | llExecute
	all := handledFS(7)
	rules := []llRule{
		{"/usr", rx}, {"/bin", rx}, {"/sbin", rx}, {"/lib", rx}, {"/lib32", rx}, {"/lib64", rx}, {"/libx32", rx},
		{"/etc", llReadFile | llReadDir}, {"/src", rx}, {sbModCache, llReadFile | llReadDir},
		{"/proc", llReadFile | llReadDir}, {"/sys", llReadFile | llReadDir},
		{"/dev", llReadFile | llWriteFile | llReadDir | llIoctlDev | llTruncate},
		{"/tmp", all}, {"/dev/shm", all},
		{bin, llExecute | llReadFile},
	}
	if goroot != "" {
		rules = append(rules, llRule{goroot, rx})
	}
	return rules
}
