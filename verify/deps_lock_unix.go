//go:build unix

package verify

import (
	"context"
	"errors"
	"os"
	"syscall"
	"time"
)

// lockPath takes an exclusive lock on the file p (created), waiting for
// it as long as ctx allows. The kernel drops it if this process dies, so
// a crashed fetch never leaves a key locked.
func lockPath(ctx context.Context, p string) (unlock func(), err error) {
	f, err := os.OpenFile(p, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, err
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
