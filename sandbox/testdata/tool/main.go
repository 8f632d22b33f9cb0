// Command tool is the program the sandbox tests run inside each backend.
// It is built once by TestMain (static, so it runs in any image) and mounted
// read-only. Every mode prints what it saw; exit status 3 means "the
// operation failed", which is what most isolation tests expect.
package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: tool MODE ARGS...")
		os.Exit(2)
	}
	args := os.Args[2:]
	switch os.Args[1] {
	case "true":
	case "connect": // connect ADDR: can we reach a listener?
		c, err := net.DialTimeout("tcp", args[0], 2*time.Second)
		if err != nil {
			fmt.Println("connect failed:", err)
			os.Exit(3)
		}
		c.Close()
		fmt.Println("connected")
	case "selfnet": // the sandbox's own loopback works
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Println("listen failed:", err)
			os.Exit(3)
		}
		go func() {
			if c, err := ln.Accept(); err == nil {
				c.Close()
			}
		}()
		c, err := net.DialTimeout("tcp", ln.Addr().String(), 2*time.Second)
		if err != nil {
			fmt.Println("dial failed:", err)
			os.Exit(3)
		}
		c.Close()
		fmt.Println("loopback ok")
	case "writes": // writes PATH...: one line per path, "ok" or the error
		for _, p := range args {
			if err := os.WriteFile(p, []byte("written inside\n"), 0o644); err != nil {
				fmt.Printf("%s fail %v\n", p, err)
			} else {
				fmt.Printf("%s ok\n", p)
			}
		}
	case "exists": // exists PATH...: "PATH yes" or "PATH no"
		for _, p := range args {
			_, err := os.Lstat(p)
			fmt.Printf("%s %s\n", p, map[bool]string{true: "yes", false: "no"}[err == nil])
		}
	case "fds": // descriptors open above stderr, but the Go runtime's own
		for fd := 3; fd < 1024; fd++ {
			if _, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFD, 0); errno != 0 {
				continue
			}
			target, _ := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
			if strings.HasPrefix(target, "anon_inode:") || strings.HasPrefix(target, "/sys/fs/cgroup/") {
				continue // the runtime's epoll, eventfd, pidfd, CPU quota
			}
			fmt.Println(fd, target)
		}
	case "env":
		env := os.Environ()
		sort.Strings(env)
		fmt.Print(strings.Join(env, "\n"))
	case "id":
		fmt.Printf("%d %d %d\n", os.Getuid(), os.Getgid(), os.Getpid())
	case "alloc": // allocate and touch memory until stopped
		var keep [][]byte
		for {
			b := make([]byte, 16<<20)
			for i := 0; i < len(b); i += 4096 {
				b[i] = 1
			}
			keep = append(keep, b)
		}
	case "hold": // hold MB: allocate and touch MB, keep it two seconds
		mb, _ := strconv.Atoi(args[0])
		b := make([]byte, mb<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		time.Sleep(2 * time.Second)
		b[0]++
	case "group": // group N MB: N processes holding MB each at once
		n, _ := strconv.Atoi(args[0])
		var cmds []*exec.Cmd
		for i := 0; i < n; i++ {
			cmd := exec.Command(os.Args[0], "hold", args[1])
			if err := cmd.Start(); err != nil {
				fmt.Println("start:", err)
				os.Exit(3)
			}
			cmds = append(cmds, cmd)
		}
		failed := false
		for _, cmd := range cmds {
			if err := cmd.Wait(); err != nil {
				fmt.Println("holder:", err)
				failed = true
			}
		}
		if failed {
			os.Exit(3)
		}
	case "spin":
		for x := 0; ; x++ {
			_ = x
		}
	case "sleep":
		d, _ := time.ParseDuration(args[0])
		time.Sleep(d)
	case "spawn", "detach": // spawn|detach MARKER DELAY [setsid]: a grandchild writes MARKER after DELAY; spawn then sleeps, detach exits
		cmd := exec.Command(os.Args[0], "later", args[0], args[1])
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: len(args) > 2 && args[2] == "setsid"}
		if err := cmd.Start(); err != nil {
			fmt.Println("spawn failed:", err)
			os.Exit(3)
		}
		fmt.Println("spawned", cmd.Process.Pid)
		if os.Args[1] == "spawn" {
			time.Sleep(time.Hour)
		}
	case "later":
		signal.Ignore(syscall.SIGHUP)
		d, _ := time.ParseDuration(args[1])
		time.Sleep(d)
		os.WriteFile(args[0], []byte("survived\n"), 0o644)
	case "print": // print N bytes
		n, _ := strconv.Atoi(args[0])
		line := []byte(strings.Repeat("x", 1023) + "\n")
		for n > 0 {
			k := min(n, len(line))
			os.Stdout.Write(line[:k])
			n -= k
		}
	case "fork": // fork N: start N sleeping children, report the first failure
		n, _ := strconv.Atoi(args[0])
		for i := 0; i < n; i++ {
			cmd := exec.Command(os.Args[0], "sleep", "30s")
			if err := cmd.Start(); err != nil {
				fmt.Printf("started %d, then: %v\n", i, err)
				os.Exit(3)
			}
		}
		fmt.Printf("started %d\n", n)
	default:
		fmt.Fprintln(os.Stderr, "unknown mode", os.Args[1])
		os.Exit(2)
	}
}
