//go:build unix

package gitx

import (
	"os/exec"
	"syscall"
)

// setProcessGroup puts git in its own process group and makes cancellation
// kill the whole group, so helpers git started (ssh, upload-pack) go too.
func setProcessGroup(c *exec.Cmd) {
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c.Cancel = func() error {
		if c.Process == nil {
			return nil
		}
		return syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
	}
}
