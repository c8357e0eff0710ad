package framework

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

const (
	// NodeIP is the node's address: the bridge's, where every Pod and the
	// host meet. Whatever Pods must reach listens here, not on loopback
	// (which a Pod cannot reach) nor on the machine's own interfaces.
	NodeIP      = "10.88.0.1"
	nodeBridge  = "cni0"
	podCIDR     = "10.88.0.0/16"
	serviceCIDR = "10.96.0.0/24"
	// NodeName is the node's name in the API.
	NodeName = "local-node"
	// PauseImage is the sandbox image, built here (hack/build-images.sh).
	PauseImage = "localhost/pause:local"
	// nodeStateDir holds what a crashed run leaves behind, at a fixed path
	// so that the next start can clean it up (see cleanupNode).
	nodeStateDir = "/var/tmp/network-controller-node"
	nodeLockFile = "/run/network-controller-node.lock"
)

// nodeSysctls are what the kubelet and the CNI bridge plugin change;
// their values are saved before the first start and restored by Stop.
var nodeSysctls = []string{
	"vm.overcommit_memory", "vm.panic_on_oom", "kernel.panic", "kernel.panic_on_oops",
	"kernel.keys.root_maxkeys", "kernel.keys.root_maxbytes", "net.ipv4.ip_forward",
	"net.ipv4.conf.all.route_localnet",
}

// nodeFiles are the configuration files the node's components read.
type nodeFiles struct {
	kubeconfig    map[string]string // by user
	saKey         string
	kubeletConfig string
	proxyConfig   string
}

// writeNodeConfig writes containerd's, the CNI plugin's, the kubelet's and
// kube-proxy's configuration, and a kubeconfig per component, under dir.
func writeNodeConfig(dir string, cp *ControlPlane) (nodeFiles, error) {
	files := nodeFiles{kubeconfig: map[string]string{}, saKey: cp.SAKeyFile}
	for _, d := range []string{"containerd", "cni/net.d", "cni/ipam", "kubelet/pod-logs", "pki"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return files, err
		}
	}
	for user, token := range cp.Tokens {
		config := rest.AnonymousClientConfig(cp.AdminConfig)
		config.BearerToken = token
		path := filepath.Join(dir, "pki", strings.ReplaceAll(user, ":", "-")+".kubeconfig")
		if err := WriteKubeconfig(config, user, path); err != nil {
			return files, err
		}
		files.kubeconfig[user] = path
	}

	containerd := fmt.Sprintf(`version = 2
root = %[1]q
state = %[2]q
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs"]
[grpc]
  address = %[3]q
[ttrpc]
  address = "%[3]s.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = %[4]q
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %[5]q
  # This machine has no CAP_SYS_RESOURCE: an oom_score_adj below
  # containerd's own (-998 for sandboxes) makes runc fail every Pod.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "/usr/sbin/runc"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = %[6]q
`, filepath.Join(dir, "containerd", "root"), filepath.Join(dir, "containerd", "state"),
		filepath.Join(dir, "containerd", "containerd.sock"), filepath.Join(dir, "containerd", "opt"),
		PauseImage, filepath.Join(dir, "cni", "net.d"))

	// No default route and no masquerading: Pod traffic stays on this
	// machine. The only route out of the pod network is to Services.
	cni := fmt.Sprintf(`{
  "cniVersion": "1.0.0",
  "name": "local-node",
  "plugins": [{
    "type": "bridge", "bridge": %q, "isGateway": true, "ipMasq": false, "hairpinMode": true,
    "ipam": {
      "type": "host-local", "dataDir": %q,
      "ranges": [[{"subnet": %q, "gateway": %q}]],
      "routes": [{"dst": %q}]
    }
  }]
}
`, nodeBridge, filepath.Join(dir, "cni", "ipam"), podCIDR, NodeIP, serviceCIDR)

	kubelet := map[string]any{
		"apiVersion":               "kubelet.config.k8s.io/v1beta1",
		"kind":                     "KubeletConfiguration",
		"failCgroupV1":             false, // this machine kind is cgroup v1 (hybrid)
		"cgroupDriver":             "cgroupfs",
		"containerRuntimeEndpoint": "unix://" + filepath.Join(dir, "containerd", "containerd.sock"),
		"failSwapOn":               false,
		"address":                  NodeIP,
		"port":                     10250,
		"readOnlyPort":             0,
		"healthzBindAddress":       "127.0.0.1",
		"healthzPort":              10248,
		"authentication": map[string]any{
			"anonymous": map[string]any{"enabled": false},
			"webhook":   map[string]any{"enabled": true},
			// The API server's client certificate (logs, exec).
			"x509": map[string]any{"clientCAFile": cp.KubeletClient.CAFile},
		},
		"authorization": map[string]any{"mode": "Webhook"},
		"clusterDomain": "cluster.local",
		"podLogsDir":    filepath.Join(dir, "kubelet", "pod-logs"),
		// Images come from archives, never from a registry: the kubelet
		// must never collect or evict them.
		"imageGCHighThresholdPercent": 100,
		"imageGCLowThresholdPercent":  99,
		"evictionHard": map[string]string{
			"memory.available": "100Mi", "nodefs.available": "1%", "nodefs.inodesFree": "1%", "imagefs.available": "1%",
		},
		"serializeImagePulls": false,
	}
	proxy := map[string]any{
		"apiVersion":         "kubeproxy.config.k8s.io/v1alpha1",
		"kind":               "KubeProxyConfiguration",
		"mode":               "iptables",
		"clientConnection":   map[string]any{"kubeconfig": files.kubeconfig["system:kube-proxy"]},
		"hostnameOverride":   NodeName,
		"clusterCIDR":        podCIDR,
		"bindAddress":        NodeIP,
		"healthzBindAddress": "127.0.0.1:10256",
		"metricsBindAddress": "127.0.0.1:10249",
		// Only the bridge: route_localnet stays as it is.
		"nodePortAddresses": []string{NodeIP + "/32"},
		// Zeros: kube-proxy leaves the conntrack sysctls alone.
		"conntrack": map[string]any{"maxPerCore": 0, "min": 0, "tcpEstablishedTimeout": "0s", "tcpCloseWaitTimeout": "0s"},
	}
	files.kubeletConfig = filepath.Join(dir, "kubelet", "config.yaml")
	files.proxyConfig = filepath.Join(dir, "kube-proxy.yaml")
	for path, content := range map[string]any{
		filepath.Join(dir, "containerd", "config.toml"):              containerd,
		filepath.Join(dir, "cni", "net.d", "10-local-node.conflist"): cni,
		files.kubeletConfig: kubelet,
		files.proxyConfig:   proxy,
	} {
		data, ok := content.(string)
		if !ok {
			b, err := yaml.Marshal(content)
			if err != nil {
				return files, err
			}
			data = string(b)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			return files, err
		}
	}
	return files, nil
}

// Paths outside the state directory that the kubelet or the CNI plugins
// create; removed on clean-up only when a start of ours created them.
var nodeHostPaths = []string{"/var/lib/kubelet", "/var/lib/cni", "/usr/libexec/kubernetes"}

// saveSysctls records the values the node will change, and which of
// nodeHostPaths exist, unless a crashed run already recorded them (its
// record holds the machine's real originals).
func saveSysctls(path string) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	var b bytes.Buffer
	for _, k := range nodeSysctls {
		v, err := os.ReadFile(sysctlPath(k))
		if err == nil {
			fmt.Fprintf(&b, "%s=%s\n", k, strings.TrimSpace(string(v)))
		}
	}
	for _, p := range nodeHostPaths {
		if _, err := os.Stat(p); err != nil {
			fmt.Fprintf(&b, "created:%s\n", p)
		}
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

func sysctlPath(key string) string {
	return filepath.Join("/proc/sys", strings.ReplaceAll(key, ".", "/"))
}

// killMatching SIGKILLs every process whose command line matches.
func killMatching(match func(cmdline string) bool) {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	self := os.Getpid()
	killed := false
	for _, f := range procs {
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(f)))
		if err != nil || pid == self {
			continue
		}
		data, err := os.ReadFile(f)
		if err == nil && match(string(bytes.ReplaceAll(data, []byte{0}, []byte{' '}))) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			killed = true
		}
	}
	if killed {
		// Let the kernel release their mounts before they are unmounted.
		time.Sleep(500 * time.Millisecond)
	}
}

// unmountUnder detaches every mount below dir, deepest first.
func unmountUnder(dir string) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return
	}
	defer f.Close()
	var mounts []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 4 && strings.HasPrefix(fields[4], dir+"/") {
			mounts = append(mounts, fields[4])
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(mounts)))
	for _, m := range mounts {
		if err := syscall.Unmount(m, 0); err != nil {
			_ = syscall.Unmount(m, syscall.MNT_DETACH)
		}
	}
}

// removeKubeChains deletes the kubelet's and kube-proxy's iptables chains
// (KUBE-*) and every jump to them, in every table, and nothing else.
func removeKubeChains(ipt string) {
	for _, table := range []string{"filter", "nat", "mangle"} {
		out, err := exec.Command(ipt, "-w", "-t", table, "-S").Output()
		if err != nil {
			continue
		}
		var chains []string
		for _, line := range strings.Split(string(out), "\n") {
			f := strings.Fields(line)
			switch {
			case len(f) == 2 && f[0] == "-N" && strings.HasPrefix(f[1], "KUBE-"):
				chains = append(chains, f[1])
			case len(f) > 2 && f[0] == "-A" && !strings.HasPrefix(f[1], "KUBE-") && strings.Contains(line, " -j KUBE-"):
				// A jump from a built-in chain: delete that exact rule. Its
				// comment is quoted as for a shell, so a shell splits it.
				_ = exec.Command("sh", "-c", fmt.Sprintf("%s -w -t %s -D %s", ipt, table, strings.TrimPrefix(line, "-A "))).Run()
			}
		}
		for _, c := range chains {
			_ = exec.Command(ipt, "-w", "-t", table, "-F", c).Run()
		}
		for _, c := range chains {
			_ = exec.Command(ipt, "-w", "-t", table, "-X", c).Run()
		}
	}
}

// removeCgroupTree removes a cgroup directory and its children, deepest
// first (a cgroup can only be removed once empty).
func removeCgroupTree(root string) {
	var dirs []string
	_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, path)
		}
		return nil
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		_ = syscall.Rmdir(dirs[i])
	}
}

// restoreHost puts back the sysctls saved by saveSysctls and removes the
// host paths a node run created.
func restoreHost(saved string) {
	data, err := os.ReadFile(saved)
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(data), "\n") {
		if p, ok := strings.CutPrefix(line, "created:"); ok {
			_ = os.RemoveAll(p)
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok {
			_ = os.WriteFile(sysctlPath(k), []byte(v), 0o644)
		}
	}
}

func globDirs(pattern string) []string {
	m, _ := filepath.Glob(pattern)
	return m
}

// globAll returns every file called name below the directories matching
// pattern.
func globAll(pattern, name string) []string {
	var files []string
	for _, root := range globDirs(pattern) {
		_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && d.Name() == name {
				files = append(files, path)
			}
			return nil
		})
	}
	return files
}
