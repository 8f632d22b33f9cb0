package sandbox

import (
	"context"
	"os/exec"
	"slices"
	"testing"
	"time"
)

func TestTmpPhases(t *testing.T) {
	rr, _ := New("bwrap")
	r := rr.(*helperRunner)
	lay, _ := resolveSpec(Spec{}, DefaultLimits)
	args, _ := r.bwrapArgs(fullPlan(lay), nil, "/tmp")
	var clean []string
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "--ro-bind-data":
			i += 2
			clean = clean[:len(clean)-2]
			continue
		case "--info-fd", "--block-fd":
			i++
			continue
		}
		clean = append(clean, args[i])
	}
	minimal := []string{"bwrap", "--unshare-all", "--unshare-user", "--ro-bind", "/usr", "/usr", "--symlink", "usr/lib64", "/lib64", "--symlink", "usr/lib", "/lib", "--proc", "/proc", "--dev", "/dev", "/usr/bin/true"}
	full := append(append([]string{"bwrap"}, clean...), "--", "/usr/bin/true")
	nonet := slices.Clone(full)
	nonet = slices.Insert(nonet, 2, "--share-net")
	var d [6][]time.Duration
	for i := 0; i < 60; i++ {
		for k, f := range []func(){
			func() { exec.Command("/usr/bin/true").Run() },
			func() { exec.Command(minimal[0], minimal[1:]...).Run() },
			func() { exec.Command(full[0], full[1:]...).Run() },
			func() { exec.Command(nonet[0], nonet[1:]...).Run() },
			func() { r.Run(context.Background(), Spec{Command: []string{"/usr/bin/true"}}) },
			func() { r.Run(context.Background(), Spec{Command: []string{"/usr/bin/true"}, Env: map[string]string{"PWD": "/"}}) },
		} {
			s := time.Now()
			f()
			d[k] = append(d[k], time.Since(s))
		}
	}
	for k, name := range []string{"true", "bwrap minimal", "bwrap our args", "bwrap our args, shared net", "Run", "Run without env"} {
		slices.Sort(d[k])
		t.Logf("%-28s median %v min %v", name, d[k][len(d[k])/2], d[k][0])
	}
}
