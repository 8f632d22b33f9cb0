package verify

import (
	"strings"
	"syscall"
)

func dropXattrs(p string) int {
	buf := make([]byte, 4096)
	sz, err := syscall.Listxattr(p, buf)
	if err != nil || sz <= 0 {
		return 0
	}
	n := 0
	for _, name := range strings.Split(strings.TrimRight(string(buf[:sz]), "\x00"), "\x00") {
		if name != "" && syscall.Removexattr(p, name) == nil {
			n++
		}
	}
	return n
}
