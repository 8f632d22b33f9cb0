// Package shoplite holds ShopLite, the sample project of the Signoff demo,
// embedded in the binary, and writes it out as a git repository.
//
// ShopLite is a small Go module (module path "shoplite", standard library
// only): package cart prices a cart in cents and cmd/shoplite serves
// POST /checkout, GET /version (the commit it was built from) and
// GET /healthz. Its cart has three real bugs, left in on purpose:
//
//  1. a percentage coupon is applied twice: SAVE10 on 10000 cents gives 8100
//     instead of 9000;
//  2. a coupon worth more than the cart gives a negative total: SAVE300 on
//     200 cents gives -100 instead of 0;
//  3. the subtotal is summed in int64 without an overflow check: a large
//     enough price wraps to a negative total instead of an error.
//
// When told where (Server.SetOFREP, or the SHOPLITE_OFREP_* environment
// variables), its checkout also reads the boolean feature flag
// checkout_v2_new_payment_flow over OFREP on every request, and fails with
// 500 "payment provider v2 unavailable" while the flag is true: the
// incident of the change desk's demo. Told nothing, it reads no flag.
//
// Build writes the repository with these branches, every commit labelled
// "[authored]" (written by hand for the demo, not by an agent or a
// reporter) and made with a fixed identity and fixed dates, so the same
// binary always produces the same commit ids:
//
//	main                   the shop with its bugs: the base
//	repro/coupon           main + cart/coupon_repro_test.go (TestCouponAppliesOnce;
//	                       fails on main with "8100")
//	repro/negative-total   main + cart/negative_repro_test.go (TestCouponNeverNegative;
//	                       fails on main with "-100")
//	fix/false-test-edit    repro/coupon + the test edited to expect 8100. A false
//	                       fix: it is green on its own, the bug stays. It sits on
//	                       repro/coupon because it needs the test to edit; the
//	                       verifier restores the harness files, so it is REJECTED.
//	fix/false-breaks-p2p   main + the coupon applied once, but a coupon worth
//	                       nothing (SAVE0) is refused: TestCouponAppliesOnce
//	                       passes, the pass-to-pass TestZeroCoupon fails. REJECTED.
//	fix/genuine            main + the coupon applied once. Only the coupon bug:
//	                       negative totals and overflow stay for the demo to
//	                       fix, so TestCouponNeverNegative still fails on it.
//
// The embedded tree lives in _project (ignored by the go command): base is
// main's tree, each other folder holds the files a branch adds or replaces
// over its parent, and go.mod is stored as go.mod.txt because the go
// command refuses to embed a directory holding a go.mod.
package shoplite

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/signoff-dev/signoff/gitx"
)

//go:embed all:_project
var project embed.FS

// Branch names.
const (
	BranchMain          = "main"
	BranchReproCoupon   = "repro/coupon"
	BranchReproNegative = "repro/negative-total"
	BranchFalseTestEdit = "fix/false-test-edit"
	BranchFalseBreaks   = "fix/false-breaks-p2p"
	BranchGenuine       = "fix/genuine"
)

// Branch describes one branch Build writes.
type Branch struct {
	Name    string
	Parent  string // "" for main
	Summary string
	overlay string // folder under _project
	message string
}

// Branches lists what Build writes, in order.
var Branches = []Branch{
	{
		Name: BranchMain, Summary: "the shop with its bugs (base)", overlay: "base",
		message: "[authored] ShopLite: cart pricing and HTTP server\n\nThe sample shop of the Signoff demo, with bugs left in on purpose.",
	},
	{
		Name: BranchReproCoupon, Parent: BranchMain, overlay: "repro-coupon",
		Summary: "reproduction: TestCouponAppliesOnce (fails on main with 8100)",
		message: "[authored] repro: TestCouponAppliesOnce\n\nA 10% coupon on a 10000-cent cart must leave 9000 cents; main gives 8100.",
	},
	{
		Name: BranchReproNegative, Parent: BranchMain, overlay: "repro-negative-total",
		Summary: "reproduction: TestCouponNeverNegative (fails on main with -100)",
		message: "[authored] repro: TestCouponNeverNegative\n\nSAVE300 on a 200-cent cart must leave 0 cents; main gives -100.",
	},
	{
		Name: BranchFalseTestEdit, Parent: BranchReproCoupon, overlay: "false-test-edit",
		Summary: "FALSE fix: edits the test to expect 8100 (must be REJECTED)",
		message: "[authored] FALSE FIX fixture: make TestCouponAppliesOnce expect 8100\n\n" +
			"A deliberately false fix: the test goes green and the coupon is still\napplied twice. The verifier restores the harness files, so it must be\nREJECTED.",
	},
	{
		Name: BranchFalseBreaks, Parent: BranchMain, overlay: "false-breaks-p2p",
		Summary: "FALSE fix: coupon once, but breaks TestZeroCoupon (must be REJECTED)",
		message: "[authored] FALSE FIX fixture: apply the coupon once, refuse coupons worth nothing\n\n" +
			"A deliberately false fix: TestCouponAppliesOnce passes, but SAVE0 is now\nrefused, so the pass-to-pass TestZeroCoupon fails. It must be REJECTED.",
	},
	{
		Name: BranchGenuine, Parent: BranchMain, overlay: "genuine",
		Summary: "genuine fix: a percentage coupon applies once (must be VERIFIED)",
		message: "[authored] fix: apply a percentage coupon once\n\n" +
			"Total(10000 cents, SAVE10) is 9000 again. Negative totals and overflow\nare separate bugs and are not touched here.",
	},
}

// Author is the identity of every commit Build makes.
var Author = gitx.Signature{Name: "Signoff Sample (authored)", Email: "sample@signoff.invalid"}

// Epoch is the date of main's commit; each later commit is an hour later.
var Epoch = time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)

// PassToPass are ShopLite's tests that pass on main and must keep passing.
var PassToPass = []string{
	"TestEmptyCart", "TestSingleItemNoCoupon", "TestZeroCoupon", "TestFixedCoupon",
	"TestUnknownCoupon", "TestInvalidItem",
	"TestServerVersion", "TestServerHealthz", "TestServerCheckout",
}

// ErrNotEmpty is returned by Build for a directory that already has files.
var ErrNotEmpty = errors.New("shoplite: directory is not empty")

// Sample is a written ShopLite repository.
type Sample struct {
	Dir      string            `json:"dir"`
	Base     string            `json:"base"`     // main's commit
	Branches map[string]string `json:"branches"` // branch name to commit
}

// HarnessSpec is a harness document in the verification format (the
// verifier defines its own type with the same JSON).
type HarnessSpec struct {
	Base            string   `json:"base"`
	TestsFrom       string   `json:"tests_from"`
	TestFiles       []string `json:"test_files"`
	Command         []string `json:"command"`
	Format          string   `json:"format"`
	FailToPass      []string `json:"fail_to_pass"`
	PassToPass      []string `json:"pass_to_pass"`
	ExpectedFailure string   `json:"expected_failure"`
	TimeoutSeconds  int      `json:"timeout_seconds"`
	Runs            int      `json:"runs"`
}

// CouponHarness is the harness for the coupon applied twice: the
// reproduction test from repro/coupon, failing on main with "8100".
func (s *Sample) CouponHarness() HarnessSpec {
	return s.harness(BranchReproCoupon, "cart/coupon_repro_test.go", "TestCouponAppliesOnce", "8100")
}

// NegativeTotalHarness is the harness for a coupon larger than the cart:
// the reproduction test from repro/negative-total, failing on main with
// "-100". No branch fixes this bug.
func (s *Sample) NegativeTotalHarness() HarnessSpec {
	return s.harness(BranchReproNegative, "cart/negative_repro_test.go", "TestCouponNeverNegative", "-100")
}

func (s *Sample) harness(branch, file, test, expected string) HarnessSpec {
	return HarnessSpec{
		Base:            s.Base,
		TestsFrom:       s.Branches[branch],
		TestFiles:       []string{file},
		Command:         []string{"go", "test", "-json", "./..."},
		Format:          "go-test-json",
		FailToPass:      []string{test},
		PassToPass:      append([]string(nil), PassToPass...),
		ExpectedFailure: expected,
		TimeoutSeconds:  300,
		Runs:            1,
	}
}

// Build writes ShopLite into dir (created if missing; it must be empty) as
// a git repository with the branches listed in Branches, and leaves main
// checked out.
func Build(ctx context.Context, dir string) (*Sample, error) {
	return build(ctx, dir, Branches)
}

// build writes branches (main first, each parent before its children) into
// dir as Build does. A commit's date is Epoch plus an hour per position in
// branches, so main's commit is the same whichever branches follow it.
func build(ctx context.Context, dir string, branches []Branch) (*Sample, error) {
	if err := checkEmpty(dir); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	repo := &gitx.Repo{Dir: abs}
	if err := repo.Init(ctx); err != nil {
		return nil, err
	}
	s := &Sample{Dir: abs, Branches: map[string]string{}}
	for i, b := range branches {
		if b.Parent != "" {
			if err := repo.CreateBranch(ctx, b.Name, s.Branches[b.Parent]); err != nil {
				return nil, err
			}
			if err := repo.Checkout(ctx, b.Name); err != nil {
				return nil, err
			}
		}
		if err := writeOverlay(abs, b.overlay); err != nil {
			return nil, fmt.Errorf("shoplite: writing %s: %w", b.Name, err)
		}
		if err := repo.AddAll(ctx); err != nil {
			return nil, err
		}
		sig := Author
		sig.When = Epoch.Add(time.Duration(i) * time.Hour)
		id, err := repo.Commit(ctx, b.message, sig)
		if err != nil {
			return nil, fmt.Errorf("shoplite: committing %s: %w", b.Name, err)
		}
		s.Branches[b.Name] = id
	}
	s.Base = s.Branches[BranchMain]
	if err := repo.Checkout(ctx, BranchMain); err != nil {
		return nil, err
	}
	return s, nil
}

func checkEmpty(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if len(entries) > 0 {
		return fmt.Errorf("%w: %s", ErrNotEmpty, dir)
	}
	return nil
}

// overlayFiles reads _project/<overlay>: slash path to content, with
// go.mod.txt under its real name.
func overlayFiles(overlay string) (map[string][]byte, error) {
	root := path.Join("_project", overlay)
	files := map[string][]byte{}
	err := fs.WalkDir(project, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel := strings.TrimPrefix(p, root+"/")
		if path.Base(rel) == "go.mod.txt" {
			rel = path.Join(path.Dir(rel), "go.mod")
		}
		data, err := project.ReadFile(p)
		files[rel] = data
		return err
	})
	return files, err
}

// writeOverlay copies _project/<overlay> over dir.
func writeOverlay(dir, overlay string) error {
	files, err := overlayFiles(overlay)
	if err != nil {
		return err
	}
	for rel, data := range files {
		dst := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Files returns the tree Build commits on branch (main's files plus the
// overlays on the way to it): slash path to content.
func Files(branch string) (map[string][]byte, error) {
	var chain []Branch
	for name := branch; name != ""; {
		b, ok := lookup(name)
		if !ok {
			return nil, fmt.Errorf("shoplite: no branch %q", name)
		}
		chain = append([]Branch{b}, chain...)
		name = b.Parent
	}
	files := map[string][]byte{}
	for _, b := range chain {
		over, err := overlayFiles(b.overlay)
		if err != nil {
			return nil, err
		}
		for k, v := range over {
			files[k] = v
		}
	}
	return files, nil
}

func lookup(name string) (Branch, bool) {
	for _, b := range Branches {
		if b.Name == name {
			return b, true
		}
	}
	return Branch{}, false
}
