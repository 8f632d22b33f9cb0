//go:build unix

package shoplite

import (
	"os/exec"
	"syscall"
	"time"
)

// inGroup starts cmd in a process group of its own, so that cancelling
// reaches the processes it starts too (go build's compile and link).
func inGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// interruptGroup sends SIGINT to cmd's process group, as a terminal's
// Ctrl-C would.
func interruptGroup(cmd *exec.Cmd) error {
	return syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
}

// reapGroup kills what is left of cmd's process group once cmd itself has
// ended, and waits (within a bound) until it is gone: a compile that
// outlived go build no longer writes into the folder about to be removed.
func reapGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if syscall.Kill(-cmd.Process.Pid, 0) == syscall.ESRCH {
			return
		}
	}
}
