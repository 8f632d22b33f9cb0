package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/shoplite"
)

func runSample(ctx context.Context, e *env, args []string) error {
	_, rest, err := subcommand(e, "sample", args, "shoplite")
	if err != nil {
		return err
	}
	var out, harness string
	var asJSON bool
	fs := newFlags("sample shoplite", "signoff sample shoplite --out DIR [--harness FILE] [--json]")
	fs.StringVar(&out, "out", "", "directory to write the ShopLite git repository into; must be empty or absent (required)")
	fs.StringVar(&harness, "harness", "", "also write the coupon bug's harness document (JSON) to this file")
	fs.BoolVar(&asJSON, "json", false, "print the branches and the coupon harness as JSON")
	if err := parse(fs, e, rest); err != nil {
		return err
	}
	if err := required(fs, e, "out", out); err != nil {
		return err
	}
	if _, err := exec.LookPath("git"); err != nil {
		return signoff.Errorf(signoff.EUNAVAILABLE, "the sample is written as a git repository, and git is not installed")
	}
	if harness != "" {
		if _, err := os.Lstat(harness); err == nil {
			return signoff.Errorf(signoff.ECONFLICT, "%s already exists: not overwriting it", harness)
		}
	}
	s, err := shoplite.Build(ctx, out)
	if errors.Is(err, shoplite.ErrNotEmpty) {
		return signoff.Errorf(signoff.ECONFLICT, "%s is not empty: give a new or empty directory", out)
	} else if err != nil {
		return err
	}
	h := s.CouponHarness()
	if harness != "" {
		data, err := json.MarshalIndent(h, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(harness, append(data, '\n'), 0o644); err != nil {
			return err
		}
	}
	if asJSON {
		return printJSON(e, struct {
			*shoplite.Sample
			CouponHarness shoplite.HarnessSpec `json:"coupon_harness"`
		}{s, h})
	}
	fmt.Fprintf(e.stdout, "ShopLite written to %s (git repository, main checked out)\n\n", s.Dir)
	fmt.Fprintf(e.stdout, "%-22s %-40s %s\n", "BRANCH", "COMMIT", "WHAT")
	for _, b := range shoplite.Branches {
		fmt.Fprintf(e.stdout, "%-22s %-40s %s\n", b.Name, s.Branches[b.Name], b.Summary)
	}
	if harness != "" {
		fmt.Fprintf(e.stdout, "\ncoupon harness written to %s\n", harness)
	}
	return nil
}
