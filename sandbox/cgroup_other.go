//go:build !linux

package sandbox

import "time"

type cgroupSupport struct{ desc string }

func cgroupInfo() cgroupSupport { return cgroupSupport{} }

type runCgroup struct{}

func newRunCgroup(Limits) (*runCgroup, error) { return nil, nil }
func (*runCgroup) add(int) error              { return nil }
func (*runCgroup) oomKilled() bool            { return false }
func (*runCgroup) remove()                    {}
func (*runCgroup) cpuTime() time.Duration     { return 0 }
