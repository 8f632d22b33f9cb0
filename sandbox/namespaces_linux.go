package sandbox

import (
	"os"
	"syscall"
)

// newNamespaces needs nothing installed: the helper is this program,
// re-executed through /proc/self/exe unless WithHelper says otherwise.
func newNamespaces(o options) (Runner, error) {
	helper := o.helper
	if helper == "" {
		helper = "/proc/self/exe"
	}
	return &helperRunner{backend: BackendNamespaces, version: withCgroup("linux " + kernelRelease()), helper: helper}, nil
}

func kernelRelease() string {
	var u syscall.Utsname
	if err := syscall.Uname(&u); err != nil {
		return "unknown"
	}
	b := make([]byte, 0, len(u.Release))
	for _, c := range u.Release {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	return string(b)
}

// namespacesSysProcAttr starts the helper in new user, mount, PID, network,
// IPC, UTS and cgroup namespaces as uid/gid 65534, mapped to the caller's
// own ids (so files written to a writable mount belong to the caller), with
// just the capabilities it needs to build the filesystem and bring up the
// private loopback; it drops them before the command starts. It is the
// PID namespace's init: killing it kills every process of the run.
func namespacesSysProcAttr() *syscall.SysProcAttr {
	uid, gid := os.Getuid(), os.Getgid()
	attr := &syscall.SysProcAttr{
		Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID |
			syscall.CLONE_NEWNET | syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS | syscall.CLONE_NEWCGROUP,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: sandboxUID, HostID: uid, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: sandboxGID, HostID: gid, Size: 1}},
		AmbientCaps: []uintptr{capSysAdmin, capNetAdmin, capSetpcap},
		Setsid:      true,
		Pdeathsig:   syscall.SIGKILL,
	}
	if uid == 0 {
		// Only a privileged parent may allow setgroups in the child's
		// namespace; use it to shed root's supplementary groups.
		attr.GidMappingsEnableSetgroups = true
		attr.Credential = &syscall.Credential{Uid: sandboxUID, Gid: sandboxGID, Groups: []uint32{}}
	}
	return attr
}

func noneSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
