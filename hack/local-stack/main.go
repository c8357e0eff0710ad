// Command local-stack runs the project's real stack — etcd, kube-apiserver
// with the CRDs installed, OVN, MariaDB, Keystone and neutron-server, and a real node
// unless --node=false — for a person,
// until it receives SIGTERM or SIGINT. hack/local-up.sh starts it in the
// background and hack/local-down.sh stops it; it uses the same code as the
// e2e tests (test/framework), so what a person sees is what the tests test.
//
// When the stack is ready it writes DIR/env, a shell file with KUBECONFIG,
// NEUTRON_ENDPOINT, OVN_NB_DB, ETCD_ENDPOINTS, OS_CLIENT_CONFIG_FILE and
// OS_CLOUD (the controller's clouds.yaml), and CONTAINERD_ADDRESS (the
// node's containerd, for make deploy): its presence is the
// readiness signal local-up.sh waits for.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/samplecrd/network-controller/test/framework"
)

func main() {
	dir := flag.String("dir", ".local", "directory for the stack's data, logs, kubeconfig and env file; emptied first")
	node := flag.Bool("node", true, "also run a real node (containerd, kubelet, kube-proxy, kube-controller-manager, kube-scheduler) for make deploy; needs root")
	cleanup := flag.Bool("cleanup", false, "only remove what a killed node left on this machine (processes, mounts, iptables chains, cgroups, sysctls), then exit")
	flag.Parse()
	if *cleanup {
		framework.CleanupNodeHost()
		return
	}
	if err := run(*dir, *node); err != nil {
		fmt.Fprintf(os.Stderr, "local-stack: %v\n", err)
		os.Exit(1)
	}
}

func run(dir string, node bool) error {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	stackDir := filepath.Join(dir, "stack")
	envFile := filepath.Join(dir, "env")
	_ = os.Remove(envFile)
	if err := os.RemoveAll(stackDir); err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	stack, err := framework.Start(ctx, framework.Options{Neutron: true, Keystone: true, Node: node, Dir: stackDir})
	if err != nil {
		return err
	}
	defer stack.Stop()

	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := framework.WriteKubeconfig(stack.ControlPlane.AdminConfig, "admin", kubeconfig); err != nil {
		return err
	}
	env := fmt.Sprintf("export KUBECONFIG=%s\nexport NEUTRON_ENDPOINT=%s\nexport OVN_NB_DB=%s\nexport ETCD_ENDPOINTS=%s\n",
		kubeconfig, stack.Neutron.Endpoint, stack.Neutron.NBConnection, stack.ControlPlane.EtcdURL)
	// The controller's way in, as in a cloud: Keystone, through clouds.yaml.
	env += fmt.Sprintf("export OS_CLIENT_CONFIG_FILE=%s\nexport OS_CLOUD=%s\n", stack.Keystone.CloudsYAML, framework.PasswordCloud)
	if stack.Node != nil {
		env += fmt.Sprintf("export CONTAINERD_ADDRESS=%s\n", stack.Node.ContainerdSocket)
	}
	// Written last and renamed into place: its presence means ready.
	if err := os.WriteFile(envFile+".tmp", []byte(env), 0o644); err != nil {
		return err
	}
	if err := os.Rename(envFile+".tmp", envFile); err != nil {
		return err
	}
	fmt.Printf("local-stack: ready in %s\n%s", time.Since(start).Round(time.Millisecond), env)

	<-ctx.Done()
	fmt.Println("local-stack: stopping")
	_ = os.Remove(envFile)
	return nil
}
