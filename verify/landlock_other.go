//go:build !linux

package verify

import "errors"

type llRule struct {
	path   string
	access uint64
}

func landlockABI() int { return 0 }

func landlockRestrict([]llRule) error { return errors.New("landlock: only on Linux") }

func shieldRules(goroot, bin string) []llRule { return nil }

func dropXattrs(string) int { return 0 }
