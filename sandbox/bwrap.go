package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
)

type bwrapFeatures struct {
	disableUserns bool // --disable-userns (0.8)
	tmpfsOptions  bool // --perms and --size before --tmpfs
	env           bool // bwrapEnv exists (it is under /usr, which every run sees)
}

// bwrapEnv removes the PWD that bwrap sets before it runs the command.
const bwrapEnv = "/usr/bin/env"

type bwrapInfo struct {
	once     sync.Once
	version  string
	features bwrapFeatures
	err      error
}

var bwrapInfos sync.Map // binary path -> *bwrapInfo

func newBwrap(o options) (Runner, error) {
	bin, err := lookBinary(o, "bwrap")
	if err != nil {
		return nil, err
	}
	v, _ := bwrapInfos.LoadOrStore(bin, &bwrapInfo{})
	info := v.(*bwrapInfo)
	info.once.Do(func() {
		out, err := exec.Command(bin, "--version").Output()
		if err != nil {
			info.err = fmt.Errorf("sandbox bwrap: %w: %s --version: %v", ErrUnavailable, bin, err)
			return
		}
		info.version = strings.TrimSpace(string(out))
		help, _ := exec.Command(bin, "--help").CombinedOutput()
		info.features = bwrapFeatures{
			disableUserns: strings.Contains(string(help), "--disable-userns"),
			tmpfsOptions:  strings.Contains(string(help), "--size"),
		}
		_, err = os.Stat(bwrapEnv)
		info.features.env = err == nil
	})
	if info.err != nil {
		return nil, info.err
	}
	return &helperRunner{backend: BackendBwrap, version: withCgroup(info.version), bwrap: bin, bwrapV: info.features}, nil
}

// bwrapArgs translates the plan into bubblewrap options. File contents go
// through pipes whose read ends bwrap sees as fd 3 and up (--file); the two fds
// after them are --info-fd and --block-fd, which hold bwrap's init until
// the caller has set its rlimits and moved it into the run's cgroup.
func (r *helperRunner) bwrapArgs(plan []mountOp, env []string, workdir string) (args []string, data [][]byte) {
	uid, gid := strconv.Itoa(sandboxUID), strconv.Itoa(sandboxGID)
	args = []string{
		"--unshare-all", "--unshare-user", "--uid", uid, "--gid", gid,
		"--hostname", hostname, "--cap-drop", "ALL", "--clearenv",
		"--die-with-parent", "--new-session",
	}
	if r.bwrapV.disableUserns {
		args = append(args, "--disable-userns")
	}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		args = append(args, "--setenv", k, v)
	}
	for _, op := range plan {
		switch op.Kind {
		case opReadOnly:
			args = append(args, "--ro-bind", op.Src, op.Dst)
		case opWritable:
			args = append(args, "--bind", op.Src, op.Dst)
		case opTmpfs:
			if r.bwrapV.tmpfsOptions {
				args = append(args, "--perms", fmt.Sprintf("%04o", op.Perm))
				if op.Size > 0 {
					args = append(args, "--size", strconv.FormatInt(op.Size, 10))
				}
			}
			args = append(args, "--tmpfs", op.Dst)
		case opSymlink:
			args = append(args, "--symlink", op.Src, op.Dst)
		case opData:
			fd := 3 + len(data)
			data = append(data, []byte(op.Src))
			// Copied into the root tmpfs, read-only once the root is:
			// cheaper than a bind mount per file.
			args = append(args, "--perms", fmt.Sprintf("%04o", op.Perm), "--file", strconv.Itoa(fd), op.Dst)
		case opProc:
			args = append(args, "--proc", op.Dst)
		case opDev:
			args = append(args, "--dev", op.Dst)
		}
	}
	fd := 3 + len(data)
	args = append(args, "--remount-ro", "/", "--chdir", workdir,
		"--info-fd", strconv.Itoa(fd), "--block-fd", strconv.Itoa(fd+1))
	return args, data
}
