package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/airlock"
)

// maxAirlockInput bounds what the command reads, so a runaway pipe cannot
// exhaust memory.
const maxAirlockInput = 16 << 20

func runAirlock(_ context.Context, e *env, args []string) error {
	fs := newFlags("airlock", "signoff airlock < report.txt")
	if err := parse(fs, e, args); err != nil {
		return err
	}
	b, err := io.ReadAll(io.LimitReader(e.stdin, maxAirlockInput+1))
	if err != nil {
		return fmt.Errorf("read stdin: %w", err)
	}
	if len(b) > maxAirlockInput {
		return signoff.Errorf(signoff.ETOOLARGE, "input is larger than %d bytes", maxAirlockInput)
	}
	return json.NewEncoder(e.stdout).Encode(airlock.Sanitize(string(b)))
}
