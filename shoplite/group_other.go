//go:build !unix

package shoplite

import (
	"os"
	"os/exec"
)

func inGroup(*exec.Cmd) {}

func interruptGroup(cmd *exec.Cmd) error {
	return cmd.Process.Signal(os.Interrupt)
}

func reapGroup(*exec.Cmd) {}
