package sandbox_test

import (
	"context"
	"fmt"
	"time"

	"github.com/signoff-dev/signoff/sandbox"
)

// Run a module's tests the way the verifier does: in the best isolated
// backend, offline, with a writable build cache kept between runs.
func ExampleGoSpec() {
	r, err := sandbox.Default()
	if err != nil {
		fmt.Println("no sandbox:", err)
		return
	}
	spec := sandbox.GoSpec("/path/to/checkout", []string{"test", "-json", "./..."}, "/var/cache/signoff/gocache")
	spec.Limits = sandbox.Limits{WallTime: 5 * time.Minute, MemoryBytes: 4 << 30}
	res, err := r.Run(context.Background(), spec)
	if err != nil {
		fmt.Println("could not run:", err)
		return
	}
	fmt.Println(res.Backend, res.ExitCode, res.TimedOut, res.Killed, res.RunnerDigest)
}
