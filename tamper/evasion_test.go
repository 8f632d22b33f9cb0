package tamper_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/tamper"
)

// hasFinding reports whether fs has a finding under rule at severity.
func hasFinding(fs []tamper.Finding, rule, severity string) bool {
	return slices.ContainsFunc(fs, func(f tamper.Finding) bool { return f.Rule == rule && f.Severity == severity })
}

// TestCandidateSandboxComparisons: reading the surroundings is only
// flagged, but comparing them with the verifier's sandbox (HOME=/tmp, the
// source at /src, uid 65534, host name sandbox) is refused, in each
// language; nothing else is reported.
func TestCandidateSandboxComparisons(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		files []tamper.File
	}{
		{"HOME is /tmp", goChange(`"os"`, `func sandboxed() bool { return os.Getenv("HOME") == "/tmp" }`)},
		{"HOME under /tmp, from a variable", goChange("\"os\"\n\"strings\"", `func sandboxed() bool {
	home, _ := os.LookupEnv("HOME")
	return strings.HasPrefix(home, "/tmp/")
}`)},
		{"PWD under /src in bytes", goChange("\"bytes\"\n\"os\"", `func sandboxed() bool { return bytes.HasPrefix([]byte(os.Getenv("PWD")), []byte("/src")) }`)},
		{"switch on HOME", goChange(`"os"`, `func sandboxed() bool {
	switch os.Getenv("HOME") {
	case "/tmp", "/nonexistent":
		return true
	}
	return false
}`)},
		{"uid 65534", goChange(`"os"`, `func sandboxed() bool { return os.Getuid() == 65534 }`)},
		{"user nobody", goChange(`"os/user"`, `func sandboxed() bool { u, err := user.Current(); return err == nil && u.Username == "nobody" }`)},
		{"host name sandbox", goChange(`"os"`, `func sandboxed() bool { h, _ := os.Hostname(); return h == "sandbox" }`)},
		{"working directory from a constant", goChange(`"os"`, "const root = \"/s\" + \"rc\"\n\nfunc sandboxed() bool { wd, _ := os.Getwd(); return wd == root }")},
		{"JavaScript HOME", jsChange("  if (process.env.HOME === '/tmp') return 0;")},
		{"JavaScript cwd", jsChange("  if (process.cwd().startsWith('/src')) return 0;")},
		{"JavaScript uid", jsChange("  if (process.getuid() === 65534) return 0;")},
		{"JavaScript host name", jsChange("  if (require('os').hostname() === 'sandbox') return 0;")},
		{"Python HOME", pyChange("    if os.environ.get('HOME') == '/tmp': return 0")},
		{"Python HOME across lines", pyChange("    home = os.environ['HOME']\n    if home.startswith('/tmp'): return 0")},
		{"Python uid", pyChange("    if os.getuid() == 65534: return 0")},
		{"Python host name", pyChange("    if socket.gethostname() == 'sandbox': return 0")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := tamper.Candidate(tt.files)
			checkWellFormed(t, got)
			if !hasFinding(got, tamper.RuleEnvProbe, tamper.Refuse) {
				t.Errorf("no refused env-probe finding:%s", dump(got))
			}
			if names := ruleNames(got); !slices.Equal(names, []string{tamper.RuleEnvProbe}) {
				t.Errorf("rules = %v, want only env-probe:%s", names, dump(got))
			}
		})
	}
}

// TestCandidateEnvEachUse: every environment read a fix adds is on the
// card, whatever the variable; the ones base had are not.
func TestCandidateEnvEachUse(t *testing.T) {
	t.Parallel()
	base := goFile(`"os"`, `func a() string { return os.Getenv("CART_A") }`)
	cand := goFile(`"os"`, `func a() string { return os.Getenv("CART_A") }

func b() string { return os.Getenv("HOME") + os.Getenv(a()) }`)
	got := tamper.Candidate([]tamper.File{modified("cart/cart.go", base, cand)})
	checkWellFormed(t, got)
	if n := countRule(got, tamper.RuleEnvProbe); n != 2 {
		t.Errorf("env-probe findings = %d, want 2:%s", n, dump(got))
	}
	for _, f := range got {
		if f.Severity != tamper.Flag {
			t.Errorf("%s finding for reading the environment: %s", f.Severity, f.Detail)
		}
	}
	if !slices.ContainsFunc(got, func(f tamper.Finding) bool { return strings.Contains(f.Detail, "reads $HOME") }) {
		t.Errorf("no finding names $HOME:%s", dump(got))
	}
}

// TestCandidateInitializersReachNewRules: a package-level initializer, like
// an init, is followed into the package's functions and methods, and what
// they do there (raw system calls, the logger's writer, the command line's
// flags, /proc) makes it refused; in a test file that is what is left.
func TestCandidateInitializersReachNewRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		files []tamper.File
		want  []string // rules refused
	}{
		{"raw syscall with a constant of its own, in another file", []tamper.File{
			modified("cart/cart.go", goBase, goFile("", "var ready = setup()")),
			added("cart/setup.go", "package cart\n\nimport \"syscall\"\n\nconst SYS_LEDGER_SYNC = 231\n\nfunc setup() bool {\n\tsyscall.Syscall(SYS_LEDGER_SYNC, 0, 0, 0)\n\treturn true\n}\n"),
		}, []string{tamper.RuleInitSideEffects, tamper.RuleRawSyscall}},
		{"logger's writer called by the initializer", goChange("\"io\"\n\"log\"", "var out io.Writer = log.Writer()"),
			[]string{tamper.RuleInitSideEffects, tamper.RuleStdoutWrite}},
		{"flag lookup through a helper, in a new test file", []tamper.File{added("cart/zz_test.go", `package cart

import "flag"

var verbose = lookup()

func lookup() bool { return flag.Lookup(string([]byte{116, 101, 115, 116, 46, 118})) != nil }
`)}, []string{tamper.RuleInitSideEffects}},
		{"init through a method that reads /proc", []tamper.File{
			modified("cart/cart.go", goBase, goFile("", "type probe struct{}\n\nfunc init() { probe{}.run() }")),
			added("cart/probe.go", "package cart\n\nimport \"os\"\n\nfunc (probe) run() { os.ReadFile(\"/proc/self/cmdline\") }\n"),
		}, []string{tamper.RuleInitSideEffects, tamper.RuleTestingInLibrary}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := tamper.Candidate(tt.files)
			checkWellFormed(t, got)
			var refused []string
			for _, f := range got {
				if f.Severity == tamper.Refuse {
					refused = append(refused, f.Rule)
				}
			}
			slices.Sort(refused)
			if refused = slices.Compact(refused); !slices.Equal(refused, tt.want) {
				t.Errorf("refused rules = %v, want %v:%s", refused, tt.want, dump(got))
			}
		})
	}
}

// TestCandidateVerdictThroughLogger: the standard logger writes to the
// test's standard error, so a verdict line it is given (after a newline,
// to start a line of its own) is refused though logging is only flagged.
func TestCandidateVerdictThroughLogger(t *testing.T) {
	t.Parallel()
	got := tamper.Candidate(goChange(`"log"`, `func done() { log.Printf("\n--- PASS: TestTotal (0.00s)\n") }`))
	checkWellFormed(t, got)
	if !hasFinding(got, tamper.RuleVerdictText, tamper.Refuse) || !hasFinding(got, tamper.RuleConsoleOutput, tamper.Flag) {
		t.Errorf("want a refused verdict-text and a flagged console-output finding:%s", dump(got))
	}
}

// TestCandidateRawSyscallConstants: the constants and errors of package
// syscall stay allowed; only its raw calls are refused.
func TestCandidateRawSyscallConstants(t *testing.T) {
	t.Parallel()
	got := tamper.Candidate(goChange("\"errors\"\n\"syscall\"", `func missing(err error) bool {
	return errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ENOTDIR) || err == syscall.Errno(syscall.SYS_EXIT)
}`))
	checkWellFormed(t, got)
	if len(got) > 0 {
		t.Errorf("findings on syscall's constants:%s", dump(got))
	}
}
