package e2enode

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/samplecrd/network-controller/test/monitoring"

	apiextensionsclientset "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/samplecrd/network-controller/pkg/injector"
	"github.com/samplecrd/network-controller/test/framework"
)

// TestDeployedControllerReconciles: the controller running as Pods makes,
// updates in place and deletes a Network's Neutron network and subnet, in
// the project of its Secret's application credential: the Pods
// authenticated to Keystone, and neutron-server accepted their tokens.
func TestDeployedControllerReconciles(t *testing.T) {
	ctx := framework.TestContext(t, 3*time.Minute)
	ns := newNamespace(ctx, t, nil)
	createNetworks(ctx, t, ns, "web", 150, 1)
	before := waitAllReady(ctx, t, ns, 1, time.Minute)[0]

	patch := []byte(`{"spec":{"gateway":"10.150.0.254"}}`)
	if _, err := networkClient(t).SamplecrdV1().Networks(ns).Patch(ctx, "web-0", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	after := waitAllReady(ctx, t, ns, 1, time.Minute)[0]
	if after.Status.NetworkID != before.Status.NetworkID || after.Status.SubnetID != before.Status.SubnetID {
		t.Errorf("the update replaced the Neutron resources: %s/%s -> %s/%s", before.Status.NetworkID, before.Status.SubnetID, after.Status.NetworkID, after.Status.SubnetID)
	}
	subnet, err := subnets.Get(ctx, stack.Neutron.Client, after.Status.SubnetID).Extract()
	if err != nil {
		t.Fatal(err)
	}
	if subnet.GatewayIP != "10.150.0.254" {
		t.Errorf("Neutron's gateway is %s, want 10.150.0.254", subnet.GatewayIP)
	}
	if subnet.ProjectID != stack.Keystone.ProjectID {
		t.Errorf("the subnet is in project %q, want the application credential's %q", subnet.ProjectID, stack.Keystone.ProjectID)
	}

	if err := networkClient(t).SamplecrdV1().Networks(ns).Delete(ctx, "web-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(ctx, t, time.Minute, func(ctx context.Context) (bool, string, error) {
		_, err := networks.Get(ctx, stack.Neutron.Client, after.Status.NetworkID).Extract()
		return gophercloud.ResponseCodeIs(err, 404), fmt.Sprintf("Neutron network %s still there (%v)", after.Status.NetworkID, err), nil
	})
}

// TestLeaderPodDeletionHandsOver deletes the Pod that holds the Lease while
// Networks are being made: the other replica takes over within the lease
// duration, finishes the work, and Neutron holds no duplicate.
func TestLeaderPodDeletionHandsOver(t *testing.T) {
	ctx := framework.TestContext(t, 4*time.Minute)
	waitPodsReady(ctx, t, controllerNamespace, controllerSelector, 2, true, 2*time.Minute)
	ns := newNamespace(ctx, t, nil)
	holder := leaseHolder(ctx, t)
	leader, _, _ := strings.Cut(holder, "_") // identity = hostname (the Pod's name) + "_" + a UUID
	createNetworks(ctx, t, ns, "handover", 151, 10)
	if err := kubeClient(t).CoreV1().Pods(controllerNamespace).Delete(ctx, leader, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting the leader Pod %q: %v", leader, err)
	}
	const leaseDuration = 15 * time.Second // artifacts/deploy's default
	framework.Eventually(ctx, t, leaseDuration, func(ctx context.Context) (bool, string, error) {
		h := leaseHolder(ctx, t)
		return h != "" && h != holder, "the Lease is still held by " + h, nil
	})
	waitAllReady(ctx, t, ns, 10, 2*time.Minute)
	// A create the old leader had in flight may complete in Neutron after
	// the new leader's first list; its second list, LateCompletionGrace
	// (2 × --neutron-timeout: 60 s as deployed) after it starts, finds the
	// duplicate. So the wait covers that grace, with room for a loaded node.
	waitExactlyOneEach(ctx, t, ns, lateCompletionWait)
	waitPodsReady(ctx, t, controllerNamespace, controllerSelector, 2, true, 2*time.Minute)
}

// lateCompletionWait is how long a duplicate left by a replaced leader may
// live: the successor's grace period (60 s as deployed), and as much again.
const lateCompletionWait = 2 * time.Minute

// TestRolloutRestartLosesNothing restarts the Deployment while Networks are
// created before and during the rollout: every one becomes Ready, once.
func TestRolloutRestartLosesNothing(t *testing.T) {
	ctx := framework.TestContext(t, 5*time.Minute)
	ns := newNamespace(ctx, t, nil)
	createNetworks(ctx, t, ns, "before", 152, 10)
	kubectl(ctx, t, "-n", controllerNamespace, "rollout", "restart", "deployment/network-controller")
	createNetworks(ctx, t, ns, "during", 153, 10)
	kubectl(ctx, t, "-n", controllerNamespace, "rollout", "status", "deployment/network-controller", "--timeout=180s")
	waitAllReady(ctx, t, ns, 20, 2*time.Minute)
	waitExactlyOneEach(ctx, t, ns, lateCompletionWait)
}

// TestReadinessFollowsNeutron: the kubelet's probes pass on the real
// endpoints, and the leader's readiness goes false once Neutron does not
// answer it (here: a Network created while neutron-server is stopped; an
// idle controller notices at its next list, --neutron-resync-period), and
// true again after, with the Network Ready.
func TestReadinessFollowsNeutron(t *testing.T) {
	ctx := framework.TestContext(t, 5*time.Minute)
	waitPodsReady(ctx, t, controllerNamespace, controllerSelector, 2, true, 2*time.Minute)
	leader, _, _ := strings.Cut(leaseHolder(ctx, t), "_")
	ns := newNamespace(ctx, t, nil)

	// The controller's way in: the neutron-server behind Keystone.
	if err := stack.Neutron.StopKeystoneServer(); err != nil {
		t.Fatal(err)
	}
	started := false
	t.Cleanup(func() {
		if !started {
			_ = stack.Neutron.StartKeystoneServer(context.Background())
		}
	})
	createNetworks(ctx, t, ns, "outage", 154, 1)
	leaderReady := func(want bool) {
		t.Helper()
		// periodSeconds 10, failureThreshold 3: at most ~40 s either way.
		framework.Eventually(ctx, t, 90*time.Second, func(ctx context.Context) (bool, string, error) {
			p, err := kubeClient(t).CoreV1().Pods(controllerNamespace).Get(ctx, leader, metav1.GetOptions{})
			if err != nil {
				return false, err.Error(), nil
			}
			return podReady(*p) == want, fmt.Sprintf("leader %s Ready=%v, want %v", leader, podReady(*p), want), nil
		})
	}
	leaderReady(false)
	started = true
	if err := stack.Neutron.StartKeystoneServer(ctx); err != nil {
		t.Fatal(err)
	}
	leaderReady(true)
	waitAllReady(ctx, t, ns, 1, 2*time.Minute)
}

// TestContainersRunAsNonRootOnAReadOnlyRoot reads, in /proc on the node,
// what the kernel says of each container of ours: its user and its root
// mount. The Pod spec asks; this checks what the image and runtime did.
func TestContainersRunAsNonRootOnAReadOnlyRoot(t *testing.T) {
	ctx := framework.TestContext(t, 2*time.Minute)
	all := append(waitPodsReady(ctx, t, controllerNamespace, controllerSelector, 2, true, 2*time.Minute),
		waitPodsReady(ctx, t, controllerNamespace, conversionSelector, 2, true, 2*time.Minute)...)
	all = append(all, waitPodsReady(ctx, t, injectorNamespace, injectorSelector, 2, true, 2*time.Minute)...)
	for _, p := range all {
		for _, c := range p.Status.ContainerStatuses {
			pid, err := stack.Node.ContainerPID(ctx, c.ContainerID)
			if err != nil {
				t.Fatalf("%s/%s: %v", p.Name, c.Name, err)
			}
			if uid := procUID(t, pid); uid != "65532" {
				t.Errorf("%s/%s runs as uid %s, want 65532", p.Name, c.Name, uid)
			}
			if opts := rootMountOptions(t, pid); !strings.HasPrefix(opts, "ro,") && opts != "ro" {
				t.Errorf("%s/%s has its root mounted %s, want ro", p.Name, c.Name, opts)
			}
		}
	}
}

// procUID returns the real UID of a process.
func procUID(t *testing.T, pid int) string {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "Uid:" {
			return f[1]
		}
	}
	t.Fatalf("no Uid in /proc/%d/status", pid)
	return ""
}

// rootMountOptions returns the per-mount options of a process's "/".
func rootMountOptions(t *testing.T, pid int) string {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/mountinfo", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) > 5 && fields[4] == "/" {
			return fields[5]
		}
	}
	t.Fatalf("no root mount in /proc/%d/mountinfo", pid)
	return ""
}

// TestInjectorInjectsThroughItsService: in a namespace labelled
// envoy-injection=enabled, the API server calls the webhook Pods through
// their Service (failurePolicy: Fail), and a Pod that opts in comes back
// with the sidecar and actually starts, sidecar included.
func TestInjectorInjectsThroughItsService(t *testing.T) {
	ctx := framework.TestContext(t, 3*time.Minute)
	waitPodsReady(ctx, t, injectorNamespace, injectorSelector, 2, true, 2*time.Minute)
	ns := newNamespace(ctx, t, map[string]string{"envoy-injection": "enabled"})
	// The sidecar mounts the user's Envoy configuration, ConfigMap "envoy".
	envoyConf := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "envoy"}, Data: map[string]string{"envoy.json": "{}"}}
	if _, err := kubeClient(t).CoreV1().ConfigMaps(ns).Create(ctx, envoyConf, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Annotations: map[string]string{"initializer.kubernetes.io/envoy": "true"}},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "web", Image: framework.PauseImage, ImagePullPolicy: corev1.PullNever}},
		},
	}
	created, err := kubeClient(t).CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating a Pod through the webhook: %v", err)
	}
	var names []string
	for _, c := range created.Spec.Containers {
		names = append(names, c.Name)
	}
	if len(names) != 2 || names[1] != "envoy" {
		t.Fatalf("containers after admission = %v, want [web envoy]", names)
	}
	framework.Eventually(ctx, t, 2*time.Minute, func(ctx context.Context) (bool, string, error) {
		p, err := kubeClient(t).CoreV1().Pods(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		var states []string
		running := 0
		for _, c := range p.Status.ContainerStatuses {
			if c.State.Running != nil && c.Ready {
				running++
			}
			states = append(states, fmt.Sprintf("%s=%+v", c.Name, c.State))
		}
		return running == 2, fmt.Sprintf("%s: %v", p.Status.Phase, states), nil
	})

	// A namespace without the label is not sent to the webhook at all.
	plain := newNamespace(ctx, t, nil)
	got, err := kubeClient(t).CoreV1().Pods(plain).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Spec.Containers) != 1 {
		t.Errorf("a Pod of an unlabelled namespace got %d containers, want 1", len(got.Spec.Containers))
	}
}

// TestNativeSidecarLetsAJobComplete: a Job's Pod that asks for the sidecar
// as a native one (an init container with restartPolicy Always) runs on
// the node and completes: the kubelet stops the sidecar once the Job's
// container has exited, which a plain sidecar container never allows
// (Istio #11045).
func TestNativeSidecarLetsAJobComplete(t *testing.T) {
	ctx := framework.TestContext(t, 3*time.Minute)
	waitPodsReady(ctx, t, injectorNamespace, injectorSelector, 2, true, 2*time.Minute)
	ns := newNamespace(ctx, t, map[string]string{"envoy-injection": "enabled"})
	kube := kubeClient(t)
	envoyConf := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "envoy"}, Data: map[string]string{"envoy.json": "{}"}}
	if _, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, envoyConf, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The Job's work is a program of the project's image that exits 0 at
	// once: the webhook's own `inject -h`.
	deployed, err := kube.AppsV1().Deployments(injectorNamespace).Get(ctx, "envoy-injector", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "report"},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To[int32](0),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
					injector.RequestAnnotation: "true", injector.NativeSidecarAnnotation: "true"}},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{Name: "report", Image: deployed.Spec.Template.Spec.Containers[0].Image,
						ImagePullPolicy: corev1.PullNever, Command: []string{"/envoy-injector", "inject", "-h"}}},
				},
			},
		},
	}
	if _, err := kube.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(ctx, t, 2*time.Minute, func(ctx context.Context) (bool, string, error) {
		j, err := kube.BatchV1().Jobs(ns).Get(ctx, "report", metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		for _, c := range j.Status.Conditions {
			if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue {
				return false, "", fmt.Errorf("the Job failed: %s", c.Message)
			}
		}
		return j.Status.Succeeded == 1 && j.Status.CompletionTime != nil, fmt.Sprintf("Job status %+v", j.Status), nil
	})
	pods, err := kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "job-name=report"})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("the Job's Pods: %v (%v)", pods, err)
	}
	p := pods.Items[0]
	if len(p.Spec.InitContainers) != 1 || p.Spec.InitContainers[0].Name != "envoy" || p.Status.Phase != corev1.PodSucceeded {
		t.Errorf("Pod %s: init containers %v, phase %s: want the native envoy sidecar and Succeeded", p.Name, p.Spec.InitContainers, p.Status.Phase)
	}
	for _, s := range p.Status.InitContainerStatuses {
		if s.Name == "envoy" && (s.State.Terminated == nil || s.RestartCount != 0) {
			t.Errorf("the sidecar's state %+v (restarts %d): want stopped by the kubelet, never restarted", s.State, s.RestartCount)
		}
	}
}

// TestKubectlLogsAndExecReachThePods: the API server reaches the kubelet
// with its client certificate, as on any cluster, so `kubectl logs` shows
// the controller's log, one JSON object per line as deployed, and
// `kubectl exec` runs in its container.
func TestKubectlLogsAndExecReachThePods(t *testing.T) {
	ctx := framework.TestContext(t, 2*time.Minute)
	waitPodsReady(ctx, t, controllerNamespace, controllerSelector, 2, true, 2*time.Minute)
	leader, _, _ := strings.Cut(leaseHolder(ctx, t), "_")
	logs := kubectl(ctx, t, "-n", controllerNamespace, "logs", leader, "--tail=50")
	lines := 0
	for line := range strings.Lines(logs) {
		var entry struct {
			Msg string `json:"msg"`
		}
		if err := json.Unmarshal([]byte(line), &entry); err != nil || entry.Msg == "" {
			t.Errorf("kubectl logs: not a JSON log entry: %q (%v)", line, err)
		}
		lines++
	}
	if lines == 0 {
		t.Error("kubectl logs showed nothing")
	}
	if out := kubectl(ctx, t, "-n", controllerNamespace, "exec", leader, "--", "/network-controller", "--help"); !strings.Contains(out, "--leader-elect") {
		t.Errorf("kubectl exec: %q", out)
	}
}

// TestInjectorCertificateRotationRefusesNoPod rotates the webhook's CA and
// certificate with hack/injector-certs.sh while Pods that ask for the
// sidecar are admitted (server-side dry runs, so nothing runs): the API
// server trusts old and new certificates throughout, so not one is
// refused, until every replica serves the new certificate; then the old
// CA is dropped, and still none is.
func TestInjectorCertificateRotationRefusesNoPod(t *testing.T) {
	ctx := framework.TestContext(t, 6*time.Minute)
	waitPodsReady(ctx, t, injectorNamespace, injectorSelector, 2, true, 2*time.Minute)
	ns := newNamespace(ctx, t, map[string]string{"envoy-injection": "enabled"})
	before := servedCertificates(ctx, t)

	admitted, refused := 0, 0
	admit := func() {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "rotation-", Labels: map[string]string{injector.RequestLabel: "true"}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: framework.PauseImage}}},
		}
		got, err := kubeClient(t).CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil || len(got.Spec.Containers) != 2 {
			refused++
			t.Errorf("a Pod was not injected during the rotation: %v", err)
			return
		}
		admitted++
	}
	certs := func(args ...string) {
		t.Helper()
		cmd := exec.CommandContext(ctx, filepath.Join(stack.RepoRoot, "hack", "injector-certs.sh"), args...)
		cmd.Env = append(os.Environ(), "KUBECONFIG="+stack.ControlPlane.AdminKubeconfig)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("hack/injector-certs.sh %v: %v\n%s", args, err, out)
		}
	}

	certs("--rotate-ca")
	// The kubelet updates the Secret volume, then each replica reloads it.
	framework.Eventually(ctx, t, 4*time.Minute, func(ctx context.Context) (bool, string, error) {
		admit()
		now := servedCertificates(ctx, t)
		for pod, serial := range now {
			if serial == before[pod] {
				return false, fmt.Sprintf("%s still serves the old certificate (%d Pods admitted)", pod, admitted), nil
			}
		}
		return len(now) == 2, fmt.Sprintf("%d replicas answer", len(now)), nil
	})
	certs()
	for range 10 {
		admit()
	}
	t.Logf("%d Pods admitted through the rotation, %d refused", admitted, refused)
}

// servedCertificates dials each envoy-injector replica at its Pod IP and
// returns the serial number of the certificate it serves, by Pod.
func servedCertificates(ctx context.Context, t *testing.T) map[string]string {
	t.Helper()
	pods, err := kubeClient(t).CoreV1().Pods(injectorNamespace).List(ctx, metav1.ListOptions{LabelSelector: injectorSelector})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil || p.Status.PodIP == "" {
			continue
		}
		dialer := &tls.Dialer{Config: &tls.Config{InsecureSkipVerify: true}} // only the certificate is read
		conn, err := dialer.DialContext(ctx, "tcp", net.JoinHostPort(p.Status.PodIP, "8443"))
		if err != nil {
			continue
		}
		out[p.Name] = conn.(*tls.Conn).ConnectionState().PeerCertificates[0].SerialNumber.String()
		conn.Close()
	}
	return out
}

// TestPrometheusScrapesBothProgramsAndLoadsTheRules runs Debian's
// Prometheus as hack/local-prometheus.sh does: both programs' Pods are
// scraped healthy through their authenticated /metrics, each serving
// certificate verified against the CA of hack/injector-certs.sh (with
// another CA, every scrape fails its TLS handshake, before the token is
// sent), every alert rule evaluates, and every metric the dashboard asks
// for is in what was scraped.
func TestPrometheusScrapesBothProgramsAndLoadsTheRules(t *testing.T) {
	ctx := framework.TestContext(t, 4*time.Minute)
	waitPodsReady(ctx, t, controllerNamespace, controllerSelector, 2, true, 2*time.Minute)
	waitPodsReady(ctx, t, injectorNamespace, injectorSelector, 2, true, 2*time.Minute)
	ports, err := framework.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(stack.Dir, "prometheus")
	t.Cleanup(func() {
		if pid, err := os.ReadFile(filepath.Join(dir, "pid")); err == nil {
			_ = exec.Command("kill", strings.TrimSpace(string(pid))).Run()
		}
	})
	// prometheus runs the script (again: it reloads Prometheus) with env.
	prometheus := func(env ...string) {
		t.Helper()
		cmd := exec.CommandContext(ctx, filepath.Join(stack.RepoRoot, "hack", "local-prometheus.sh"))
		cmd.Env = append(append(os.Environ(), "DEPLOY_ENV=0", "KUBECONFIG="+stack.ControlPlane.AdminKubeconfig,
			"PROMETHEUS_DIR="+dir, fmt.Sprintf("PROMETHEUS_PORT=%d", ports[0])), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("hack/local-prometheus.sh: %v\n%s", err, out)
		}
	}
	api := func(ctx context.Context, path string, into any) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/api/v1/%s", ports[0], path), nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		return json.NewDecoder(resp.Body).Decode(into)
	}
	// scraped waits until every target of both jobs passes ok.
	scraped := func(what string, ok func(health, lastError string) bool) {
		t.Helper()
		seen := "nothing yet" // the targets' states at the last answer
		framework.Eventually(ctx, t, 90*time.Second, func(ctx context.Context) (bool, string, error) {
			var targets struct {
				Data struct {
					ActiveTargets []struct {
						Labels    map[string]string `json:"labels"`
						Health    string            `json:"health"`
						LastError string            `json:"lastError"`
					} `json:"activeTargets"`
				} `json:"data"`
			}
			if err := api(ctx, "targets", &targets); err != nil {
				return false, fmt.Sprintf("%s; targets: %s (%v)", what, seen, err), nil
			}
			passed := map[string]int{}
			var states []string
			for _, tg := range targets.Data.ActiveTargets {
				if ok(tg.Health, tg.LastError) {
					passed[tg.Labels["job"]]++
				}
				states = append(states, fmt.Sprintf("%s/%s %s %s", tg.Labels["job"], tg.Labels["pod"], tg.Health, tg.LastError))
			}
			seen = fmt.Sprint(states)
			return passed["network-controller"] == 2 && passed["envoy-injector"] == 2, fmt.Sprintf("%s; targets: %s", what, seen), nil
		})
	}

	// A CA that signed neither certificate: no scrape gets past TLS.
	other, err := framework.NewServingCertificate(t.TempDir(), nil, []string{"other.example"})
	if err != nil {
		t.Fatal(err)
	}
	otherCA := filepath.Join(t.TempDir(), "other-ca.crt")
	if err := os.WriteFile(otherCA, other.CAPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	prometheus("PROMETHEUS_CA_FILE=" + otherCA)
	scraped("every scrape refused by a scraper that trusts another CA", func(health, lastError string) bool {
		return health == "down" && strings.Contains(lastError, "certificate signed by unknown authority")
	})

	// The CA of hack/injector-certs.sh: every scrape verified and served.
	prometheus()
	scraped("every target up", func(health, _ string) bool { return health == "up" })

	var rules struct {
		Data struct {
			Groups []struct {
				Rules []struct {
					Name      string `json:"name"`
					Health    string `json:"health"`
					LastError string `json:"lastError"`
				} `json:"rules"`
			} `json:"groups"`
		} `json:"data"`
	}
	framework.Eventually(ctx, t, time.Minute, func(ctx context.Context) (bool, string, error) {
		if err := api(ctx, "rules", &rules); err != nil {
			return false, err.Error(), nil
		}
		var bad []string
		n := 0
		for _, g := range rules.Data.Groups {
			for _, r := range g.Rules {
				n++
				if r.Health != "ok" {
					bad = append(bad, fmt.Sprintf("%s: %s %s", r.Name, r.Health, r.LastError))
				}
			}
		}
		return n > 0 && len(bad) == 0, fmt.Sprintf("%d rules, not evaluated ok: %v", n, bad), nil
	})

	data, err := os.ReadFile(filepath.Join(stack.RepoRoot, "artifacts", "prometheus", "dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dashboard monitoring.Dashboard
	if err := json.Unmarshal(data, &dashboard); err != nil {
		t.Fatal(err)
	}
	var names struct {
		Data []string `json:"data"`
	}
	if err := api(ctx, "label/__name__/values", &names); err != nil {
		t.Fatal(err)
	}
	for _, want := range monitoring.Queried(t, dashboard) {
		found := slices.ContainsFunc(names.Data, func(n string) bool {
			return n == want || n == want+"_bucket" || n == want+"_total"
		})
		if !found {
			t.Errorf("the dashboard asks for %s, which no scrape holds", want)
		}
	}
}

// TestHelmUninstallKeepsNetworks uninstalls the controller's chart, as an
// operator removes the controller: the CRD (from the chart's crds/), the
// Networks and their Neutron networks all stay, and the chart's notes said
// so at install. It runs last: the controller is gone after it.
func TestHelmUninstallKeepsNetworks(t *testing.T) {
	ctx := framework.TestContext(t, 3*time.Minute)
	ns := newNamespace(ctx, t, nil)
	createNetworks(ctx, t, ns, "kept", 155, 1)
	kept := waitAllReady(ctx, t, ns, 1, time.Minute)[0]
	helm := func(args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, filepath.Join(stack.RepoRoot, "bin", "helm"), append(args, "--namespace", controllerNamespace)...)
		cmd.Env = append(os.Environ(), "KUBECONFIG="+stack.ControlPlane.AdminKubeconfig)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("helm %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	if notes := helm("get", "notes", "network-controller"); !strings.Contains(notes, "The CRD (in crds/)\nstays, and so do the Networks and their Neutron networks") {
		t.Errorf("the chart's notes do not say what uninstalling keeps:\n%s", notes)
	}
	helm("uninstall", "network-controller", "--wait")

	crds, err := apiextensionsclientset.NewForConfig(stack.ControlPlane.AdminConfig)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := crds.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, "networks.samplecrd.k8s.io", metav1.GetOptions{}); err != nil {
		t.Errorf("the CRD did not survive helm uninstall: %v", err)
	}
	// In v2, the stored version: the CRD's conversion webhook went with
	// the controller, so a v1 read fails until it is installed again.
	if _, err := networkClient(t).SamplecrdV2().Networks(ns).Get(ctx, kept.Name, metav1.GetOptions{}); err != nil {
		t.Errorf("the Network did not survive helm uninstall: %v", err)
	}
	if _, err := networks.Get(ctx, stack.Neutron.Client, kept.Status.NetworkID).Extract(); err != nil {
		t.Errorf("its Neutron network did not survive helm uninstall: %v", err)
	}
	for _, name := range []string{"network-controller", "network-controller-conversion"} {
		if _, err := kubeClient(t).AppsV1().Deployments(controllerNamespace).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("the Deployment %s after helm uninstall: %v", name, err)
		}
	}
	// What the controller would have done on the Network's deletion is
	// done by hand, as README's "Uninstall" tells an operator who got here.
	if err := networks.Delete(ctx, stack.Neutron.Client, kept.Status.NetworkID).ExtractErr(); err != nil {
		t.Errorf("deleting the Neutron network by hand: %v", err)
	}
	unfinalize := []byte(`{"metadata":{"finalizers":null}}`)
	if _, err := networkClient(t).SamplecrdV2().Networks(ns).Patch(ctx, kept.Name, types.MergePatchType, unfinalize, metav1.PatchOptions{}); err != nil {
		t.Errorf("removing the finalizer by hand: %v", err)
	}
}
