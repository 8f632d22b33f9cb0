//go:build !unix

package verify

import (
	"context"
	"errors"
)

// lockPath: fetching dependencies needs file locks, which only unix
// builds implement.
func lockPath(ctx context.Context, p string) (unlock func(), err error) {
	return nil, errors.New("dependency fetches need file locks (unix only)")
}
