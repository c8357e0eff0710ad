package framework

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// Process is one daemon of the stack, started from a fixed command line so
// that it can be stopped and started again (outage tests) with the same
// ports and data.
type Process struct {
	// Name names the daemon in logs and errors.
	Name string
	// Path and Args are the command line.
	Path string
	Args []string
	// Dir is the working directory.
	Dir string
	// Env is the environment; nil means this process's.
	Env []string
	// LogPath receives the daemon's stdout and stderr, appended across restarts.
	LogPath string
	// Credential, when set, runs the daemon as another user (the stack runs
	// its daemons as nobody when started by root: MariaDB refuses root).
	Credential *syscall.Credential

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

// Start starts the daemon. Its process group is killed with it, and the
// kernel kills it if the process that started it dies first (Pdeathsig), so
// a test binary killed mid-run leaves nothing behind.
func (p *Process) Start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		return fmt.Errorf("%s: already running", p.Name)
	}
	logFile, err := os.OpenFile(p.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("%s: opening log: %w", p.Name, err)
	}
	cmd := exec.Command(p.Path, p.Args...)
	cmd.Dir = p.Dir
	cmd.Env = p.Env
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Setpgid:    true,
		Pdeathsig:  syscall.SIGKILL,
		Credential: p.Credential,
	}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return fmt.Errorf("%s: starting %s: %w", p.Name, p.Path, err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		logFile.Close()
		close(done)
	}()
	p.cmd, p.done = cmd, done
	return nil
}

// PeakRSS is the most resident memory the running daemon has used, the
// kernel's high-water mark (VmHWM in /proc/PID/status): the figure that
// decides whether it fits a container's memory limit.
func (p *Process) PeakRSS() (bytes int64, err error) {
	p.mu.Lock()
	cmd := p.cmd
	p.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return 0, fmt.Errorf("%s: not running", p.Name)
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
	if err != nil {
		return 0, fmt.Errorf("%s: %w", p.Name, err)
	}
	for line := range strings.Lines(string(status)) {
		if kb, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var n int64
			if _, err := fmt.Sscanf(strings.TrimSpace(kb), "%d kB", &n); err != nil {
				return 0, fmt.Errorf("%s: reading VmHWM %q: %w", p.Name, kb, err)
			}
			return n << 10, nil
		}
	}
	return 0, fmt.Errorf("%s: no VmHWM in /proc/%d/status", p.Name, cmd.Process.Pid)
}

// Exited reports whether a started daemon has exited by itself.
func (p *Process) Exited() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done == nil {
		return false
	}
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Stop sends SIGTERM to the daemon's process group, waits up to grace for it
// to exit, then kills the group. Stopping a stopped daemon does nothing.
func (p *Process) Stop(grace time.Duration) error {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.cmd, p.done = nil, nil
	p.mu.Unlock()
	if cmd == nil {
		return nil
	}
	pgid := -cmd.Process.Pid
	_ = syscall.Kill(pgid, syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(grace):
		_ = syscall.Kill(pgid, syscall.SIGKILL)
		<-done
	}
	// Children that outlived the leader (neutron's API workers) go too.
	_ = syscall.Kill(pgid, syscall.SIGKILL)
	return nil
}

// Freeze stops the daemon's process group with SIGSTOP: it keeps its
// sockets, so connections are accepted by the kernel and never answered,
// as with a hung server. Thaw lets it go on.
func (p *Process) Freeze() error { return p.signalGroup(syscall.SIGSTOP) }

// Thaw resumes a frozen daemon with SIGCONT.
func (p *Process) Thaw() error { return p.signalGroup(syscall.SIGCONT) }

func (p *Process) signalGroup(sig syscall.Signal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return fmt.Errorf("%s: not running", p.Name)
	}
	if err := syscall.Kill(-p.cmd.Process.Pid, sig); err != nil {
		return fmt.Errorf("%s: sending %v: %w", p.Name, sig, err)
	}
	return nil
}

// Kill stops the daemon at once with SIGKILL, as a crash would.
func (p *Process) Kill() {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.cmd, p.done = nil, nil
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	<-done
}

// Tail returns the last n bytes of the daemon's log.
func (p *Process) Tail(n int64) string {
	f, err := os.Open(p.LogPath)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err.Error()
	}
	off := st.Size() - n
	if off < 0 {
		off = 0
	}
	buf := make([]byte, st.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil {
		return err.Error()
	}
	return string(buf)
}

// run runs a one-shot command (a schema init, a migration) to completion,
// its output appended to logPath and quoted in the error when it fails.
func run(ctx context.Context, logPath string, cred *syscall.Credential, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Credential: cred}
	out, err := cmd.CombinedOutput()
	if logPath != "" {
		if f, ferr := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); ferr == nil {
			fmt.Fprintf(f, "$ %s %v\n%s\n", name, args, out)
			f.Close()
		}
	}
	if err != nil {
		return fmt.Errorf("%s %v: %w\n%s", filepath.Base(name), args, err, out)
	}
	return nil
}

// waitFor polls check every 100ms until it returns nil, the process it
// depends on exits, or the deadline passes. The last error is returned.
func waitFor(ctx context.Context, timeout time.Duration, p *Process, check func(context.Context) error) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if last = check(ctx); last == nil {
			return true, nil
		}
		if p != nil && p.Exited() {
			return false, fmt.Errorf("%s exited while starting: %v\n%s", p.Name, last, p.Tail(4000))
		}
		return false, nil
	})
	if err == nil || last == nil || !wait.Interrupted(err) {
		return err
	}
	name := "condition"
	if p != nil {
		name = p.Name
	}
	return errors.Join(fmt.Errorf("%s not ready after %s", name, timeout), last)
}
