package gitx

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
)

// Worktree is a linked working tree of a repository in a temporary
// directory. Its embedded Repo works like any other; Close removes it.
type Worktree struct {
	Repo
	parent *Repo
	once   sync.Once
	err    error
}

// worktreeLocks serializes adding and pruning worktrees of one repository
// within this process: `git worktree prune` deletes the empty
// .git/worktrees folder that a concurrent `worktree add` is about to use.
var worktreeLocks sync.Map // repo dir -> *sync.Mutex

func (r *Repo) worktreeLock() func() {
	m, _ := worktreeLocks.LoadOrStore(r.Dir, &sync.Mutex{})
	mu := m.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}

// AddWorktree checks rev out (detached) into a new temporary directory.
// The caller must Close the worktree; Close always removes the directory
// and git's record of it, even when the repository refuses to.
func (r *Repo) AddWorktree(ctx context.Context, rev string) (*Worktree, error) {
	if err := checkRev(rev); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "gitx-worktree-")
	if err != nil {
		return nil, err
	}
	w := &Worktree{Repo: Repo{Dir: dir, Home: r.Home}, parent: r}
	unlock := r.worktreeLock()
	_, err = r.run(ctx, nil, nil, "worktree", "add", "--detach", "--", dir, rev)
	if err != nil && ctx.Err() == nil {
		// Another process may have pruned the worktrees folder under us:
		// one retry settles that race.
		_, err = r.run(ctx, nil, nil, "worktree", "add", "--detach", "--", dir, rev)
	}
	unlock()
	if err != nil {
		if cerr := w.Close(); cerr != nil {
			err = errors.Join(err, cerr)
		}
		return nil, err
	}
	return w, nil
}

// Close removes the worktree's directory and prunes it from the
// repository. It is safe to call more than once; later calls return the
// first call's result.
func (w *Worktree) Close() error {
	w.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		// The git removal may fail (the worktree was never registered, is
		// locked, or holds submodules); the directory goes regardless.
		_, _ = w.parent.run(ctx, nil, nil, "worktree", "remove", "--force", "--force", "--", w.Dir)
		rmErr := os.RemoveAll(w.Dir)
		unlock := w.parent.worktreeLock()
		_, pruneErr := w.parent.run(ctx, nil, nil, "worktree", "prune")
		unlock()
		if rmErr != nil {
			w.err = fmt.Errorf("removing worktree %s: %w", w.Dir, rmErr)
		}
		w.err = errors.Join(w.err, pruneErr)
	})
	return w.err
}

// Remove is Close.
func (w *Worktree) Remove() error { return w.Close() }
