//go:build !unix

package gitx

import "os/exec"

// setProcessGroup is a no-op where process groups are not available: the
// default cancellation kills git itself.
func setProcessGroup(*exec.Cmd) {}
