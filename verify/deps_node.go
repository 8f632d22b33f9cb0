package verify

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/signoff-dev/signoff/sandbox"
)

// Node dependencies: a package.json with dependencies and a lock file
// (package-lock.json or npm-shrinkwrap.json, lockfileVersion 2 or 3)
// gets `npm ci --ignore-scripts` in a folder holding only those two files
// and the tarballs of its file: dependencies (never the repository's code
// or its .npmrc), with the host user's npm configuration and its registry
// set explicitly; the node_modules it makes is mounted read-only at
// /src/node_modules. Before anything is fetched, every resolved URL of
// the lock file must be on that registry or a file: tarball inside the
// repository, and every install path a node_modules path: a hostile lock
// file cannot make the host fetch from anywhere else or write anywhere
// else.

var (
	npmOnce sync.Once
	npmReg  string
	npmUser string
	npmErr  error
)

// npmConfig asks the host's npm for its registry and user config, once,
// from an empty folder (so no project's .npmrc is read).
func npmConfig() (registry, userconfig string, err error) {
	npmOnce.Do(func() {
		tmp, err := os.MkdirTemp("", "signoff-npm-")
		if err != nil {
			npmErr = err
			return
		}
		defer os.RemoveAll(tmp)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		get := func(key string) string {
			if err != nil {
				return ""
			}
			cmd := exec.CommandContext(ctx, "npm", "config", "get", key)
			cmd.Dir = tmp
			var out []byte
			out, err = cmd.Output()
			return strings.TrimSpace(string(out))
		}
		npmReg, npmUser = get("registry"), get("userconfig")
		if err != nil {
			npmErr = fmt.Errorf("npm config: %w", err)
			return
		}
		if !strings.HasSuffix(npmReg, "/") {
			npmReg += "/"
		}
	})
	return npmReg, npmUser, npmErr
}

// nodeDeps plans the node dependencies of the checkout dir: nil when its
// package.json (at the root) has none.
func nodeDeps(dir string) (*depItem, error) {
	pj, ok, err := readSmall(dir, "package.json")
	if err != nil || !ok {
		return nil, err
	}
	var manifest struct {
		Dependencies, DevDependencies, OptionalDependencies map[string]any
	}
	if err := json.Unmarshal(pj, &manifest); err != nil {
		return nil, refuse("package.json cannot be read: %v", err)
	}
	if len(manifest.Dependencies)+len(manifest.DevDependencies)+len(manifest.OptionalDependencies) == 0 {
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
	// package.json is in the key with the lock: npm ci refuses the two
	// out of step, and two checkouts sharing a lock must not share an
	// install made for the other's manifest.
	it := &depItem{kind: "node", key: digest([]byte("node"), []byte(lockName), lock, pj)}
	it.fetch = func(ctx context.Context, entry string) (string, error) {
		return fetchNode(ctx, entry, dir, lockName, pj, lock)
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

// lockPackagePath is an install path of a v2/v3 lock: node_modules/<name>
// nested any number of times.
var lockPackagePath = regexp.MustCompile(`^node_modules/(@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9._~-][a-z0-9._~-]*(/node_modules/(@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9._~-][a-z0-9._~-]*)*$`)

// semver is a version number as the registry gives them.
var semver = regexp.MustCompile(`^v?[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)

// checkLock refuses a lock file naming a source other than registry and
// tarballs inside the repository, and returns those tarballs' paths.
func checkLock(lockName string, lock []byte, registry string) ([]string, error) {
	var l struct {
		LockfileVersion int `json:"lockfileVersion"`
		Packages        map[string]struct {
			Version  string `json:"version"`
			Resolved string `json:"resolved"`
			Link     bool   `json:"link"`
		} `json:"packages"`
	}
	if err := json.Unmarshal(lock, &l); err != nil {
		return nil, refuse("%s cannot be read: %v", lockName, err)
	}
	if l.LockfileVersion < 2 {
		return nil, refuse("%s has lockfileVersion %d: only 2 and 3 are read (npm install --package-lock-only with npm 7 or later)", lockName, l.LockfileVersion)
	}
	var files []string
	for name, p := range l.Packages {
		if name == "" {
			continue
		}
		if !lockPackagePath.MatchString(strings.ToLower(name)) || strings.Contains(name, "/../") || strings.HasSuffix(name, "/..") {
			return nil, refuse("%s: entry %q is not an install path under node_modules", lockName, name)
		}
		// npm makes a spec of name@version for an entry it has no
		// resolved URL for: a version that is a URL or a git spec would
		// be fetched from wherever it says.
		if p.Version != "" && !semver.MatchString(p.Version) {
			return nil, refuse("%s: %q has version %q, not a version number", lockName, name, p.Version)
		}
		if p.Link {
			return nil, refuse("%s: %q is a link to %q (workspaces and file: folders are not fetched)", lockName, name, p.Resolved)
		}
		switch r := p.Resolved; {
		case r == "":
			// Fetched by name and version from the registry.
		case strings.HasPrefix(r, registry):
		case strings.HasPrefix(r, "file:"):
			rel := path.Clean(strings.TrimPrefix(r, "file:"))
			if path.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, "../") || !strings.HasSuffix(rel, ".tgz") && !strings.HasSuffix(rel, ".tar.gz") {
				return nil, refuse("%s: %q is resolved from %q, not a tarball inside the repository", lockName, name, r)
			}
			files = append(files, rel)
		default:
			return nil, refuse("%s: %q is resolved from %q, which is not the registry %s", lockName, name, r, registry)
		}
	}
	return files, nil
}

// fetchNode runs npm ci in entry/work and keeps its node_modules.
func fetchNode(ctx context.Context, entry, dir, lockName string, pj, lock []byte) (string, error) {
	registry, userconfig, err := npmConfig()
	if err != nil {
		return "", err
	}
	tarballs, err := checkLock(lockName, lock, registry)
	if err != nil {
		return "", err
	}
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
	for _, rel := range tarballs {
		src, err := inside(dir, rel)
		if err != nil {
			return "", refuse("%s: file:%s: %v", lockName, rel, err)
		}
		if err := copyFile(src, filepath.Join(work, filepath.FromSlash(rel))); err != nil {
			return "", refuse("%s: file:%s: %v", lockName, rel, err)
		}
	}
	cache := filepath.Join(filepath.Dir(entry), "npm-cache")
	home := filepath.Join(entry, "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		return "", err
	}
	defer removeAll(home)
	// Everything that could point npm elsewhere is set here; the
	// folder has no .npmrc of the repository's.
	env := append([]string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home,
		"npm_config_registry=" + registry, "npm_config_userconfig=" + userconfig,
		"npm_config_cache=" + cache, "npm_config_ignore_scripts=true", "npm_config_audit=false",
		"npm_config_fund=false", "npm_config_update_notifier=false", "npm_config_offline=false",
	}, hostEnv(proxyEnv...)...)
	hint := "npm ci --ignore-scripts, in the repository"
	if _, err := tool(ctx, work, env, hint, npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--prefer-offline",
		"--userconfig", userconfig, "--registry", registry, "--cache", cache); err != nil {
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
