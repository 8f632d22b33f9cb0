//go:build !linux

package sandbox

import (
	"fmt"
	"runtime"
	"syscall"
)

func newNamespaces(options) (Runner, error) {
	return nil, fmt.Errorf("sandbox namespaces: %w: needs Linux, not %s", ErrUnavailable, runtime.GOOS)
}

func kernelRelease() string { return "unknown" }

func namespacesSysProcAttr() *syscall.SysProcAttr { return nil }

func noneSysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
