package verify

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/signoff-dev/signoff/sandbox"
)

// Python dependencies: a requirements.txt at the root gets a virtual
// environment of its own (with the system's site-packages, so Debian's
// pytest stays visible), made with the python3 the sandbox runs and
// filled by `pip install --no-deps --only-binary=:all:`. Wheels only, so no
// setup.py of anyone's runs on the host; and no dependency resolution,
// because pip builds a source package that a wheel's Requires-Dist names
// by URL whatever --only-binary says. So requirements.txt is a lock: every
// line `name==version` (extras, markers and --hash allowed), the whole
// list (pip freeze, pip-compile), and what is installed is exactly what it
// names. Options that change where pip fetches from (--index-url,
// --extra-index-url, --find-links, --trusted-host), editables, URLs,
// paths, nested files and ranges are refused; the index is the host's pip
// configuration, or the folder SIGNOFF_PIP_FIND_LINKS names (with
// --no-index). The venv is mounted read-only at the same path in the
// sandbox (a venv records its own path), its bin first on PATH.

// pipIndexEnv are the host's pip settings the fetch is given.
var pipIndexEnv = []string{"PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_CONFIG_FILE", "PIP_CERT", "PIP_TRUSTED_HOST"}

// sandboxPython is the interpreter the runs see (/usr is the sandbox's).
const sandboxPython = "/usr/bin/python3"

// requirementLine is one pinned requirement: a name, extras, == and one
// version (no wildcard), markers, hashes.
var requirementLine = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*(\[[A-Za-z0-9._, -]*\])?\s*==\s*[A-Za-z0-9.+!_-]+\s*(;[A-Za-z0-9_.'"<>=!~ ()-]*)?(\s+--hash=sha(256|384|512):[0-9a-f]+)*$`)

// requirements checks requirements.txt and returns its requirement lines.
func requirements(b []byte) ([]string, error) {
	text := strings.ReplaceAll(string(b), "\\\r\n", " ")
	text = strings.ReplaceAll(text, "\\\n", " ")
	var reqs []string
	for i, l := range strings.Split(text, "\n") {
		if c := strings.Index(l, " #"); c >= 0 {
			l = l[:c]
		}
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		// pip reads a word starting with "-" as an option wherever it
		// is on the line: only --hash is let through.
		optionWord := false
		for _, w := range strings.Fields(l) {
			if strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "--hash=") {
				optionWord = true
			}
		}
		if optionWord || !requirementLine.MatchString(l) {
			return nil, refuse("requirements.txt line %d %q is not a pinned requirement (name==version: requirements.txt is installed as a lock, without dependency resolution; options, editables, URLs, paths and ranges are not fetched)", i+1, firstN64(l))
		}
		reqs = append(reqs, l)
	}
	return reqs, nil
}

func firstN64(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// pythonDeps plans the python dependencies of the checkout dir: nil when
// it has no requirements.txt or it requires nothing.
func pythonDeps(dir string) (*depItem, error) {
	b, ok, err := readSmall(dir, "requirements.txt")
	if err != nil || !ok {
		return nil, err
	}
	reqs, err := requirements(b)
	if err != nil {
		return nil, err
	}
	if len(reqs) == 0 {
		return nil, nil
	}
	links := os.Getenv("SIGNOFF_PIP_FIND_LINKS")
	// What else decides what pip installs is in the key too: the host's
	// index settings and the wheels of the find-links folder (names,
	// sizes, times), so an entry is not reused for another source.
	// "startup-checked": entries made before startupCode ran are not
	// reused.
	parts := [][]byte{[]byte("python"), []byte("startup-checked"), []byte(sandboxPython), []byte(links), []byte(strings.Join(reqs, "\n"))}
	for _, e := range hostEnv(pipIndexEnv...) {
		parts = append(parts, []byte(e))
	}
	if links != "" {
		des, err := os.ReadDir(links)
		if err != nil {
			return nil, refuse("SIGNOFF_PIP_FIND_LINKS: %v", err)
		}
		for _, de := range des {
			fi, err := de.Info()
			if err != nil {
				return nil, refuse("SIGNOFF_PIP_FIND_LINKS: %v", err)
			}
			parts = append(parts, []byte(fmt.Sprintf("%s %d %d", de.Name(), fi.Size(), fi.ModTime().UnixNano())))
		}
	}
	it := &depItem{kind: "python", key: digest(parts...)}
	it.fetch = func(ctx context.Context, entry string) (string, error) {
		return fetchPython(ctx, entry, dir, reqs, links)
	}
	it.apply = func(entry string, s *sandbox.Spec) error {
		venv := filepath.Join(entry, "venv")
		s.ReadOnly = append(s.ReadOnly, sandbox.Mount{Host: venv, Target: venv})
		s.Env["PATH"] = filepath.Join(venv, "bin") + ":" + s.Env["PATH"]
		s.Env["VIRTUAL_ENV"] = venv
		return nil
	}
	return it, nil
}

// fetchPython makes the venv at entry/venv (its final path: a venv
// records it) and installs the requirements into it.
func fetchPython(ctx context.Context, entry, dir string, reqs []string, links string) (string, error) {
	venv := filepath.Join(entry, "venv")
	work := filepath.Join(entry, "work")
	defer removeAll(work)
	if err := os.MkdirAll(work, 0o700); err != nil {
		return "", err
	}
	req := filepath.Join(work, "requirements.txt")
	if err := os.WriteFile(req, []byte(strings.Join(reqs, "\n")+"\n"), 0o600); err != nil {
		return "", err
	}
	env := append([]string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + os.Getenv("HOME"), "PIP_DISABLE_PIP_VERSION_CHECK=1", "PYTHONDONTWRITEBYTECODE=1"},
		hostEnv(slices.Concat(pipIndexEnv, proxyEnv)...)...)
	hint := "python3 -m venv --system-site-packages " + venv + " && " + venv + "/bin/python3 -m pip install --no-deps --only-binary=:all: -r requirements.txt, in the repository"
	// --without-pip: the system's pip (visible through the system
	// site-packages) installs into the venv, which saves copying one.
	if _, err := tool(ctx, work, env, hint, sandboxPython, "-m", "venv", "--system-site-packages", "--without-pip", venv); err != nil {
		return "", err
	}
	args := []string{"-m", "pip", "install", "--no-input", "--no-deps", "--only-binary=:all:", "--no-cache-dir", "--progress-bar", "off", "-r", req}
	if links != "" {
		args = append(args, "--no-index", "--find-links", links)
	}
	before := venvFiles(venv)
	if _, err := tool(ctx, work, env, hint, filepath.Join(venv, "bin", "python3"), args...); err != nil {
		return "", err
	}
	if err := startupCode(venv, before); err != nil {
		return "", err
	}
	n, total := treeSize(venv)
	return fmt.Sprintf("pip install of %d requirement(s), venv of %d files, %s", len(reqs), n, size(total)), nil
}

// venvFiles lists the files under venv, relative to it.
func venvFiles(venv string) map[string]bool {
	files := map[string]bool{}
	filepath.WalkDir(venv, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if rel, err := filepath.Rel(venv, p); err == nil {
				files[filepath.ToSlash(rel)] = true
			}
		}
		return nil
	})
	return files
}

// consoleScript is a name = target line of an entry_points.txt section.
var consoleScript = regexp.MustCompile(`^\s*([^=\s]+)\s*=`)

// startupCode refuses an install that added code the interpreter runs
// at start-up, before any test: a .pth file or a sitecustomize or
// usercustomize module in site-packages (what python3 -m venv made is in
// before), or a wheel's data scripts (a file in bin that no package's
// console_scripts or gui_scripts entry point names). None of it is in the
// diff, which shows one requirements.txt line.
func startupCode(venv string, before map[string]bool) error {
	after := venvFiles(venv)
	scripts := map[string]bool{}
	var added []string
	for rel := range after {
		if before[rel] {
			continue
		}
		added = append(added, rel)
		if strings.HasSuffix(rel, ".dist-info/entry_points.txt") {
			b, err := os.ReadFile(filepath.Join(venv, filepath.FromSlash(rel)))
			if err != nil {
				continue
			}
			section := ""
			for _, l := range strings.Split(string(b), "\n") {
				l = strings.TrimSpace(l)
				if strings.HasPrefix(l, "[") {
					section = l
				} else if m := consoleScript.FindStringSubmatch(l); m != nil && (section == "[console_scripts]" || section == "[gui_scripts]") {
					scripts[m[1]] = true
				}
			}
		}
	}
	slices.Sort(added)
	for _, rel := range added {
		name := filepath.Base(rel)
		inLib := strings.HasPrefix(rel, "lib/") || strings.HasPrefix(rel, "lib64/")
		switch {
		case inLib && (strings.HasSuffix(name, ".pth") || name == "sitecustomize.py" || name == "usercustomize.py" ||
			strings.Contains(rel, "/sitecustomize/") || strings.Contains(rel, "/usercustomize/")):
			return refuse("a package installs start-up code (%s): it would run before the tests", rel)
		case strings.Contains(rel, ".data/scripts/"):
			return refuse("a package installs start-up code (%s): it would run before the tests", rel)
		case strings.HasPrefix(rel, "bin/") && !scripts[name]:
			return refuse("a package installs start-up code (%s, a script no entry point names, from the wheel's .data/scripts): it would run before the tests", rel)
		}
	}
	return nil
}
