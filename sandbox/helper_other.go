//go:build !linux

package sandbox

import (
	"errors"
	"syscall"
)

const rlimitNPROC = 7 // BSD and Darwin

func closeExtraFDs() error { return nil }

func dropPrivileges() error {
	return errors.New("isolated runs need Linux")
}

func commandSysProcAttr(helperConfig) *syscall.SysProcAttr { return nil }

func buildRoot([]mountOp) error { return errors.New("namespaces need Linux") }

func prlimit(int, rlimit) error { return errors.New("prlimit needs Linux") }

func protectInheritedFDs() {}

func becomeSubreaper() {}

func reapAll() {}
