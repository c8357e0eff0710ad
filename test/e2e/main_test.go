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
	"path/filepath"
	"testing"
	"time"

	"github.com/samplecrd/network-controller/test/framework"
)

// stack is shared by every test of the package: starting Neutron costs
// about ten seconds. Tests isolate themselves by namespace and by name.
// Its Network CRD converts through the conversion webhook that the test
// process serves for the whole run (framework.Options.ConversionWebhook):
// the controllers read and write v2, the stored version, while the tests
// make and read Networks through v1 too, and each test's controller
// lives for that test only.
var stack *framework.Stack

// controllerBinary and injectorBinary are built from this tree.
var controllerBinary, injectorBinary string

func TestMain(m *testing.M) {
	os.Exit(framework.Main(m, "e2e", framework.Options{Neutron: true, Keystone: true, ConversionWebhook: true}, 3*time.Minute, buildBinaries))
}

// buildBinaries builds the programs under test from this tree: the
// controller is the binary a user runs.
func buildBinaries(ctx context.Context, s *framework.Stack) error {
	stack = s
	controllerBinary = filepath.Join(stack.Dir, "network-controller")
	injectorBinary = filepath.Join(stack.Dir, "envoy-injector")
	for binary, pkg := range map[string]string{controllerBinary: ".", injectorBinary: "./cmd/envoy-injector"} {
		build := exec.CommandContext(ctx, "go", "build", "-o", binary, pkg)
		build.Dir = stack.RepoRoot
		if out, err := build.CombinedOutput(); err != nil {
			return fmt.Errorf("building %s: %w\n%s", pkg, err, out)
		}
	}
	return nil
}
