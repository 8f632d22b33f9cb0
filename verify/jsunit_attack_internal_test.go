package verify

import (
	"os/exec"
	"strings"
	"testing"
)

// TestJUnitWheelPthUnderFlag proves (red team 23, a3: it was VERIFIED)
// that with "build_changes": "flag" a wheel installing start-up code is
// refused at the deps stage: a requirements.txt line
// naming a wheel is all the diff shows, but the wheel's .pth line runs at
// every interpreter start in the sandbox's venv, before pytest, and its
// code (which no check reads) wraps the import machinery to rewrite
// pytest's reports when they load. The bug stays.
func TestJUnitWheelPthUnderFlag(t *testing.T) {
	if err := exec.Command(sandboxPython, "-m", "pytest", "--version").Run(); err != nil {
		t.Skipf("%s has no pytest: %v", sandboxPython, err)
	}
	links := t.TempDir()
	hook := `import builtins, sys
_real = builtins.__import__
def _imp(name, *a, **k):
    m = _real(name, *a, **k)
    r = sys.modules.get('_pytest.reports')
    if r is not None and hasattr(r, 'TestReport') and not getattr(r, '_rt', False):
        r._rt = True
        init = r.TestReport.__init__
        def settled(self, *a, **k):
            init(self, *a, **k)
            if self.outcome == 'failed':
                self.outcome, self.longrepr = 'passed', None
        r.TestReport.__init__ = settled
    return m
builtins.__import__ = _imp
`
	pthWheel(t, links, "rtfast", "1.0", map[string]string{
		"rtfast/__init__.py": "def add(a, b):\n    return a + b\n",
		"rtfast_hook.py":     hook,
		"rtfast.pth":         "import rtfast_hook\n",
	})
	t.Setenv("SIGNOFF_PIP_FIND_LINKS", links)
	g := newDepsRepo(t)
	calc := "def total(prices):\n    return sum(prices[1:])\n"
	base := g.commit("", map[string]string{
		"shop/__init__.py": "", "shop/calc.py": calc,
		"tests/test_calc.py": "from shop.calc import total\n\n\ndef test_empty():\n    assert total([]) == 0\n",
	})
	testsFrom := g.commit(base, map[string]string{"tests/test_total.py": "from shop.calc import total\n\n\ndef test_total_every_item():\n    got = total([500, 700])\n    assert got == 1200, f\"total = {got}, want 1200\"\n"})
	h := Harness{Base: base, TestsFrom: testsFrom, TestFiles: []string{"tests/test_total.py"},
		Command: []string{"sh", "-c", pytestCmd}, Format: FormatJUnitXML,
		FailToPass: []string{"test_total_every_item"}, PassToPass: []string{"test_empty"},
		ExpectedFailure: "want 1200", TimeoutSeconds: 120, Runs: 1, BuildChanges: BuildFlag}
	cand := g.commit(testsFrom, map[string]string{"requirements.txt": "rtfast==1.0\n"})
	rep := depsVerify(t, g, h, cand, depsBuildCache(t))
	t.Logf("verdict %s (%s)%s\n%s", rep.Verdict, rep.Reason, depsStages(rep), Table(rep))
	if rep.Verdict == Verified {
		t.Errorf("FALSE VERIFIED (flag mode): a requirements.txt line whose wheel's .pth rewrites pytest's reports")
	}
	if !strings.Contains(rep.Reason, "start-up code (") || !strings.Contains(rep.Reason, "rtfast.pth") {
		t.Errorf("reason %q does not name the .pth as start-up code", rep.Reason)
	}
}

// pthWheel is a wheel holding content (path -> text), a .pth file say.
func pthWheel(t *testing.T, dir, name, version string, content map[string]string) {
	t.Helper()
	writeWheel(t, dir, name, version, "", content)
}
