package client_test

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/signoff-dev/signoff/client"
)

// A script that merges an approved case, configured as the CLI is
// (SIGNOFF_URL and SIGNOFF_TOKEN), and tells a refusal from a failure.
func Example() {
	c, err := client.FromEnv(os.Getenv, "", "")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	m, err := c.Merge(context.Background(), "case_123")
	if p, ok := errors.AsType[*client.Problem](err); ok {
		fmt.Fprintf(os.Stderr, "refused (HTTP %d, %s): %s\n", p.Status, p.Code, p.Detail)
		return
	} else if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	fmt.Println("merged as", m.Commit)
}
