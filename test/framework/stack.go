// Package framework starts the real components that network-controller
// works with — etcd, kube-apiserver, OVN's databases, MariaDB and
// neutron-server — on free loopback ports in a temporary directory, for the
// e2e tests, the benchmarks and the local stack (hack/local-up.sh); and,
// when asked, a real node (containerd, kubelet, kube-proxy,
// kube-controller-manager, kube-scheduler) that runs the project's images.
//
// Every daemon runs in its own process group and dies with the process that
// started it, so an interrupted test leaves nothing running.
package framework

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"k8s.io/client-go/rest"
)

// Options choose what a Stack runs.
type Options struct {
	// Neutron also starts OVN, MariaDB and neutron-server.
	Neutron bool
	// Node also starts a real node, and makes the API server and
	// neutron-server listen on its bridge (NodeIP) so that Pods reach them.
	// It needs root, and only one runs per machine.
	Node bool
	// Keystone (with Neutron) also starts Keystone and a second
	// neutron-server that authenticates through it (Neutron.KeystoneServer),
	// and writes a clouds.yaml for the controller (Keystone.CloudsYAML).
	Keystone bool
	// Dir is where the stack keeps its data and logs; empty means a new
	// temporary directory, removed by Stop.
	Dir string
	// ConversionWebhook serves the Network CRD's conversion webhook from
	// this process for as long as the stack runs (Stack.Conversion), and
	// points the control plane's CRD at it, so that v1 and v2 are both
	// read and written whatever controller runs, or none.
	ConversionWebhook bool
}

// Stack is a running set of real components.
type Stack struct {
	ControlPlane *ControlPlane
	// Neutron is nil unless Options.Neutron was set.
	Neutron *Neutron
	// Node is nil unless Options.Node was set.
	Node *Node
	// Keystone is nil unless Options.Keystone was set.
	Keystone *Keystone
	// Conversion is nil unless Options.ConversionWebhook was set.
	Conversion *ConversionWebhook
	// Dir holds every component's data and log.
	Dir string
	// RepoRoot is the root of this repository.
	RepoRoot string

	binDir    string
	removeDir bool
}

// StartOtherCluster starts a second control plane (etcd and
// kube-apiserver on loopback, the CRDs installed) under dir: another
// Kubernetes cluster, with a kube-system namespace of its own, sharing this
// stack's Neutron as clusters share an OpenStack project. The caller stops
// it. Its CRD names the in-cluster conversion Service of artifacts/crd,
// which it has no Pod behind: v1 requests are refused until the caller
// points it at a webhook (ServeConversionWebhook's Use, or a controller's
// own).
func (s *Stack) StartOtherCluster(ctx context.Context, dir string) (*ControlPlane, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	return startControlPlane(ctx, dir, s.binDir, filepath.Join(s.RepoRoot, "artifacts", "crd"), loopbackControlPlane)
}

// Start starts a stack. The control plane and Neutron come up side by side.
func Start(ctx context.Context, opts Options) (*Stack, error) {
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	s := &Stack{RepoRoot: root, Dir: opts.Dir}
	if s.Dir == "" {
		if s.Dir, err = os.MkdirTemp("", "network-controller-stack-"); err != nil {
			return nil, err
		}
		s.removeDir = true
	} else if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return nil, err
	}
	// The Neutron daemons run as nobody and must reach their directories.
	if err := os.Chmod(s.Dir, 0o755); err != nil {
		return nil, err
	}
	binDir := os.Getenv("NC_BIN_DIR")
	if binDir == "" {
		binDir = filepath.Join(root, "bin")
	}
	s.binDir = binDir

	if err := os.MkdirAll(filepath.Join(s.Dir, "kube"), 0o700); err != nil {
		return nil, err
	}
	cpOpts, bindIP := loopbackControlPlane, "127.0.0.1"
	if opts.Node {
		// The bridge first: the API server and neutron-server bind to it.
		if s.Node, err = prepareNodeHost(); err != nil {
			s.Stop()
			return nil, err
		}
		cpOpts = controlPlaneOptions{bindIP: NodeIP, serviceCIDR: serviceCIDR, users: nodeUsers}
		bindIP = NodeIP
	}
	var wg sync.WaitGroup
	var cpErr, nErr, kErr error
	if opts.Neutron && opts.Keystone {
		wg.Go(func() {
			s.Keystone, kErr = startKeystone(ctx, filepath.Join(s.Dir, "keystone"), bindIP)
		})
	}
	wg.Go(func() {
		s.ControlPlane, cpErr = startControlPlane(ctx, filepath.Join(s.Dir, "kube"), binDir, filepath.Join(root, "artifacts", "crd"), cpOpts)
	})
	if opts.Neutron {
		wg.Go(func() {
			s.Neutron, nErr = startNeutron(ctx, filepath.Join(s.Dir, "neutron"), bindIP)
		})
	}
	wg.Wait()
	if err := errors.Join(cpErr, nErr, kErr); err != nil {
		s.Stop()
		return nil, fmt.Errorf("starting the stack in %s: %w", s.Dir, err)
	}
	if s.Keystone != nil {
		if err := s.Neutron.startKeystoneServer(ctx, s.Keystone); err != nil {
			s.Stop()
			return nil, fmt.Errorf("starting neutron-server with Keystone: %w", err)
		}
		if err := s.Keystone.setUp(ctx, s.Neutron.KeystoneEndpoint); err != nil {
			s.Stop()
			return nil, fmt.Errorf("setting Keystone up: %w", err)
		}
	}
	if opts.ConversionWebhook {
		if s.Conversion, err = ServeConversionWebhook(ctx, filepath.Join(s.Dir, "conversion-webhook"), s.ControlPlane.AdminConfig); err != nil {
			s.Stop()
			return nil, err
		}
		if err := s.Conversion.Use(ctx, s.ControlPlane); err != nil {
			s.Stop()
			return nil, err
		}
	}
	if s.Node != nil {
		if err := s.Node.start(ctx, s.ControlPlane, binDir, filepath.Join(binDir, "images")); err != nil {
			err = fmt.Errorf("starting the node: %w\n%s", err, s.Logs())
			s.Stop()
			return nil, err
		}
	}
	return s, nil
}

// Stop stops every component and, when Start made the directory, removes it.
func (s *Stack) Stop() {
	if s.Node != nil {
		var admin *rest.Config
		if s.ControlPlane != nil {
			admin = s.ControlPlane.AdminConfig
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		s.Node.Stop(ctx, admin)
		cancel()
	}
	if s.Neutron != nil {
		s.Neutron.Stop()
	}
	if s.Keystone != nil {
		s.Keystone.Stop()
	}
	if s.ControlPlane != nil {
		s.ControlPlane.Stop()
	}
	if s.Conversion != nil {
		s.Conversion.Stop()
	}
	if s.removeDir {
		_ = os.RemoveAll(s.Dir)
	}
}

// Logs returns the tail of every component's log, for a failed test to print.
func (s *Stack) Logs() string {
	var procs []*Process
	if cp := s.ControlPlane; cp != nil {
		procs = append(procs, cp.Etcd, cp.APIServer)
	}
	if n := s.Neutron; n != nil {
		procs = append(procs, n.NB, n.SB, n.MariaDB, n.Server, n.KeystoneServer)
	}
	if s.Keystone != nil {
		procs = append(procs, s.Keystone.Server)
	}
	if s.Node != nil {
		procs = append(procs, s.Node.processes()...)
	}
	var b bytes.Buffer
	for _, p := range procs {
		if p != nil {
			fmt.Fprintf(&b, "===== %s (%s) =====\n%s\n", p.Name, p.LogPath, p.Tail(4000))
		}
	}
	if s.Neutron != nil {
		fmt.Fprintf(&b, "===== neutron-server.log =====\n%s\n", s.Neutron.ServerLog())
	}
	return b.String()
}

// RepoRoot finds the repository's root: the nearest directory above the
// working directory whose go.mod declares this module.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.HasPrefix(data, []byte("module github.com/samplecrd/network-controller\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside the network-controller repository")
		}
		dir = parent
	}
}
