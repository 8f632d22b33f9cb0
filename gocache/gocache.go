// Package gocache lets a sandboxed go command read a trusted build cache
// without being able to change it. It serves the go command's GOCACHEPROG
// protocol: a lookup finds an entry in a layer of the run's own first,
// then in the trusted cache (the go command's own on-disk format, mounted
// read-only); everything the run stores goes to its layer, which is
// thrown away with the run. So a candidate's code, which runs in the same
// sandbox as its build, cannot plant an entry that a later run of another
// case would use, and the trusted runs (a base commit and a reviewed
// harness) still make every run after them warm.
//
// A program that imports this package serves as the cache program: the go
// command starts it with the arguments Command returns, and this package's
// init takes over before main runs.
package gocache

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// progArg is the first argument that makes a program the cache program.
const progArg = "__signoff_gocacheprog"

func init() {
	if len(os.Args) == 4 && os.Args[1] == progArg {
		if err := Serve(os.Stdin, os.Stdout, os.Args[2], os.Args[3]); err != nil {
			fmt.Fprintln(os.Stderr, "signoff gocache:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
}

// Command is the GOCACHEPROG value that runs exe (a program importing this
// package, as the sandbox sees it) over the trusted cache directory and
// the run's layer directory. None of the three may contain spaces: the go
// command splits the value on them.
func Command(exe, trusted, layer string) (string, error) {
	for _, p := range []string{exe, trusted, layer} {
		if p == "" || strings.ContainsAny(p, " \t\n'\"\\") {
			return "", fmt.Errorf("gocache: path %q is empty or has a space or quote", p)
		}
	}
	return strings.Join([]string{exe, progArg, trusted, layer}, " "), nil
}

// request and response mirror the go command's cacheprog protocol
// (cmd/go/internal/cacheprog), which is internal to the go command.
type request struct {
	ID       int64
	Command  string
	ActionID []byte `json:",omitempty"`
	OutputID []byte `json:",omitempty"`
	BodySize int64  `json:",omitempty"`
}

type response struct {
	ID            int64
	Err           string     `json:",omitempty"`
	KnownCommands []string   `json:",omitempty"`
	Miss          bool       `json:",omitempty"`
	OutputID      []byte     `json:",omitempty"`
	Size          int64      `json:",omitempty"`
	Time          *time.Time `json:",omitempty"`
	DiskPath      string     `json:",omitempty"`
}

// hashSize is the size of the go command's action and output ids.
const hashSize = 32

// Serve answers the go command's requests on r with responses on w until
// it says close or r ends. trusted is read, layer (created if missing) is
// written.
func Serve(r io.Reader, w io.Writer, trusted, layer string) error {
	if err := os.MkdirAll(layer, 0o755); err != nil {
		return fmt.Errorf("layer: %w", err)
	}
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	var mu sync.Mutex
	send := func(res response) error {
		mu.Lock()
		defer mu.Unlock()
		if err := enc.Encode(res); err != nil {
			return err
		}
		return bw.Flush()
	}
	// The go command accepts answers in any order: a store, which writes
	// a file that may be large, is answered on its own, so lookups are
	// not held up behind it.
	var wg sync.WaitGroup
	defer wg.Wait()
	errs := make(chan error, 1)
	answer := func(res response) {
		if err := send(res); err != nil {
			select {
			case errs <- err:
			default:
			}
		}
	}
	if err := send(response{KnownCommands: []string{"get", "put", "close"}}); err != nil {
		return err
	}
	dec := json.NewDecoder(bufio.NewReaderSize(r, 64<<10))
	for {
		var req request
		if err := dec.Decode(&req); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("read request: %w", err)
		}
		var body []byte
		if req.Command == "put" && req.BodySize > 0 {
			// The body follows as one base64 JSON string.
			if err := dec.Decode(&body); err != nil {
				return fmt.Errorf("read body of request %d: %w", req.ID, err)
			}
			if int64(len(body)) != req.BodySize {
				return fmt.Errorf("request %d: body of %d bytes, announced %d", req.ID, len(body), req.BodySize)
			}
		}
		select {
		case err := <-errs:
			return err
		default:
		}
		switch req.Command {
		case "get":
			// Answered at once: a lookup is a read of one small file,
			// and the go command waits on each.
			answer(get(req, trusted, layer))
		case "put":
			wg.Add(1)
			go func() { defer wg.Done(); answer(put(req, body, layer)) }()
		case "close":
			wg.Wait()
			return send(response{ID: req.ID})
		default:
			answer(response{ID: req.ID, Err: fmt.Sprintf("unknown command %q", req.Command)})
		}
	}
}

func get(req request, trusted, layer string) response {
	res := response{ID: req.ID}
	if len(req.ActionID) != hashSize {
		res.Err = "bad action id"
		return res
	}
	// The run's own entries first: what it built itself is newer.
	for _, dir := range []string{layer, trusted} {
		e, ok := readEntry(dir, req.ActionID)
		if !ok {
			continue
		}
		t := e.time
		res.OutputID, res.Size, res.Time, res.DiskPath = e.out, e.size, &t, fileName(dir, e.out, "d")
		return res
	}
	res.Miss = true
	return res
}

func put(req request, body []byte, layer string) response {
	res := response{ID: req.ID}
	if len(req.ActionID) != hashSize || len(req.OutputID) != hashSize {
		res.Err = "bad action or output id"
		return res
	}
	out := fileName(layer, req.OutputID, "d")
	if err := writeFile(out, body); err != nil {
		res.Err = err.Error()
		return res
	}
	entry := fmt.Sprintf("v1 %x %x %20d %20d\n", req.ActionID, req.OutputID, len(body), time.Now().UnixNano())
	if err := writeFile(fileName(layer, req.ActionID, "a"), []byte(entry)); err != nil {
		res.Err = err.Error()
		return res
	}
	res.DiskPath = out
	return res
}

// fileName is where the go command's disk cache keeps id: a directory
// named for its first byte, a file named for the whole id and its kind
// (a: action entry, d: output data).
func fileName(dir string, id []byte, kind string) string {
	h := hex.EncodeToString(id)
	return filepath.Join(dir, h[:2], h+"-"+kind)
}

func writeFile(name string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	tmp := name + ".tmp" + strconv.Itoa(os.Getpid())
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, name)
}

type entry struct {
	out  []byte
	size int64
	time time.Time
}

// entryLen is the length of an action entry: "v1 <id> <out> <size> <time>\n"
// with the numbers space-padded to 20 bytes.
const entryLen = 2 + 1 + 2*hashSize + 1 + 2*hashSize + 1 + 20 + 1 + 20 + 1

// readEntry reads an action entry in the go command's disk format and
// checks that its output is there with the size it names.
func readEntry(dir string, id []byte) (entry, bool) {
	b, err := os.ReadFile(fileName(dir, id, "a"))
	if err != nil || len(b) != entryLen || b[entryLen-1] != '\n' {
		return entry{}, false
	}
	f := strings.Fields(string(b))
	if len(f) != 5 || f[0] != "v1" || f[1] != hex.EncodeToString(id) {
		return entry{}, false
	}
	out, err := hex.DecodeString(f[2])
	if err != nil || len(out) != hashSize {
		return entry{}, false
	}
	size, err1 := strconv.ParseInt(f[3], 10, 64)
	nano, err2 := strconv.ParseInt(f[4], 10, 64)
	if err1 != nil || err2 != nil || size < 0 {
		return entry{}, false
	}
	fi, err := os.Stat(fileName(dir, out, "d"))
	if err != nil || !fi.Mode().IsRegular() || fi.Size() != size {
		return entry{}, false
	}
	return entry{out: out, size: size, time: time.Unix(0, nano)}, true
}
