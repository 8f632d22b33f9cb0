package verify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"

	"github.com/signoff-dev/signoff/sandbox"
)

// Go dependencies: a module whose go.mod requires others gets them with
// `go mod download` into a module cache of its own, keyed by go.mod,
// go.sum and the go.mod of every in-repository replacement, and the runs
// mount it read-only where the host's module cache was. The fetch sees
// those files only, in a folder of its own, never the checkout. It reaches
// the host's module cache first (a file:// proxy: what the host has costs
// nothing, and works offline) and then the proxies the host is configured
// with, never `direct`: a hostile go.mod must not make the host clone
// from any VCS host it names. Checksums are go.sum's and the host's
// checksum database's, as on the host. A vendored module fetches nothing
// and is built with -mod=vendor.

// goModFile is what `go mod edit -json` says of a go.mod.
type goModFile struct {
	Require []struct{ Path, Version string }
	Replace []struct {
		Old, New struct{ Path, Version string }
	}
}

// goDeps plans the Go dependencies of the checkout dir: nil when it has
// no go.mod or requires nothing, vendored when it vendors them.
func goDeps(ctx context.Context, dir string) (*depItem, bool, error) {
	gomod, ok, err := readSmall(dir, "go.mod")
	if err != nil || !ok {
		return nil, false, err
	}
	if fi, err := os.Lstat(filepath.Join(dir, "vendor", "modules.txt")); err == nil && fi.Mode().IsRegular() {
		return nil, true, nil
	}
	gt, err := findGo()
	if err != nil {
		return nil, false, err
	}
	goBin := filepath.Join(gt.goroot, "bin", "go")
	mf, err := parseGoMod(ctx, goBin, gomod)
	if err != nil {
		return nil, false, err
	}
	if len(mf.Require) == 0 {
		return nil, false, nil
	}
	gosum, _, err := readSmall(dir, "go.sum")
	if err != nil {
		return nil, false, err
	}
	parts := [][]byte{[]byte("go"), gomod, gosum}
	// The go.mod of each replacement by a directory: inside the
	// repository only (the run could not see anything else either).
	local := map[string][]byte{}
	for _, r := range mf.Replace {
		if r.New.Version != "" {
			continue // a module: fetched from the proxy like any other
		}
		rel := r.New.Path
		if filepath.IsAbs(rel) || path.IsAbs(rel) {
			return nil, false, refuse("go.mod replaces %s with %s, a directory outside the repository", r.Old.Path, r.New.Path)
		}
		rel = path.Clean(rel)
		if rel == ".." || strings.HasPrefix(rel, "../") {
			return nil, false, refuse("go.mod replaces %s with %s, a directory outside the repository", r.Old.Path, r.New.Path)
		}
		p, err := inside(dir, path.Join(rel, "go.mod"))
		if err != nil {
			return nil, false, refuse("go.mod replaces %s with %s: %v", r.Old.Path, r.New.Path, err)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, false, err
		}
		local[rel] = b
		parts = append(parts, []byte(rel), b)
	}
	it := &depItem{kind: "go", key: digest(parts...)}
	it.fetch = func(ctx context.Context, entry string) (string, error) {
		return fetchGo(ctx, goBin, entry, dir, gomod, gosum, local)
	}
	it.apply = func(entry string, s *sandbox.Spec) error {
		replaceMount(s, sandbox.Mount{Host: filepath.Join(entry, "mod"), Target: sbModCache})
		return nil
	}
	return it, false, nil
}

// parseGoMod reads a go.mod through the go command (its own parser, which
// reads the given file and nothing else).
func parseGoMod(ctx context.Context, goBin string, gomod []byte) (goModFile, error) {
	tmp, err := os.MkdirTemp("", "signoff-gomod-")
	if err != nil {
		return goModFile{}, err
	}
	defer os.RemoveAll(tmp)
	f := filepath.Join(tmp, "go.mod")
	if err := os.WriteFile(f, gomod, 0o600); err != nil {
		return goModFile{}, err
	}
	env := []string{"PATH=" + filepath.Dir(goBin) + ":/usr/bin:/bin", "HOME=" + tmp, "GOTOOLCHAIN=local", "GOENV=off", "GOFLAGS=", "GOWORK=off", "GOCACHE=" + filepath.Join(tmp, "cache"), "GOTELEMETRY=off"}
	out, err := tool(ctx, tmp, env, "go mod edit -json go.mod", goBin, "mod", "edit", "-json", f)
	if err != nil {
		return goModFile{}, refuse("go.mod cannot be read: %v", err)
	}
	var mf goModFile
	if err := json.Unmarshal(out, &mf); err != nil {
		return goModFile{}, refuse("go.mod cannot be read: %v", err)
	}
	return mf, nil
}

// goFetchEnv is the fetch's whole environment: the host's proxies and
// checksum settings (from its own go env), the host's module cache as the
// first proxy, never direct, never insecure.
func goFetchEnv(ctx context.Context, goBin, modcache, work string) ([]string, string, error) {
	cmd := exec.CommandContext(ctx, goBin, "env", "-json", "GOPROXY", "GOSUMDB", "GONOSUMDB", "GOPRIVATE", "GOMODCACHE")
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local", "GOFLAGS=")
	cmd.Dir = work
	out, err := cmd.Output()
	if err != nil {
		return nil, "", fmt.Errorf("go env: %w", err)
	}
	var host map[string]string
	if err := json.Unmarshal(out, &host); err != nil {
		return nil, "", fmt.Errorf("go env: %w", err)
	}
	proxies := goProxies(host["GOPROXY"], host["GOMODCACHE"])
	if proxies == "" {
		return nil, "", refuse("the host's GOPROXY %q names no proxy (direct and off are not used to fetch)", host["GOPROXY"])
	}
	env := []string{
		"PATH=" + filepath.Dir(goBin) + ":/usr/bin:/bin",
		"HOME=" + os.Getenv("HOME"), // .netrc, for a private proxy's credentials
		"GOMODCACHE=" + modcache, "GOFLAGS=-modcacherw", "GOTOOLCHAIN=local", "GOWORK=off", "GOENV=off",
		"GOPROXY=" + proxies, "GOSUMDB=" + host["GOSUMDB"], "GONOSUMDB=" + host["GONOSUMDB"], "GOPRIVATE=" + host["GOPRIVATE"],
		// Private modules go through the proxy too; nothing is fetched
		// straight from a VCS host, nor over plain HTTP.
		"GONOPROXY=none", "GOINSECURE=", "GOVCS=*:off",
		"GOCACHE=" + filepath.Join(work, ".gocache"), "GOTELEMETRY=off", "CGO_ENABLED=0",
	}
	return append(env, hostEnv(proxyEnv...)...), proxies, nil
}

// goProxies is the fetch's GOPROXY: the host's module cache, then the
// host's proxies without direct and off.
func goProxies(hostProxy, hostModcache string) string {
	var list []string
	if hostModcache != "" {
		if st, err := os.Stat(filepath.Join(hostModcache, "cache", "download")); err == nil && st.IsDir() {
			list = append(list, "file://"+filepath.ToSlash(filepath.Join(hostModcache, "cache", "download")))
		}
	}
	for _, p := range strings.FieldsFunc(hostProxy, func(r rune) bool { return r == ',' || r == '|' }) {
		p = strings.TrimSpace(p)
		if p == "" || p == "direct" || p == "off" {
			continue
		}
		list = append(list, p)
	}
	return strings.Join(list, ",")
}

// fetchGo downloads the modules into entry/mod from a folder holding only
// the go.mod, go.sum and replacement go.mod files.
func fetchGo(ctx context.Context, goBin, entry, dir string, gomod, gosum []byte, local map[string][]byte) (string, error) {
	work := filepath.Join(entry, "work")
	modcache := filepath.Join(entry, "mod")
	defer removeAll(work)
	files := map[string][]byte{"go.mod": gomod, "go.sum": gosum}
	for rel, b := range local {
		files[path.Join(rel, "go.mod")] = b
	}
	for rel, b := range files {
		p := filepath.Join(work, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return "", err
		}
		if err := os.WriteFile(p, b, 0o600); err != nil {
			return "", err
		}
	}
	env, proxies, err := goFetchEnv(ctx, goBin, modcache, work)
	if err != nil {
		return "", err
	}
	hint := fmt.Sprintf("GOFLAGS=-modcacherw GOPROXY=%s go mod download, in the repository", proxies)
	out, err := tool(ctx, work, env, hint, goBin, "mod", "download", "-json")
	mods, zipBytes, modErr := readDownloads(out)
	if modErr != "" {
		return "", refuse("go mod download: %s (run: %s)", modErr, hint)
	}
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%d modules, %s", mods, size(zipBytes)), nil
}

// readDownloads reads go mod download -json: the modules it has, the
// bytes of their zips, and the first module's error.
func readDownloads(out []byte) (mods int, total int64, firstErr string) {
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var m struct{ Path, Version, Error, Zip string }
		if err := dec.Decode(&m); err != nil {
			if !errors.Is(err, io.EOF) && firstErr == "" {
				firstErr = "unreadable output: " + err.Error()
			}
			return
		}
		if m.Error != "" {
			if firstErr == "" {
				firstErr = m.Path + "@" + m.Version + ": " + m.Error
			}
			continue
		}
		mods++
		if fi, err := os.Stat(m.Zip); err == nil {
			total += fi.Size()
		}
	}
}
