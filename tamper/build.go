package tamper

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
)

// buildChanges reports changes to which tests run or how they build: module
// and workspace files, vendored code, build constraints, removed Go files,
// and JavaScript and Python test configuration.
func buildChanges(files []File) []Finding {
	var out []Finding
	modChanged := map[string]bool{}
	for _, f := range files {
		if p := cleanPath(f.Path); path.Base(p) == "go.mod" && changed(f) {
			modChanged[path.Dir(p)] = true
		}
	}
	// Vendored and installed trees are reported once per tree, not per file.
	trees := map[string][]string{}
	var roots []string
	for _, f := range files {
		if !changed(f) {
			continue
		}
		p := cleanPath(f.Path)
		name := path.Base(p)
		if strings.EqualFold(name, ".gitattributes") {
			// Anywhere, vendored or not: attributes apply to the tree below.
			out = append(out, finding(RuleGitAttributes, BuildChange, f.Path, 0, fileVerb(f)+": its filters, encodings and line endings decide what the frozen tests and their data are when they are checked out"))
			continue
		}
		if root, ok := treeRoot(p); ok {
			if trees[root] == nil {
				roots = append(roots, root)
			}
			trees[root] = append(trees[root], p)
			continue
		}
		switch {
		case name == "go.mod":
			out = append(out, goModChanges(f)...)
		case name == "go.sum":
			if !modChanged[path.Dir(p)] {
				out = append(out, finding(RuleGoSum, BuildChange, f.Path, 0, fileVerb(f)+" while its go.mod does not: the checksums the tests' dependencies are verified against change"))
			}
		case name == "go.work" || name == "go.work.sum":
			out = append(out, finding(RuleGoWork, BuildChange, f.Path, 0, fileVerb(f)+": a workspace changes which modules and versions the tests build against"))
		case name == "package.json":
			out = append(out, packageJSONChanges(f)...)
		case jsConfigRe.MatchString(name):
			out = append(out, finding(RuleJSPackage, BuildChange, f.Path, 0, fileVerb(f)+": it configures how the JavaScript tests build or run"))
		case slices.Contains(jsLockfiles, name):
			out = append(out, finding(RuleJSPackage, BuildChange, f.Path, 0, fileVerb(f)+": the installed JavaScript dependencies change"))
		case isPyLock(p):
			out = append(out, finding(RulePyConfig, BuildChange, f.Path, 0, fileVerb(f)+": the installed Python dependencies change"))
		case isPyConfig(name):
			out = append(out, pyConfigChanges(f, name)...)
		}
		if isPackedPackage(p) && f.CandExists && !hasDir(p, "testdata") {
			// A file: dependency or a pip requirement can install it; its
			// contents are an archive's, which no check reads.
			out = append(out, finding(RulePackedPackage, BuildChange, f.Path, 0, fileVerb(f)+": a packed package: what it installs cannot be read from the diff"))
		}
		if strings.HasSuffix(p, ".go") && !hasDir(p, "testdata") {
			if f.CandExists {
				out = append(out, constraintChanges(f)...)
			} else if f.BaseExists {
				msg := "removes a Go file: worth a look in a fix"
				if isGoTest(p) {
					msg = "removes a test file: its tests no longer run"
				}
				out = append(out, finding(RuleFileRemoved, Flag, f.Path, 0, msg))
			}
		}
	}
	for _, root := range roots {
		ps := trees[root]
		shown := ps[:min(len(ps), 3)]
		more := ""
		if len(ps) > len(shown) {
			more = fmt.Sprintf(" and %d more", len(ps)-len(shown))
		}
		if path.Base(root) == "vendor" {
			out = append(out, finding(RuleVendor, BuildChange, root, 0, fmt.Sprintf("has %d changed files (%s%s): vendored code builds into the tests like the module's own", len(ps), strings.Join(shown, ", "), more)))
		} else {
			out = append(out, finding(RuleJSPackage, BuildChange, root, 0, fmt.Sprintf("has %d changed files (%s%s): installed packages build into the JavaScript tests", len(ps), strings.Join(shown, ", "), more)))
		}
	}
	return out
}

// treeRoot returns the vendor/ or node_modules/ directory a path is in.
func treeRoot(p string) (string, bool) {
	parts := strings.Split(p, "/")
	for i, part := range parts[:len(parts)-1] {
		if part == "vendor" || part == "node_modules" {
			return strings.Join(parts[:i+1], "/"), true
		}
	}
	return "", false
}

// fileVerb says what happened to a file as a whole.
func fileVerb(f File) string {
	switch {
	case !f.BaseExists:
		return "is added"
	case !f.CandExists:
		return "is removed"
	}
	return "changes"
}

// modLine is one go.mod directive: require path version, replace old => new.
type modLine struct {
	verb, key, value string
	line             int
}

func (m modLine) String() string {
	switch {
	case m.verb == "replace":
		return "replace " + m.key + " => " + m.value
	case m.verb == "godebug":
		return "godebug " + m.key + "=" + m.value
	case m.key == "":
		return m.verb + " " + m.value
	case m.value == "":
		return m.verb + " " + m.key
	}
	return m.verb + " " + m.key + " " + m.value
}

// goModChanges lists what a go.mod change does, one finding per directive.
func goModChanges(f File) []Finding {
	switch {
	case !f.BaseExists:
		return []Finding{finding(RuleGoMod, BuildChange, f.Path, 0, "is added: its directory becomes a separate module, so the enclosing module's go test ./... no longer runs the packages under it")}
	case !f.CandExists:
		return []Finding{finding(RuleGoMod, BuildChange, f.Path, 0, "is removed: its packages join the enclosing module and build against its requirements")}
	}
	const why = ": it changes what the tests build against"
	base, cand := parseGoMod(f.Base), parseGoMod(f.Cand)
	old := map[string]modLine{}
	for _, m := range base {
		old[m.verb+"\x00"+m.key] = m
	}
	now := map[string]bool{}
	var out []Finding
	for _, m := range cand {
		k := m.verb + "\x00" + m.key
		now[k] = true
		switch b, ok := old[k]; {
		case !ok:
			out = append(out, finding(RuleGoMod, BuildChange, f.Path, m.line, "adds "+m.String()+why))
		case b.value != m.value:
			out = append(out, finding(RuleGoMod, BuildChange, f.Path, m.line, "changes "+b.String()+" to "+m.String()+why))
		}
	}
	for _, m := range base {
		if k := m.verb + "\x00" + m.key; !now[k] {
			now[k] = true // report a duplicated directive once
			out = append(out, finding(RuleGoMod, BuildChange, f.Path, 0, "removes "+m.String()+why))
		}
	}
	if len(out) == 0 {
		// Reported all the same: the reading above is tolerant, not exact.
		out = append(out, finding(RuleGoMod, BuildChange, f.Path, 0, "changes, though only in comments or layout as far as a line-by-line reading tells"))
	}
	return out
}

// parseGoMod reads go.mod's line and block syntax tolerantly: comments
// are dropped, unknown directives kept whole, malformed lines skipped.
func parseGoMod(src []byte) []modLine {
	var out []modLine
	block := ""
	for i, raw := range strings.Split(string(src), "\n") {
		toks := modTokens(raw)
		if len(toks) == 0 {
			continue
		}
		var verb string
		var args []string
		switch {
		case block != "" && toks[0] == ")":
			block = ""
			continue
		case block != "":
			verb, args = block, toks
		case len(toks) >= 2 && toks[1] == "(":
			if toks[len(toks)-1] != ")" {
				block = toks[0]
			}
			continue
		default:
			verb, args = toks[0], toks[1:]
		}
		m := modLine{verb: verb, line: i + 1}
		switch verb {
		case "module", "go", "toolchain":
			m.value = strings.Join(args, " ")
		case "require":
			if len(args) == 0 {
				continue
			}
			m.key, m.value = args[0], strings.Join(args[1:], " ")
		case "replace":
			l, r, _ := strings.Cut(strings.Join(args, " "), "=>")
			m.key, m.value = strings.TrimSpace(l), strings.TrimSpace(r)
		case "godebug":
			m.key, m.value, _ = strings.Cut(strings.Join(args, ""), "=")
		default: // exclude, retract, tool, ignore and anything newer
			m.key = strings.Join(args, " ")
		}
		out = append(out, m)
	}
	return out
}

// modTokens splits a go.mod line into tokens, dropping a // comment and
// keeping quoted strings whole (unquoted).
func modTokens(line string) []string {
	var toks []string
	for i := 0; i < len(line); {
		c := line[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case strings.HasPrefix(line[i:], "//"):
			return toks
		case c == '"' || c == '`':
			j := i + 1
			for j < len(line) && line[j] != c {
				if c == '"' && line[j] == '\\' {
					j++
				}
				j++
			}
			toks = append(toks, line[i+1:min(j, len(line))])
			i = j + 1
		case c == '(' || c == ')':
			toks = append(toks, string(c))
			i++
		default:
			j := i
			for j < len(line) && !strings.ContainsRune(" \t\r()\"`", rune(line[j])) && !strings.HasPrefix(line[j:], "//") {
				j++
			}
			toks = append(toks, line[i:j])
			i = j
		}
	}
	return toks
}

var plusBuildRe = regexp.MustCompile(`^//\s*\+build\b`)

// constraints returns a Go file's build constraint lines (//go:build and
// // +build before the package clause), whitespace-normalized, and the
// line of the first.
func constraints(src []byte) (string, int) {
	var found []string
	first := 0
	for i, raw := range bytes.Split(src, []byte("\n")) {
		l := string(bytes.TrimSpace(raw))
		if l == "package" || strings.HasPrefix(l, "package ") || strings.HasPrefix(l, "package\t") {
			break
		}
		if strings.HasPrefix(l, "//go:build") || plusBuildRe.MatchString(l) {
			found = append(found, strings.Join(strings.Fields(l), " "))
			if first == 0 {
				first = i + 1
			}
		}
	}
	return strings.Join(found, "; "), first
}

// constraintChanges reports a Go file whose build constraint is new,
// changed or gone. A platform file-name suffix alone is not reported: it
// is how platform code is normally added.
func constraintChanges(f File) []Finding {
	var base string
	if f.BaseExists {
		base, _ = constraints(f.Base)
	}
	cand, line := constraints(f.Cand)
	if base == cand {
		return nil
	}
	var msg string
	switch {
	case cand == "":
		msg = fmt.Sprintf("removes its build constraint (%s): the file now builds everywhere", base)
	case base == "":
		msg = fmt.Sprintf("adds a build constraint (%s): the file builds only where it holds", cand)
	default:
		msg = fmt.Sprintf("changes its build constraint from (%s) to (%s): where the file builds changes", base, cand)
	}
	if strings.Contains(cand, "ignore") {
		msg += "; with ignore it never builds"
	}
	return []Finding{finding(RuleBuildConstraint, BuildChange, f.Path, line, msg)}
}

var (
	// packageKeys are the package.json keys that change how tests run,
	// how modules resolve, or what is installed.
	packageKeys = []string{
		"scripts", "jest", "mocha", "ava", "vitest", "c8", "nyc", "type", "main", "exports", "imports",
		"workspaces", "overrides", "resolutions", "pnpm", "dependencies", "devDependencies",
		"peerDependencies", "optionalDependencies", "bundleDependencies", "bundledDependencies",
	}
	jsConfigRe  = regexp.MustCompile(`^((jest|vitest|vite|babel|ava|playwright|cypress|webpack|rollup)\.config|vitest\.workspace|karma\.conf|\.mocharc|\.babelrc|\.nycrc|\.c8rc|\.swcrc)(\..*)?$|^(tsconfig|jsconfig)([.-].*)?\.json$|^\.npmrc$|^\.yarnrc(\.yml)?$|^\.pnpmfile\.cjs$|^pnpm-workspace\.yaml$`)
	jsLockfiles = []string{"package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml", "bun.lock", "bun.lockb"}
)

// packageJSONChanges compares the keys of package.json that matter to a
// test run; a change to anything else (version, description) is not one.
func packageJSONChanges(f File) []Finding {
	if !f.CandExists {
		return []Finding{finding(RuleJSPackage, BuildChange, f.Path, 0, "is removed: the JavaScript tests lose their scripts and dependencies")}
	}
	var base, cand map[string]json.RawMessage
	if f.BaseExists {
		_ = json.Unmarshal(f.Base, &base) // a base that does not parse counts as empty
	}
	if err := json.Unmarshal(f.Cand, &cand); err != nil {
		return []Finding{finding(RuleJSPackage, BuildChange, f.Path, 0, "does not parse as JSON: what npm makes of it cannot be judged")}
	}
	var out []Finding
	for _, key := range packageKeys {
		b, c := canonicalJSON(base[key]), canonicalJSON(cand[key])
		if b == c {
			continue
		}
		what := "changes"
		switch {
		case b == "":
			what = "adds"
		case c == "":
			what = "removes"
		}
		sub := ""
		if names := changedMembers(base[key], cand[key]); len(names) > 0 {
			if len(names) > 5 {
				names = append(names[:5], fmt.Sprintf("%d more", len(names)-5))
			}
			sub = " (" + strings.Join(names, ", ") + ")"
		}
		out = append(out, finding(RuleJSPackage, BuildChange, f.Path, jsonKeyLine(f.Cand, key),
			fmt.Sprintf("%s %q%s: it changes how the JavaScript tests run or what they build against", what, key, sub)))
	}
	return out
}

// canonicalJSON re-encodes a value with sorted keys, "" when absent.
func canonicalJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// changedMembers lists the members that differ between two JSON objects,
// or nothing when either side is not an object.
func changedMembers(a, b json.RawMessage) []string {
	var ma, mb map[string]json.RawMessage
	if len(a) > 0 && json.Unmarshal(a, &ma) != nil || len(b) > 0 && json.Unmarshal(b, &mb) != nil {
		return nil
	}
	if ma == nil && mb == nil {
		return nil
	}
	var names []string
	for k := range ma {
		if canonicalJSON(ma[k]) != canonicalJSON(mb[k]) {
			names = append(names, k)
		}
	}
	for k := range mb {
		if _, ok := ma[k]; !ok {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	return names
}

// jsonKeyLine finds the line a top-level key most likely sits on.
func jsonKeyLine(src []byte, key string) int {
	q, _ := json.Marshal(key)
	for i, l := range bytes.Split(src, []byte("\n")) {
		if rest, ok := bytes.CutPrefix(bytes.TrimSpace(l), q); ok && bytes.HasPrefix(bytes.TrimSpace(rest), []byte(":")) {
			return i + 1
		}
	}
	return 0
}

var pyConfigs = []string{
	"pytest.ini", "pytest.toml", "tox.ini", "setup.cfg", "pyproject.toml", "setup.py", "noxfile.py",
	"conftest.py", "sitecustomize.py", "usercustomize.py",
}

// pyLockRe names the files that say which Python packages are installed
// (the verifier's deps stage installs a root requirements.txt).
var pyLockRe = regexp.MustCompile(`^(requirements[^/]*\.(txt|in)|constraints[^/]*\.txt|Pipfile|Pipfile\.lock|poetry\.lock|uv\.lock|pdm\.lock)$`)

func isPyLock(p string) bool {
	return pyLockRe.MatchString(path.Base(p)) || (path.Ext(p) == ".txt" && hasDir(p, "requirements"))
}

func isPyConfig(name string) bool {
	return slices.Contains(pyConfigs, name) || path.Ext(name) == ".pth"
}

// pyConfigChanges reports a Python config change; for the ini and toml
// files it names the sections that changed.
func pyConfigChanges(f File, name string) []Finding {
	var why string
	switch {
	case name == "conftest.py":
		why = "pytest runs it before the tests it governs, and it can change or skip them"
	case name == "sitecustomize.py" || name == "usercustomize.py" || path.Ext(name) == ".pth":
		why = "Python runs it at interpreter start-up, before any test"
	case name == "setup.py" || name == "noxfile.py":
		why = "it changes how the Python package builds or its tests run"
	}
	if why != "" || !f.BaseExists || !f.CandExists {
		if why == "" {
			why = "it configures how the Python tests run or build"
		}
		return []Finding{finding(RulePyConfig, BuildChange, f.Path, 0, fileVerb(f)+": "+why)}
	}
	base, _ := iniSections(f.Base)
	cand, lines := iniSections(f.Cand)
	var names []string
	for s, c := range cand {
		if base[s] != c {
			names = append(names, s)
		}
	}
	for s := range base {
		if _, ok := cand[s]; !ok {
			names = append(names, s)
		}
	}
	if len(names) == 0 {
		// Reported all the same: a "#" line may sit inside a string.
		return []Finding{finding(RulePyConfig, BuildChange, f.Path, 0, "changes, though only in comments or layout as far as a line-by-line reading tells: it configures how the Python tests run or build")}
	}
	slices.SortFunc(names, func(a, b string) int {
		// pytest's own sections first: they are what the reader needs.
		if pa, pb := strings.Contains(a, "pytest"), strings.Contains(b, "pytest"); pa != pb {
			if pa {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	line := lines[names[0]]
	shown := make([]string, len(names))
	for i, s := range names {
		switch {
		case s == "":
			shown[i] = "the top level"
		case strings.Contains(s, "pytest"):
			shown[i] = "[" + s + "] (the pytest configuration)"
		default:
			shown[i] = "[" + s + "]"
		}
	}
	return []Finding{finding(RulePyConfig, BuildChange, f.Path, line,
		"changes "+strings.Join(shown, ", ")+": it configures how the Python tests run or build")}
}

var sectionRe = regexp.MustCompile(`^\[\[?\s*([^\]]+?)\s*\]\]?\s*([#;].*)?$`)

// iniSections maps each [section] of an ini or toml file to its content,
// comments and blank lines dropped, and to its header line.
func iniSections(src []byte) (map[string]string, map[string]int) {
	bodies, lines := map[string]*strings.Builder{}, map[string]int{}
	body := func(section string) *strings.Builder {
		if bodies[section] == nil {
			bodies[section] = &strings.Builder{}
		}
		return bodies[section]
	}
	section := ""
	for i, raw := range strings.Split(string(src), "\n") {
		l := strings.TrimSpace(raw)
		if l == "" || l[0] == '#' || l[0] == ';' {
			continue
		}
		if m := sectionRe.FindStringSubmatch(l); m != nil {
			section = m[1]
			if _, ok := lines[section]; !ok {
				lines[section] = i + 1
			}
			body(section).WriteByte(0)
			continue
		}
		body(section).WriteString(l + "\n")
	}
	content := make(map[string]string, len(bodies))
	for s, b := range bodies {
		content[s] = b.String()
	}
	return content, lines
}

// isPackedPackage: an archive a package manager installs from a path.
func isPackedPackage(p string) bool {
	return strings.HasSuffix(p, ".tgz") || strings.HasSuffix(p, ".tar.gz") || strings.HasSuffix(p, ".whl")
}
