// Package e2e tests network-controller against the real components a user
// runs: etcd and kube-apiserver, and neutron-server with ML2/OVN on MariaDB,
// all started by test/framework for the whole package. Nothing here is a
// fake.
package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/samplecrd/network-controller/test/framework"
)

// stack is shared by every test of the package: starting Neutron costs
// about ten seconds. Tests isolate themselves by namespace and by name.
var stack *framework.Stack

// controllerBinary and injectorBinary are built from this tree.
var controllerBinary, injectorBinary string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	start := time.Now()
	var err error
	stack, err = framework.Start(ctx, framework.Options{Neutron: true, Keystone: true})
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 1
	}
	fmt.Printf("e2e: stack up in %s (%s)\n", time.Since(start).Round(time.Millisecond), stack.Dir)

	// The controller under test is the binary a user runs, built from this tree.
	controllerBinary = filepath.Join(stack.Dir, "network-controller")
	injectorBinary = filepath.Join(stack.Dir, "envoy-injector")
	for binary, pkg := range map[string]string{controllerBinary: ".", injectorBinary: "./cmd/envoy-injector"} {
		build := exec.CommandContext(ctx, "go", "build", "-o", binary, pkg)
		build.Dir = stack.RepoRoot
		if out, err := build.CombinedOutput(); err != nil {
			stack.Stop()
			fmt.Fprintf(os.Stderr, "e2e: building %s: %v\n%s", pkg, err, out)
			return 1
		}
	}

	// An interrupted run (Ctrl-C, go test's own timeout signal) still stops
	// the daemons; a killed one relies on their parent-death signal.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		<-sig
		stack.Stop()
		os.Exit(1)
	}()
	defer stack.Stop()

	code := m.Run()
	if code != 0 {
		fmt.Fprintf(os.Stderr, "e2e: failed; component logs follow\n%s", stack.Logs())
	}
	return code
}
