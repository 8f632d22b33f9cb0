package verify

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/signoff-dev/signoff/sandbox"
)

// A JUnit harness's runs carry no witness: what node's test runner reports
// is the verdict, and the code under test shares the process and the
// module cache with the frozen tests. Library code that overwrites the
// functions of require('assert') made every frozen assertion a no-op and
// the candidate VERIFIED (red-team finding, issue 23). The static checks
// refuse the ways of doing that they can read; this makes it fail where
// they cannot: every run's node preloads, before any test file, a script
// that freezes node's assertion modules and node:test's exports, so a
// later write to them is ignored (sloppy code) or throws (strict code and
// modules). Node's own assertion code calls its internals through
// primordials captured at startup, so only the exported objects needed
// freezing. Frozen exports behave the same for tests that only call them,
// so base runs get the script too and the two runs stay alike.

// sbNodeFreezeDir is where the script's directory is mounted read-only.
const sbNodeFreezeDir = "/signoff/node"

// nodeFreezeName is the script's file name in that directory.
const nodeFreezeName = "freeze.cjs"

// nodeFreezeScript freezes, to a small depth, the exports of node's
// assertion modules and of node:test: the objects, the functions on them
// (assert.strict, AssertionError and its prototype) and their own
// properties. Accessors (node:test's lazy mock) are left to work; a module
// the node in use lacks is skipped, so the preload never stops a run.
const nodeFreezeScript = `'use strict';
// Written by Signoff's verifier and mounted read-only: the assertion
// modules the frozen tests judge a candidate with cannot be rewritten by
// the code under test.
(function () {
  const seen = new Set();
  function freeze(o, depth) {
    if (o === null || (typeof o !== 'object' && typeof o !== 'function') || seen.has(o)) return;
    seen.add(o);
    let keys = [];
    try { keys = Reflect.ownKeys(o); } catch (e) {}
    for (const k of keys) {
      let d;
      try { d = Object.getOwnPropertyDescriptor(o, k); } catch (e) { continue; }
      if (d && 'value' in d && depth > 0) freeze(d.value, depth - 1);
    }
    try { Object.freeze(o); } catch (e) {}
  }
  for (const id of ['assert', 'assert/strict', 'node:test']) {
    let m;
    try { m = require(id); } catch (e) { continue; }
    freeze(m, 3);
  }
})();
`

// nodeFreezeDir returns a host directory holding only the script, under
// root (beside the build cache, never mounted writable into a run). Its
// name is the script's digest, so verifications running at once, even of
// different Signoff builds, share it without racing, and the content is
// checked on every use and rewritten when it is not the script.
func nodeFreezeDir(root string) (string, error) {
	sum := sha256.Sum256([]byte(nodeFreezeScript))
	dir := filepath.Join(root, "node-freeze-"+hex.EncodeToString(sum[:6]))
	file := filepath.Join(dir, nodeFreezeName)
	if b, err := os.ReadFile(file); err == nil && bytes.Equal(b, []byte(nodeFreezeScript)) {
		return dir, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	// Written aside and renamed: a run starting meanwhile reads the old
	// file or the new one, never half of one.
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return "", err
	}
	_, werr := f.WriteString(nodeFreezeScript)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(f.Name())
		return "", err
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		os.Remove(f.Name())
		return "", err
	}
	if err := os.Rename(f.Name(), file); err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return dir, nil
}

// applyNodeFreeze mounts the script's directory into the run and makes
// every node the run starts (the test runner and each test file's process
// it spawns, which inherit the environment) preload it. Without a sandbox
// (the none backend, which maps mounts only for path-valued variables)
// node is given the host path.
func (v *verifier) applyNodeFreeze(s *sandbox.Spec) error {
	dir, err := nodeFreezeDir(filepath.Dir(v.cache))
	if err != nil {
		return fmt.Errorf("node's assertion preload: %w", err)
	}
	script := sbNodeFreezeDir + "/" + nodeFreezeName
	if v.opts.Runner != nil && v.opts.Runner.Name() == sandbox.BackendNone {
		script = filepath.Join(dir, nodeFreezeName)
	} else {
		s.ReadOnly = append(s.ReadOnly, sandbox.Mount{Host: dir, Target: sbNodeFreezeDir})
	}
	opt := "--require=" + script
	if strings.ContainsAny(script, " \t\"\\") {
		opt = `--require "` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(script) + `"`
	}
	if prev := s.Env["NODE_OPTIONS"]; prev != "" {
		opt += " " + prev
	}
	s.Env["NODE_OPTIONS"] = opt
	return nil
}
