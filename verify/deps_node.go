package verify

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/signoff-dev/signoff/canonical"
	"github.com/signoff-dev/signoff/sandbox"
)

// Node dependencies: a package.json with dependencies and a lock file
// (package-lock.json or npm-shrinkwrap.json, lockfileVersion 2 or 3)
// gets `npm ci --ignore-scripts` in a folder holding only those two files
// and the tarballs of its file: dependencies (never the repository's code
// or its .npmrc), with the host user's npm configuration and its registry
// set explicitly; the node_modules it makes is mounted read-only at
// /src/node_modules. Before anything is fetched, both files are read with
// exact keys (a key npm would not read, in another case or twice, is
// refused), every lock entry must have a resolved URL on that registry
// or a file: tarball inside the repository and an integrity, every
// install path must be a node_modules path, and every dependency spec a
// registry range, an npm: alias of one or (the project's own) a file:
// tarball inside the repository: npm fetches an entry it has no resolved
// URL for, or one a spec does not match, from wherever the spec points,
// so a hostile lock file or manifest could otherwise make the host clone
// or fetch from anywhere. The key holds the SHA-256 of every file:
// tarball.

// npmHost is what the host's npm is: its registry and user config (asked
// from an empty folder, so no project's .npmrc is read), and the npm and
// node versions, which decide what an install holds (the optional
// packages of a platform, the layout) and so are in the key. Only a
// success is kept: a failure (a cancelled context, say) is asked again.
type npmHost struct {
	registry, userconfig, versions string
}

var (
	npmMu   sync.Mutex
	npmSeen *npmHost
)

// npmConfig asks the host's npm for its registry and user config.
func npmConfig() (registry, userconfig string, err error) {
	h, err := npmHostConfig(context.Background())
	if err != nil {
		return "", "", err
	}
	return h.registry, h.userconfig, nil
}

func npmHostConfig(ctx context.Context) (npmHost, error) {
	npmMu.Lock()
	defer npmMu.Unlock()
	if npmSeen != nil {
		return *npmSeen, nil
	}
	tmp, err := os.MkdirTemp("", "signoff-npm-")
	if err != nil {
		return npmHost{}, fmt.Errorf("npm config: %w", err)
	}
	defer os.RemoveAll(tmp)
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	get := func(name string, args ...string) string {
		if err != nil {
			return ""
		}
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir = tmp
		var out []byte
		out, err = cmd.Output()
		if err != nil {
			err = fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out))
	}
	h := npmHost{registry: get("npm", "config", "get", "registry"), userconfig: get("npm", "config", "get", "userconfig")}
	h.versions = get("npm", "--version") + " " + get("node", "-p", "process.version + ' ' + process.platform + ' ' + process.arch")
	if err != nil {
		return npmHost{}, refuse("npm config: %v", err)
	}
	if !strings.HasSuffix(h.registry, "/") {
		h.registry += "/"
	}
	npmSeen = &h
	return h, nil
}

// nodeDeps plans the node dependencies of the checkout dir: nil when its
// package.json (at the root) has none.
func nodeDeps(ctx context.Context, dir string) (*depItem, error) {
	pj, ok, err := readSmall(dir, "package.json")
	if err != nil || !ok {
		return nil, err
	}
	manifest, err := exactJSON("package.json", pj, manifestKeys)
	if err != nil {
		return nil, err
	}
	n, err := checkDepSpecs("package.json", manifest, true)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, nil
	}
	lockName := "package-lock.json"
	lock, ok, err := readSmall(dir, lockName)
	if err == nil && !ok {
		lockName = "npm-shrinkwrap.json"
		lock, ok, err = readSmall(dir, lockName)
	}
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, refuse("package.json has dependencies but no package-lock.json: commit one (npm install --package-lock-only)")
	}
	host, err := npmHostConfig(ctx)
	if err != nil {
		return nil, err
	}
	tarballs, err := checkLock(lockName, lock, host.registry)
	if err != nil {
		return nil, err
	}
	// package.json is in the key with the lock: npm ci refuses the two
	// out of step, and two checkouts sharing a lock must not share an
	// install made for the other's manifest. So are the bytes of every
	// file: tarball (the lock's integrity is npm's check of them, the
	// key is the cache's: a candidate swapping a tarball must not be
	// given an install of the old one, nor fill the old one's entry),
	// and the host's registry and npm and node versions.
	parts := [][]byte{[]byte("node"), []byte(lockName), lock, pj, []byte(host.registry), []byte(host.versions)}
	sums := map[string]string{}
	for _, rel := range tarballs {
		sum, err := tarballSum(dir, rel)
		if err != nil {
			return nil, refuse("%s: file:%s: %v", lockName, rel, err)
		}
		sums[rel] = sum
		parts = append(parts, []byte(rel), []byte(sum))
	}
	it := &depItem{kind: "node", key: digest(parts...)}
	it.fetch = func(ctx context.Context, entry string) (string, error) {
		return fetchNode(ctx, entry, dir, lockName, pj, lock, host, sums)
	}
	it.apply = func(entry string, s *sandbox.Spec) error {
		// The mount point must exist in the read-only checkout: an empty
		// folder made on the host, in place of whatever the checkout had
		// there (a committed node_modules, a symlink).
		mp := filepath.Join(s.Src, "node_modules")
		if fi, err := os.Lstat(mp); err == nil && !fi.IsDir() {
			if err := os.Remove(mp); err != nil {
				return err
			}
		}
		if err := os.MkdirAll(mp, 0o755); err != nil {
			return err
		}
		target := s.SrcTarget
		if target == "" {
			target = "/src"
		}
		s.ReadOnly = append(s.ReadOnly, sandbox.Mount{Host: filepath.Join(entry, "node_modules"), Target: path.Join(target, "node_modules")})
		return nil
	}
	return it, nil
}

// maxTarball caps an in-repository tarball the fetch reads.
const maxTarball = 256 << 20

// tarballSum is the SHA-256 of the in-repository tarball rel.
func tarballSum(dir, rel string) (string, error) {
	p, err := inside(dir, rel)
	if err != nil {
		return "", err
	}
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() || fi.Size() > maxTarball {
		return "", refuse("not a regular file of at most 256 MiB")
	}
	h := sha256.New()
	if _, err := io.Copy(h, io.LimitReader(f, maxTarball+1)); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// The keys npm reads, exactly as written: a key differing from one of
// these in case only is refused (encoding/json would have matched it,
// npm does not), so what is checked is what npm uses.
var (
	depFields    = []string{"dependencies", "devDependencies", "optionalDependencies", "peerDependencies"}
	manifestKeys = append([]string{"name", "version", "overrides", "bundleDependencies", "bundledDependencies", "workspaces", "peerDependenciesMeta"}, depFields...)
	lockKeys     = []string{"name", "version", "lockfileVersion", "requires", "packages", "dependencies"}
	entryKeys    = append([]string{"name", "version", "resolved", "integrity", "link", "inBundle", "dev", "optional", "devOptional", "peer",
		"overrides", "bundleDependencies", "bundledDependencies", "workspaces", "peerDependenciesMeta", "hasInstallScript", "extraneous"}, depFields...)
)

// exactJSON decodes b, one JSON object, with its keys exactly as written.
// Duplicate keys anywhere in b are refused (npm's JSON.parse keeps the
// last, encoding/json too, a reader of the first would be fooled), and so
// is a key that differs only in case from one of meaningful.
func exactJSON(what string, b []byte, meaningful []string) (map[string]json.RawMessage, error) {
	if _, err := canonical.Transform(b); err != nil {
		return nil, refuse("%s cannot be read: %v", what, err)
	}
	return exactObject(what, b, meaningful)
}

// exactObject decodes raw, a JSON object of a document exactJSON checked
// (or null, which is an empty one).
func exactObject(what string, raw json.RawMessage, meaningful []string) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, refuse("%s is not a JSON object: %v", what, err)
	}
	for k := range m {
		for _, want := range meaningful {
			if k != want && strings.EqualFold(k, want) {
				return nil, refuse("%s has the key %q, which is %q in another case: refused (npm reads only the exact key)", what, k, want)
			}
		}
	}
	return m, nil
}

// stringField is m[key], which must be a string when present.
func stringField(what string, m map[string]json.RawMessage, key string) (string, bool, error) {
	raw, ok := m[key]
	if !ok {
		return "", false, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false, refuse("%s: %q is not a string", what, key)
	}
	return s, true, nil
}

// checkDepSpecs checks every dependency spec of a manifest or lock entry
// m (and overrides) and says how many there are. A spec that is not a
// registry one would make npm fetch from where it points (a git clone, a
// URL, a folder), whatever the lock says: npm re-resolves a dependency
// whose lock entry does not satisfy it. root allows file: tarballs inside
// the repository.
func checkDepSpecs(what string, m map[string]json.RawMessage, root bool) (int, error) {
	n := 0
	for _, field := range depFields {
		raw, ok := m[field]
		if !ok {
			continue
		}
		deps, err := exactObject(what+" "+field, raw, nil)
		if err != nil {
			return 0, err
		}
		for name, rawSpec := range deps {
			var spec string
			if err := json.Unmarshal(rawSpec, &spec); err != nil {
				return 0, refuse("%s: %s %q is not a string spec", what, field, name)
			}
			if err := checkSpec(spec, root); err != nil {
				return 0, refuse("%s: %s %q is %q: %v", what, field, name, spec, err)
			}
			n++
		}
	}
	if raw, ok := m["overrides"]; ok {
		if err := checkOverrides(what, raw, root, 0); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// checkOverrides checks the specs of an overrides object: strings, "$name"
// references to the root's own, nested objects.
func checkOverrides(what string, raw json.RawMessage, root bool, depth int) error {
	if depth > 32 {
		return refuse("%s: overrides nested too deep", what)
	}
	o, err := exactObject(what+" overrides", raw, nil)
	if err != nil {
		return err
	}
	for name, v := range o {
		var spec string
		if json.Unmarshal(v, &spec) == nil {
			if strings.HasPrefix(spec, "$") && npmName.MatchString(spec[1:]) {
				continue
			}
			if err := checkSpec(spec, root); err != nil {
				return refuse("%s: overrides %q is %q: %v", what, name, spec, err)
			}
			continue
		}
		if err := checkOverrides(what, v, root, depth+1); err != nil {
			return err
		}
	}
	return nil
}

var (
	// npmName is a package name, scoped or not.
	npmName = regexp.MustCompile(`^(@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9._~-][a-z0-9._~-]*$`)
	// registrySpec is a version range or dist-tag: no scheme, no slash,
	// no leading dot or tilde-slash (which npm reads as a folder).
	registrySpec = regexp.MustCompile(`^[0-9A-Za-z*^~<>=|+ ._-]*$`)
	// tarballPath is a relative path to a tarball, plain characters only
	// (no %-escapes, no URL parts).
	tarballPath = regexp.MustCompile(`^[A-Za-z0-9_@+-][A-Za-z0-9._@+/-]*\.(tgz|tar\.gz)$`)
)

// checkSpec allows a semver range or dist-tag of the registry, an npm:
// alias of one, and (root only) a file: tarball inside the repository.
func checkSpec(spec string, root bool) error {
	lower := strings.ToLower(spec)
	switch {
	case strings.HasPrefix(lower, "npm:"):
		name, rng := spec[4:], ""
		if i := strings.LastIndex(name, "@"); i > 0 {
			name, rng = name[:i], name[i+1:]
		}
		if !npmName.MatchString(strings.ToLower(name)) || !isRegistrySpec(rng) {
			return refuse("not an alias of a registry version")
		}
		return nil
	case strings.HasPrefix(lower, "file:"):
		if !root {
			return refuse("a file: spec outside the project's own manifest")
		}
		if _, err := repoTarball(spec); err != nil {
			return err
		}
		return nil
	case isRegistrySpec(spec):
		return nil
	}
	return refuse("not a registry version range (git, URL, folder and link specs are not fetched)")
}

func isRegistrySpec(s string) bool {
	lower := strings.ToLower(s)
	return registrySpec.MatchString(s) && !strings.HasPrefix(s, ".") &&
		!strings.HasSuffix(lower, ".tgz") && !strings.HasSuffix(lower, ".tar.gz") && !strings.HasSuffix(lower, ".tar")
}

// repoTarball is the path inside the repository of a file: tarball spec
// or resolved URL.
func repoTarball(spec string) (string, error) {
	rel := spec[len("file:"):]
	if strings.HasPrefix(rel, "./") {
		rel = rel[2:]
	}
	clean := path.Clean(rel)
	if !tarballPath.MatchString(rel) || clean != rel || clean == ".." || strings.HasPrefix(clean, "../") || strings.Contains(clean, "/../") {
		return "", refuse("%q is not a tarball inside the repository", spec)
	}
	return clean, nil
}

// lockPackagePath is an install path of a v2/v3 lock: node_modules/<name>
// nested any number of times.
var lockPackagePath = regexp.MustCompile(`^node_modules/(@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9._~-][a-z0-9._~-]*(/node_modules/(@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9._~-][a-z0-9._~-]*)*$`)

// semver is a version number as the registry gives them.
var semver = regexp.MustCompile(`^v?[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)

// integrity is a Subresource Integrity string as npm writes them: one or
// more hashes of the known algorithms (an unknown one would check nothing).
var integrity = regexp.MustCompile(`^(sha1-[A-Za-z0-9+/]{27}=|sha256-[A-Za-z0-9+/]{43}=|sha384-[A-Za-z0-9+/]{64}|sha512-[A-Za-z0-9+/]{86}==)( +(sha1-[A-Za-z0-9+/]{27}=|sha256-[A-Za-z0-9+/]{43}=|sha384-[A-Za-z0-9+/]{64}|sha512-[A-Za-z0-9+/]{86}==))*$`)

// checkLock refuses a lock file naming a source other than registry and
// tarballs inside the repository, and returns those tarballs' paths
// (sorted, each once). Every entry must say where it comes from and its
// integrity: npm fetches an entry without a resolved URL by its spec in
// package.json, wherever that points, and one without an integrity
// unchecked.
func checkLock(lockName string, lock []byte, registry string) ([]string, error) {
	l, err := exactJSON(lockName, lock, lockKeys)
	if err != nil {
		return nil, err
	}
	var version int
	if raw, ok := l["lockfileVersion"]; !ok || json.Unmarshal(raw, &version) != nil {
		return nil, refuse("%s has no lockfileVersion", lockName)
	}
	if version < 2 || version > 3 {
		return nil, refuse("%s has lockfileVersion %d: only 2 and 3 are read (npm install --package-lock-only with npm 7 or later)", lockName, version)
	}
	raw, ok := l["packages"]
	if !ok {
		return nil, refuse("%s has no packages", lockName)
	}
	pkgs, err := exactObject(lockName+" packages", raw, nil)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var files []string
	for _, name := range slices.Sorted(maps.Keys(pkgs)) {
		what := fmt.Sprintf("%s: %q", lockName, name)
		p, err := exactObject(what, pkgs[name], entryKeys)
		if err != nil {
			return nil, err
		}
		if _, err := checkDepSpecs(what, p, name == ""); err != nil {
			return nil, err
		}
		if name == "" {
			continue
		}
		if !lockPackagePath.MatchString(strings.ToLower(name)) || strings.Contains(name, "/../") || strings.HasSuffix(name, "/..") {
			return nil, refuse("%s: entry %q is not an install path under node_modules", lockName, name)
		}
		if raw, ok := p["link"]; ok && string(raw) != "false" {
			return nil, refuse("%s is a link (workspaces and file: folders are not fetched)", what)
		}
		// npm makes a spec of name@version for an entry it has no
		// resolved URL for: a version that is a URL or a git spec would
		// be fetched from wherever it says.
		v, _, err := stringField(what, p, "version")
		if err != nil {
			return nil, err
		}
		if v != "" && !semver.MatchString(v) {
			return nil, refuse("%s has version %q, not a version number", what, v)
		}
		r, ok, err := stringField(what, p, "resolved")
		if err != nil {
			return nil, err
		}
		if !ok || r == "" {
			return nil, refuse("%s has no resolved URL: npm would fetch it from package.json's spec (every entry must be resolved from the registry %s or a tarball inside the repository)", what, registry)
		}
		sri, _, err := stringField(what, p, "integrity")
		if err != nil {
			return nil, err
		}
		if !integrity.MatchString(sri) {
			return nil, refuse("%s has no integrity npm can check (%q)", what, sri)
		}
		switch {
		case strings.HasPrefix(r, registry):
		case strings.HasPrefix(strings.ToLower(r), "file:"):
			rel, err := repoTarball(r)
			if err != nil {
				return nil, refuse("%s is resolved from %q, not a tarball inside the repository", what, r)
			}
			if !seen[rel] {
				seen[rel] = true
				files = append(files, rel)
			}
		default:
			return nil, refuse("%s is resolved from %q, which is not the registry %s", what, r, registry)
		}
	}
	slices.Sort(files)
	return files, nil
}

// fetchNode runs npm ci in entry/work and keeps its node_modules. sums
// are the SHA-256 of the in-repository tarballs the key was made with.
func fetchNode(ctx context.Context, entry, dir, lockName string, pj, lock []byte, host npmHost, sums map[string]string) (string, error) {
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", refuse("npm is not installed: %v", err)
	}
	work := filepath.Join(entry, "work")
	defer removeAll(work)
	if err := os.MkdirAll(work, 0o700); err != nil {
		return "", err
	}
	for name, b := range map[string][]byte{"package.json": pj, lockName: lock} {
		if err := os.WriteFile(filepath.Join(work, name), b, 0o600); err != nil {
			return "", err
		}
	}
	for rel, want := range sums {
		src, err := inside(dir, rel)
		if err != nil {
			return "", refuse("%s: file:%s: %v", lockName, rel, err)
		}
		dst := filepath.Join(work, filepath.FromSlash(rel))
		if err := copyFile(src, dst); err != nil {
			return "", refuse("%s: file:%s: %v", lockName, rel, err)
		}
		// The copy is what npm reads: it must be what the key says.
		if got, err := tarballSum(work, rel); err != nil || got != want {
			return "", refuse("%s: file:%s changed while it was fetched", lockName, rel)
		}
	}
	// npm's cache is the fetch's own, inside the entry (so under its
	// size cap) and gone with the work folder: a cache shared between
	// entries would grow without bound.
	cache := filepath.Join(work, ".npm-cache")
	home := filepath.Join(work, ".home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		return "", err
	}
	// Everything that could point npm elsewhere is set here; the
	// folder has no .npmrc of the repository's.
	env := append([]string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home,
		"npm_config_registry=" + host.registry, "npm_config_userconfig=" + host.userconfig,
		"npm_config_cache=" + cache, "npm_config_ignore_scripts=true", "npm_config_audit=false",
		"npm_config_fund=false", "npm_config_update_notifier=false", "npm_config_offline=false",
	}, hostEnv(proxyEnv...)...)
	hint := "npm ci --ignore-scripts, in the repository"
	if _, err := tool(ctx, work, env, hint, npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--prefer-offline",
		"--userconfig", host.userconfig, "--registry", host.registry, "--cache", cache); err != nil {
		return "", err
	}
	nm := filepath.Join(work, "node_modules")
	if _, err := os.Stat(nm); err != nil {
		if err := os.Mkdir(nm, 0o755); err != nil {
			return "", err
		}
	}
	if err := os.Rename(nm, filepath.Join(entry, "node_modules")); err != nil {
		return "", err
	}
	n, total := treeSize(filepath.Join(entry, "node_modules"))
	return fmt.Sprintf("npm ci, %d files, %s", n, size(total)), nil
}

func treeSize(dir string) (files int, size int64) {
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				files++
				size += fi.Size()
			}
		}
		return nil
	})
	return
}
