package verify

import (
	"io/fs"
	"os"
	"path/filepath"
)

// A shielded test binary cannot write the shared build cache, but
// Landlock does not cover a file's metadata: with the paths it can name
// (the cache's root, its 256 two-digit directories, README, trim.txt) it
// could chmod them open for other local users, or shut them. After a
// shielded run those paths get the modes the go command gives them
// (directories 0755, files 0644, so nothing a run did before survives
// either) and lose any extended attribute, which a cache never has.
// Entries, whose names are hashes, keep the residual: a candidate that
// computes their names can change their modes, which no later run of ours
// can exploit (shielded runs cannot write the cache, layered ones mount it
// read-only) but another local user could.
type cacheMeta []string

func snapshotCacheMeta(dir string) cacheMeta {
	m := cacheMeta{dir}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return m
	}
	for _, e := range ents {
		m = append(m, filepath.Join(dir, e.Name()))
	}
	return m
}

// restore sets the canonical modes and removes extended attributes. It
// reports how many paths it repaired.
func (m cacheMeta) restore() int {
	n := 0
	for _, p := range m {
		fi, err := os.Lstat(p)
		if err != nil || !(fi.IsDir() || fi.Mode().IsRegular()) {
			continue
		}
		want := fs.FileMode(0o644)
		if fi.IsDir() {
			want = 0o755
		}
		if fi.Mode().Perm() != want || fi.Mode()&(fs.ModeSticky|fs.ModeSetgid|fs.ModeSetuid) != 0 {
			if os.Chmod(p, want) == nil {
				n++
			}
		}
		n += dropXattrs(p)
	}
	return n
}
