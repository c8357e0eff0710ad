package framework

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

// The node's host-global names. The kubelet's cgroups (kubepods) and
// iptables chains (KUBE-*) cannot be renamed, so one node runs per machine
// at a time (nodeLock), and its bridge and ranges are fixed too.

// nodeUsers are the node components' API users and groups; the default
// RBAC bindings and the Node authorizer give each what it needs.
var nodeUsers = map[string][]string{
	"system:node:" + NodeName:        {"system:nodes"},
	"system:kube-controller-manager": nil,
	"system:kube-scheduler":          nil,
	"system:kube-proxy":              nil,
}

// Node is a real one-machine Kubernetes node: containerd with the CNI
// bridge plugin, the kubelet, kube-proxy (iptables), and the
// kube-controller-manager and kube-scheduler that make Deployments run on
// it. The recipe and every host change it makes are in
// ../shared/notes/real-node.md and docs/real-node.md.
type Node struct {
	Containerd, ControllerManager, Scheduler, Kubelet, Proxy *Process

	// ContainerdSocket is containerd's address, for ctr.
	ContainerdSocket string

	binDir string
	lock   *os.File
}

// prepareNodeHost takes the node lock, removes what a crashed run left,
// saves the sysctls, and makes the bridge that the API server and
// neutron-server bind to before they start.
func prepareNodeHost() (*Node, error) {
	if os.Getuid() != 0 {
		return nil, errors.New("a node needs root (bridges, iptables, cgroups, mounts)")
	}
	lock, err := os.OpenFile(nodeLockFile, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		lock.Close()
		return nil, fmt.Errorf("another node runs on this machine (%s is locked): stop it first (make down)", nodeLockFile)
	}
	n := &Node{lock: lock, ContainerdSocket: filepath.Join(nodeStateDir, "containerd", "containerd.sock")}
	n.cleanup()
	if err := os.MkdirAll(nodeStateDir, 0o755); err != nil {
		n.release()
		return nil, err
	}
	if err := saveSysctls(filepath.Join(nodeStateDir, "sysctl.orig")); err != nil {
		n.release()
		return nil, err
	}
	for _, args := range [][]string{
		{"link", "add", nodeBridge, "type", "bridge"},
		{"addr", "add", NodeIP + "/16", "dev", nodeBridge},
		{"link", "set", nodeBridge, "up"},
		// Without this route, a connection to a ClusterIP that kube-proxy
		// has not (yet) rewritten would leave the machine by its default
		// route.
		{"route", "add", serviceCIDR, "dev", nodeBridge},
	} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			n.cleanup()
			n.release()
			return nil, fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	return n, nil
}

// start starts the node's components against the control plane and waits
// until the node is Ready, Pods can be admitted, and kube-proxy has
// written the kubernetes Service's rules.
func (n *Node) start(ctx context.Context, cp *ControlPlane, binDir, imagesDir string) error {
	n.binDir = binDir
	for _, b := range []string{"kubelet", "kube-controller-manager", "kube-scheduler", "kube-proxy"} {
		if _, err := os.Stat(filepath.Join(binDir, b)); err != nil {
			return fmt.Errorf("%s missing in %s: run hack/build-controlplane.sh (make controlplane): %w", b, binDir, err)
		}
	}
	for _, b := range []string{"containerd", "ctr", "runc", "iptables"} {
		if _, err := exec.LookPath(b); err != nil {
			return fmt.Errorf("%s not found: run hack/install-packages.sh (make packages)", b)
		}
	}
	files, err := writeNodeConfig(nodeStateDir, cp)
	if err != nil {
		return err
	}
	if err := n.startContainerd(ctx); err != nil {
		return err
	}
	if err := n.ImportImages(ctx, imagesDir); err != nil {
		return err
	}
	ports, err := FreePorts(2)
	if err != nil {
		return err
	}
	n.ControllerManager = n.process("kube-controller-manager",
		"--kubeconfig="+files.kubeconfig["system:kube-controller-manager"],
		"--authentication-kubeconfig="+files.kubeconfig["system:kube-controller-manager"],
		"--authorization-kubeconfig="+files.kubeconfig["system:kube-controller-manager"],
		"--bind-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", ports[0]), "--leader-elect=false",
		"--service-account-private-key-file="+files.saKey, "--root-ca-file="+cp.CAFile,
		"--use-service-account-credentials=true", "--controllers=*", "--service-cluster-ip-range="+serviceCIDR)
	n.Scheduler = n.process("kube-scheduler",
		"--kubeconfig="+files.kubeconfig["system:kube-scheduler"],
		"--authentication-kubeconfig="+files.kubeconfig["system:kube-scheduler"],
		"--authorization-kubeconfig="+files.kubeconfig["system:kube-scheduler"],
		"--bind-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", ports[1]), "--leader-elect=false")
	n.Kubelet = n.process("kubelet", "--config="+files.kubeletConfig,
		"--kubeconfig="+files.kubeconfig["system:node:"+NodeName],
		"--root-dir="+filepath.Join(nodeStateDir, "kubelet", "root"),
		"--cert-dir="+filepath.Join(nodeStateDir, "kubelet", "pki"),
		"--volume-plugin-dir="+filepath.Join(nodeStateDir, "kubelet", "volume-plugins"),
		"--hostname-override="+NodeName, "--node-ip="+NodeIP, "--v=2")
	n.Proxy = n.process("kube-proxy", "--config="+files.proxyConfig)
	for _, p := range []*Process{n.ControllerManager, n.Scheduler, n.Kubelet, n.Proxy} {
		if err := p.Start(); err != nil {
			return err
		}
	}
	return n.waitReady(ctx, cp.AdminConfig)
}

// process is a node component run from binDir, logging under the state dir.
func (n *Node) process(name string, args ...string) *Process {
	return &Process{
		Name: name, Path: filepath.Join(n.binDir, name), Args: args,
		Dir: nodeStateDir, LogPath: filepath.Join(nodeStateDir, name+".log"),
	}
}

func (n *Node) startContainerd(ctx context.Context) error {
	n.Containerd = &Process{
		Name: "containerd", Path: "containerd",
		Args: []string{"--config", filepath.Join(nodeStateDir, "containerd", "config.toml")},
		Dir:  nodeStateDir, LogPath: filepath.Join(nodeStateDir, "containerd.log"),
	}
	if err := n.Containerd.Start(); err != nil {
		return err
	}
	return waitFor(ctx, 30*time.Second, n.Containerd, func(ctx context.Context) error {
		_, err := n.ctr(ctx, "version")
		return err
	})
}

// ctr runs containerd's client on the node's containerd, in the
// namespace of the kubelet's containers.
func (n *Node) ctr(ctx context.Context, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, "ctr", append([]string{"--address", n.ContainerdSocket, "-n", "k8s.io"}, args...)...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("ctr %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// ImportImages imports every OCI archive (*.tar) of dir into the node, so
// that Pods run them without a registry (hack/build-images.sh makes them).
func (n *Node) ImportImages(ctx context.Context, dir string) error {
	archives, err := filepath.Glob(filepath.Join(dir, "*.tar"))
	if err != nil {
		return err
	}
	if len(archives) == 0 {
		return fmt.Errorf("no image archives in %s: run hack/build-images.sh (make images)", dir)
	}
	for _, a := range archives {
		if _, err := n.ctr(ctx, "images", "import", a); err != nil {
			return err
		}
	}
	return nil
}

// ContainerPID returns the host PID of a running container's first
// process, so a test can read what the kernel says of it in /proc.
func (n *Node) ContainerPID(ctx context.Context, containerID string) (int, error) {
	out, err := n.ctr(ctx, "tasks", "ls")
	if err != nil {
		return 0, err
	}
	id := strings.TrimPrefix(containerID, "containerd://")
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == id {
			var pid int
			_, err := fmt.Sscan(f[1], &pid)
			return pid, err
		}
	}
	return 0, fmt.Errorf("container %s is not running", id)
}

// waitReady waits until the node is Ready, the default ServiceAccount
// exists (Pods are refused before), and kube-proxy has written the rules
// of the kubernetes Service (its /healthz passes before that).
func (n *Node) waitReady(ctx context.Context, config *rest.Config) error {
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return err
	}
	if err := waitFor(ctx, 90*time.Second, n.Kubelet, func(ctx context.Context) error {
		node, err := client.CoreV1().Nodes().Get(ctx, NodeName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				return nil
			}
		}
		return errors.New("node not Ready yet")
	}); err != nil {
		return err
	}
	if err := waitFor(ctx, 60*time.Second, n.ControllerManager, func(ctx context.Context) error {
		_, err := client.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err
	}); err != nil {
		return err
	}
	svc, err := client.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		return err
	}
	return waitFor(ctx, 60*time.Second, n.Proxy, func(ctx context.Context) error {
		out, err := exec.CommandContext(ctx, "iptables", "-w", "-t", "nat", "-S", "KUBE-SERVICES").CombinedOutput()
		if err != nil || !strings.Contains(string(out), svc.Spec.ClusterIP+"/32") {
			return fmt.Errorf("kube-proxy has not written the rules of %s yet: %v", svc.Spec.ClusterIP, err)
		}
		return nil
	})
}

// processes are the node's daemons, for Stack.Logs.
func (n *Node) processes() []*Process {
	return []*Process{n.Containerd, n.ControllerManager, n.Scheduler, n.Kubelet, n.Proxy}
}

// Stop deletes every Pod through the kubelet, stops the components, and
// undoes every change the node made to the host (see cleanup).
func (n *Node) Stop(ctx context.Context, admin *rest.Config) {
	// Nothing may recreate Pods while the kubelet tears them down (CNI DEL,
	// unmounts); then the kubelet and kube-proxy go.
	for _, p := range []*Process{n.ControllerManager, n.Scheduler} {
		if p != nil {
			_ = p.Stop(10 * time.Second)
		}
	}
	if admin != nil && n.Kubelet != nil && !n.Kubelet.Exited() {
		n.deleteAllPods(ctx, admin)
	}
	for _, p := range []*Process{n.Kubelet, n.Proxy, n.Containerd} {
		if p != nil {
			_ = p.Stop(10 * time.Second)
		}
	}
	n.cleanup()
	n.release()
}

// deleteAllPods deletes every Pod and waits until the kubelet has stopped
// their containers.
func (n *Node) deleteAllPods(ctx context.Context, admin *rest.Config) {
	client, err := kubernetes.NewForConfig(admin)
	if err != nil {
		return
	}
	nss, err := client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	for _, ns := range nss.Items {
		_ = client.CoreV1().Pods(ns.Name).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](1)}, metav1.ListOptions{})
	}
	_ = waitFor(ctx, 60*time.Second, nil, func(ctx context.Context) error {
		out, err := n.ctr(ctx, "tasks", "ls", "-q")
		if err != nil || strings.TrimSpace(out) != "" {
			return fmt.Errorf("containers still running: %q %v", out, err)
		}
		return nil
	})
}

func (n *Node) release() {
	if n.lock != nil {
		n.lock.Close()
		n.lock = nil
	}
}

// CleanupNodeHost removes what a node run that was killed left on this
// machine (local-down.sh runs it after a stack that had to be killed).
func CleanupNodeHost() {
	(&Node{}).cleanup()
}

// cleanup removes everything a node run (this one, or one that crashed)
// left on the host: processes, containers, mounts, network namespaces,
// the bridge, the KUBE-* iptables chains, the Pod cgroups, changed
// sysctls, and the state directory. Each step tolerates that there is
// nothing to do.
func (n *Node) cleanup() {
	// Containers outlive containerd and their shims outlive everything: kill
	// whatever runs from the state directory or in a Pod cgroup.
	killMatching(func(cmdline string) bool { return strings.Contains(cmdline, nodeStateDir) })
	for _, f := range globAll("/sys/fs/cgroup/*/kubepods", "cgroup.procs") {
		data, _ := os.ReadFile(f)
		for _, field := range strings.Fields(string(data)) {
			if pid, err := strconv.Atoi(field); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
	unmountUnder(nodeStateDir)
	netns, _ := filepath.Glob("/run/netns/cni-*")
	for _, ns := range netns {
		_ = syscall.Unmount(ns, syscall.MNT_DETACH)
		_ = os.Remove(ns)
	}
	_ = exec.Command("ip", "link", "del", nodeBridge).Run() // takes the service route along
	for _, ipt := range []string{"iptables", "ip6tables"} {
		removeKubeChains(ipt)
	}
	for _, root := range globDirs("/sys/fs/cgroup/*/kubepods") {
		removeCgroupTree(root)
	}
	restoreHost(filepath.Join(nodeStateDir, "sysctl.orig"))
	_ = os.RemoveAll(nodeStateDir)
}
