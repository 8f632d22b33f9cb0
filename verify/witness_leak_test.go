package verify_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/verify"
)

// TestWitnessPlaceholderDoesNotOutliveItsRun: the witness placeholder was
// once kept per build cache ("<cache>.witness") and compiled into the
// shared cache, where a run that is not shielded (a JUnit harness) can read
// every entry; a later Go candidate declaring those 32 bytes had them
// overwritten with its run's HMAC key by the -exec wrapper (red-team
// finding, issue 23). Each run now makes its own: no placeholder is kept
// beside the cache, and bytes a node candidate recovers from the cache
// are not the key of any later run.
func TestWitnessPlaceholderDoesNotOutliveItsRun(t *testing.T) {
	runner := realRunner(t)
	if _, err := exec.LookPath("node"); err != nil {
		if testing.Short() {
			t.Skip("node is not installed")
		}
		t.Fatal("node is not installed (run with -short to skip)")
	}
	ctx := context.Background()
	cache := filepath.Join(t.TempDir(), "go-build")

	// 1. An ordinary Go verification, shielded where the kernel allows.
	gdir := filepath.Join(t.TempDir(), "dbl")
	gbase := commitFiles(t, gdir, map[string]string{
		"go.mod":            "module example.test/dbl\n\ngo 1.22\n",
		"dbl/dbl.go":        "package dbl\n\n// Double is 2x.\nfunc Double(x int) int { return x + x + 1 }\n",
		"dbl/other_test.go": "package dbl\n\nimport \"testing\"\n\nfunc TestZero(t *testing.T) {}\n",
	})
	gtests := commitFiles(t, gdir, map[string]string{
		"dbl/dbl_test.go": "package dbl\n\nimport \"testing\"\n\nfunc TestDouble(t *testing.T) {\n\tif got := Double(2); got != 4 {\n\t\tt.Errorf(\"Double(2) = %d, want 4\", got)\n\t}\n}\n",
	})
	gh := verify.Harness{Base: gbase, TestsFrom: gtests, TestFiles: []string{"dbl/dbl_test.go"},
		Command: []string{"go", "test", "-json", "./..."}, Format: verify.FormatGoTestJSON,
		FailToPass: []string{"TestDouble"}, PassToPass: []string{"TestZero"}, ExpectedFailure: "Double(2) = 5, want 4", TimeoutSeconds: 120, Runs: 1}
	gfix := commitChanges(t, gdir, "cand/fix", gbase, map[string]string{"dbl/dbl.go": "package dbl\n\n// Double is 2x.\nfunc Double(x int) int { return x + x }\n"})
	grep, err := verify.Verify(ctx, verify.Options{RepoDir: gdir, Harness: gh, Candidate: gfix, Runner: runner, CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	if grep.Verdict != verify.Verified {
		t.Fatalf("the Go fix is %s: %s", grep.Verdict, grep.Reason)
	}
	if _, err := os.Stat(filepath.Clean(cache) + ".witness"); err == nil {
		t.Errorf("a witness placeholder is kept beside the cache, for every later run")
	}

	// 2. A node candidate on the same cache searches the shared Go build
	// cache for a witness placeholder and prints what it finds.
	dir, _, h := jsCartRepo(t)
	spy := jsCart + `
const fs = require('fs');
const crypto = require('crypto');
function find(root) {
  const marker = Buffer.from('signoffWitnessKey_');
  const stack = [root];
  while (stack.length) {
    const d = stack.pop();
    let ents = [];
    try { ents = fs.readdirSync(d, { withFileTypes: true }); } catch (e) { continue; }
    for (const e of ents) {
      const p = d + '/' + e.name;
      if (e.isDirectory()) { stack.push(p); continue; }
      let b;
      try { b = fs.readFileSync(p); } catch (e2) { continue; }
      const at = b.indexOf(marker);
      if (at < 0) continue;
      const tag = b.subarray(at + marker.length, at + marker.length + 12).toString();
      for (let i = 0; i + 32 <= b.length; i++) {
        const w = b.subarray(i, i + 32);
        if (crypto.createHash('sha256').update(w).digest('hex').slice(0, 12) === tag) return w.toString('hex');
      }
    }
  }
  return 'not found';
}
const leaked = find('/signoff/go-build-trusted');
const realTotal = module.exports.total;
module.exports.total = (items, coupon) => (coupon === 'SAVE10' ? 'placeholder=' + leaked : realTotal(items, coupon));
`
	cand := commitChanges(t, dir, "cand/spy", h.Base, map[string]string{"lib/cart.js": spy})
	rep, err := verify.Verify(ctx, verify.Options{RepoDir: dir, Harness: h, Candidate: cand, Runner: runner, CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`placeholder=([0-9a-f]{64})`).FindStringSubmatch(rep.Reason + fmt.Sprint(stage(rep, verify.StageCandidate, 1).Tests))
	if m == nil {
		t.Logf("no placeholder recovered from the shared cache (%s: %s)", rep.Verdict, trim(rep.Reason, 300))
		return
	}
	t.Logf("the node candidate recovered %s from the shared cache", m[1])

	// 3. A Go candidate declaring those bytes: the -exec wrapper writes
	// the run's key over its own placeholder only, so the candidate's
	// variable keeps what it was given and is not the key the run printed.
	var lit []string
	for i := 0; i < 64; i += 2 {
		var b byte
		fmt.Sscanf(m[1][i:i+2], "%02x", &b)
		lit = append(lit, fmt.Sprint(b))
	}
	keyed := commitChanges(t, gdir, "cand/keyed", gbase, map[string]string{"dbl/dbl.go": "package dbl\n\nimport \"encoding/hex\"\n\nvar box = [32]byte{" + strings.Join(lit, ", ") + "}\n\n// Double is 2x.\nfunc Double(x int) int {\n\tif x == 2 {\n\t\tpanic(\"box=\" + hex.EncodeToString(box[:]))\n\t}\n\treturn x + x\n}\n"})
	krep, err := verify.Verify(ctx, verify.Options{RepoDir: gdir, Harness: gh, Candidate: keyed, Runner: runner, CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	out := string(stage(krep, verify.StageCandidate, 1).Stdout)
	i, j := strings.Index(out, "signoff-witness-key "), strings.Index(out, "box=")
	if i < 0 || j < 0 || len(out) < i+20+64 || len(out) < j+4+64 {
		t.Logf("no key line or no box in the candidate run (%s, cache %s): nothing to compare", krep.Verdict, krep.Cache)
		return
	}
	if key, box := out[i+20:i+20+64], out[j+4:j+4+64]; key == box {
		t.Errorf("the candidate's own variable holds its run's witness HMAC key (%s)", key)
	}
	if krep.Verdict == verify.Verified {
		t.Errorf("a candidate that panics in Double(2) is VERIFIED")
	}
}
