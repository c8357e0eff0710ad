package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/samplecrd/network-controller/pkg/injector"
	"github.com/samplecrd/network-controller/test/framework"
)

// TestEnvoySidecarInjection registers envoy-injector with the real API
// server as a mutating webhook and creates Pods through the API.
func TestEnvoySidecarInjection(t *testing.T) {
	ctx := framework.TestContext(t, 3*time.Minute)
	f := newInjectorFixture(ctx, t, designConfig(t))
	envoyImage := func(p *corev1.Pod) string {
		for _, c := range p.Spec.Containers {
			if c.Name == "envoy" {
				return c.Image
			}
		}
		return ""
	}

	p, err := f.create(ctx, f.pod(nil))
	if err != nil {
		t.Fatal(err)
	}
	if envoyImage(p) != "envoyproxy/envoy:v1.34.1" || p.Spec.Containers[0].Name != "web" || len(p.Spec.Containers) != 2 {
		t.Errorf("containers %v: want the Pod's own first, then the design documents' envoy", p.Spec.Containers)
	}
	if len(p.Spec.Volumes) == 0 || !strings.Contains(fmt.Sprint(p.Spec.Volumes), "envoy-conf") {
		t.Errorf("volumes %v: want envoy-conf", p.Spec.Volumes)
	}
	if s, _ := injector.ReadStatus(p.Annotations); strings.Join(s.Containers, ",") != "envoy" {
		t.Errorf("annotations %v: want %s to name envoy", p.Annotations, injector.StatusAnnotation)
	}

	plain := f.pod(nil)
	plain.Annotations = nil
	if plain, err = f.create(ctx, plain); err != nil {
		t.Fatal(err)
	}
	if len(plain.Spec.Containers) != 1 || plain.Annotations[injector.StatusAnnotation] != "" {
		t.Errorf("a Pod that did not ask was changed: %v %v", plain.Spec.Containers, plain.Annotations)
	}

	// A Pod on the host's network is not injected, even when it asks.
	host := f.pod(nil)
	host.Spec.HostNetwork = true
	if host, err = f.create(ctx, host); err != nil {
		t.Fatal(err)
	}
	if len(host.Spec.Containers) != 1 || host.Annotations[injector.StatusAnnotation] != "" {
		t.Errorf("a hostNetwork Pod was injected: %v %v", host.Spec.Containers, host.Annotations)
	}

	// Editing the ConfigMap changes what the next Pod gets, no restart.
	f.setConfig(ctx, t, strings.ReplaceAll(designConfig(t), "envoyproxy/envoy:v1.34.1", "envoyproxy/envoy:v1.31.0"), nil,
		func(p *corev1.Pod, err error) bool { return err == nil && envoyImage(p) == "envoyproxy/envoy:v1.31.0" })

	// A malformed template refuses the Pods that ask, with the reason, and
	// no others.
	f.setConfig(ctx, t, "containers: [{name: envoy, image: x, volumeMount: []}]", nil,
		func(_ *corev1.Pod, err error) bool {
			return err != nil && strings.Contains(err.Error(), `unknown field "volumeMount"`)
		})
	plain = f.pod(nil)
	plain.Annotations = nil
	if _, err := f.create(ctx, plain); err != nil {
		t.Errorf("a Pod that does not ask was refused because of the template: %v", err)
	}
}

// TestInjectorManifestsApply applies artifacts/injector with kubectl and
// runs hack/injector-certs.sh as its README says: the objects are accepted
// by the API server, the TLS Secret exists, both webhooks trust its CA, and
// with nothing serving them only Pods that ask for the sidecar wait on
// them.
func TestInjectorManifestsApply(t *testing.T) {
	ctx := framework.TestContext(t, 2*time.Minute)
	kube := kubeClient(t)
	t.Cleanup(func() {
		// Nothing serves it here; it must not outlive the test.
		_ = kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(context.Background(), "envoy-injector", metav1.DeleteOptions{})
	})
	env := append(os.Environ(), "KUBECONFIG="+stack.ControlPlane.AdminKubeconfig)
	for _, cmd := range [][]string{
		{"kubectl", "apply", "-k", filepath.Join(stack.RepoRoot, "artifacts", "injector")},
		{filepath.Join(stack.RepoRoot, "hack", "injector-certs.sh")},
	} {
		c := exec.CommandContext(ctx, cmd[0], cmd[1:]...)
		c.Env = env
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", cmd, err, out)
		}
	}
	secret, err := kube.CoreV1().Secrets("envoy-injector").Get(ctx, "envoy-injector-tls", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.X509KeyPair(secret.Data["tls.crt"], secret.Data["tls.key"])
	if err != nil {
		t.Fatalf("the Secret holds no usable key pair: %v", err)
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, "envoy-injector", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(cfg.Webhooks[0].ClientConfig.CABundle) {
		t.Fatal("the webhook has no caBundle")
	}
	for i, w := range cfg.Webhooks {
		if string(w.ClientConfig.CABundle) != string(cfg.Webhooks[0].ClientConfig.CABundle) {
			t.Errorf("webhook %d (%s) has another caBundle than webhook 0", i, w.Name)
		}
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: "envoy-injector.envoy-injector.svc"}); err != nil {
		t.Errorf("the API server would not trust the webhook's certificate: %v", err)
	}

	// Nothing serves the webhook here (no node runs its Pods): the
	// injector is down. In a namespace that opted in, a Pod that asks for
	// the sidecar, either way, is refused, since it must not start without
	// it; a Pod that does not ask is created, because the API server never
	// calls the webhook for it.
	ns := framework.NewNamespace(ctx, t, kube, map[string]string{"envoy-injection": "enabled"})
	// The ServiceAccount admission plugin wants the namespace's default
	// ServiceAccount, which kube-controller-manager would have made.
	if _, err := kube.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	plain := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "plain"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}}}
	byLabel, byAnnotation := plain.DeepCopy(), plain.DeepCopy()
	byLabel.Name, byLabel.Labels = "by-label", map[string]string{injector.RequestLabel: "true"}
	byAnnotation.Name, byAnnotation.Annotations = "by-annotation", map[string]string{injector.RequestAnnotation: "true"}
	for _, tc := range []struct {
		pod     *corev1.Pod
		webhook string // "" for a Pod that must be created
	}{
		{plain, ""},
		{byLabel, "label.envoy.injector.samplecrd.k8s.io"},
		{byAnnotation, "annotation.envoy.injector.samplecrd.k8s.io"},
	} {
		_, err := kube.CoreV1().Pods(ns).Create(ctx, tc.pod, metav1.CreateOptions{})
		switch {
		case tc.webhook == "" && err != nil:
			t.Errorf("a Pod that does not ask for the sidecar was refused while the injector is down: %v", err)
		case tc.webhook != "" && (err == nil || !strings.Contains(err.Error(), tc.webhook)):
			t.Errorf("Pod %s, which asks, was not refused by %s while the injector is down: %v", tc.pod.Name, tc.webhook, err)
		}
	}
}

// TestInjectorFollowsARotatedCertificate rewrites the webhook's certificate
// and key in place with ones from a new CA, as a rotated Secret or
// cert-manager does: new connections are served with the new pair, without
// a restart, and the process is the same one.
func TestInjectorFollowsARotatedCertificate(t *testing.T) {
	ctx := framework.TestContext(t, time.Minute)
	ns := newNamespace(ctx, t)
	addr, first, webhook := startInjector(ctx, t, ns)

	second, err := framework.NewServingCertificate(filepath.Dir(first.CertFile), []net.IP{net.ParseIP("127.0.0.1")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	framework.Eventually(ctx, t, 30*time.Second, servedBy(addr, "/healthz", second.CAPEM))
	if ok, _, _ := servedBy(addr, "/healthz", first.CAPEM)(ctx); ok {
		t.Error("the old certificate is still served after the rotation")
	}
	if webhook.Exited() {
		t.Error("the webhook restarted to rotate")
	}
	// What an alert on expiry reads follows the certificate served.
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(second.CAPEM)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	want := float64(notAfter(t, second.CertFile).Unix())
	if got := scrapeMetric(ctx, t, client, "https://"+addr+"/metrics", "envoy_injector_serving_certificate_expiration_timestamp_seconds", nil); got != want {
		t.Errorf("envoy_injector_serving_certificate_expiration_timestamp_seconds = %v, want the new certificate's %v", got, want)
	}
}

// notAfter is the expiry of the certificate in file.
func notAfter(t *testing.T, file string) time.Time {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(data)
	if block == nil {
		t.Fatalf("%s holds no PEM", file)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cert.NotAfter
}

// TestOfflineInjectionIsAppliedAsIs runs `envoy-injector inject` on a
// Deployment and a Service, once with the ConfigMap as a file and once
// reading it from the cluster, and sends the output to the real API
// server: it is accepted as is, and the Deployment's pod template has the
// sidecar, as the webhook would have given its Pods.
func TestOfflineInjectionIsAppliedAsIs(t *testing.T) {
	ctx := framework.TestContext(t, time.Minute)
	ns := newNamespace(ctx, t)
	templateFile := filepath.Join(stack.RepoRoot, "artifacts", "injector", "envoy-initializer.yaml")
	data, err := os.ReadFile(templateFile)
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{}
	if err := yaml.UnmarshalStrict(data, cm); err != nil {
		t.Fatal(err)
	}
	if _, err := kubeClient(t).CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	manifests := filepath.Join(t.TempDir(), "app.yaml")
	if err := os.WriteFile(manifests, []byte(`apiVersion: apps/v1
kind: Deployment
metadata: {name: NAME}
spec:
  selector: {matchLabels: {app: NAME}}
  template:
    metadata:
      labels: {app: NAME}
      annotations: {initializer.kubernetes.io/envoy: "true"}
    spec:
      containers: [{name: web, image: nginx:1.27}]
---
apiVersion: v1
kind: Service
metadata: {name: NAME}
spec: {selector: {app: NAME}, ports: [{port: 80}]}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, args := range map[string][]string{
		"from-file":    {"--template=" + templateFile},
		"from-cluster": {"--kubeconfig=" + stack.ControlPlane.AdminKubeconfig, "--configmap-namespace=" + ns},
	} {
		t.Run(name, func(t *testing.T) {
			in, err := os.ReadFile(manifests)
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.CommandContext(ctx, injectorBinary, append([]string{"inject", "-f", "-"}, args...)...)
			cmd.Stdin = strings.NewReader(strings.ReplaceAll(string(in), "NAME", name))
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("envoy-injector inject: %v: %s", err, stderr.String())
			}
			apply := exec.CommandContext(ctx, "kubectl", "--kubeconfig="+stack.ControlPlane.AdminKubeconfig, "-n", ns, "apply", "-f", "-")
			apply.Stdin = strings.NewReader(string(out))
			if msg, err := apply.CombinedOutput(); err != nil {
				t.Fatalf("kubectl apply of the output: %v: %s\n%s", err, msg, out)
			}
			d, err := kubeClient(t).AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, c := range d.Spec.Template.Spec.Containers {
				names = append(names, c.Name)
			}
			if strings.Join(names, ",") != "web,envoy" || d.Spec.Template.Annotations[injector.StatusAnnotation] == "" {
				t.Errorf("the applied pod template has containers %v and annotations %v", names, d.Spec.Template.Annotations)
			}
		})
	}
}

// startInjector runs envoy-injector for ns's ConfigMap on a free loopback
// port, with a new serving certificate, until the test ends, and waits
// until it serves TLS with that certificate.
func startInjector(ctx context.Context, t *testing.T, ns string) (addr string, certs *framework.ServingCertificate, webhook *framework.Process) {
	t.Helper()
	dir := t.TempDir()
	certs, err := framework.NewServingCertificate(dir, []net.IP{net.ParseIP("127.0.0.1")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ports, err := framework.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	addr = fmt.Sprintf("127.0.0.1:%d", ports[0])
	webhook = &framework.Process{
		Name: "envoy-injector",
		Path: injectorBinary,
		Args: []string{"--kubeconfig=" + stack.ControlPlane.AdminKubeconfig, "--bind-address=" + addr,
			"--tls-cert-file=" + certs.CertFile, "--tls-private-key-file=" + certs.KeyFile, "--configmap-namespace=" + ns, "-v=2"},
		Dir:     dir,
		LogPath: filepath.Join(stack.Dir, ns+"-injector.log"),
		// As the Deployment runs it (artifacts/injector/deployment.yaml).
		Env: append(os.Environ(), "GOMEMLIMIT=176MiB"),
	}
	if err := webhook.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = webhook.Stop(5 * time.Second)
		if t.Failed() {
			t.Logf("envoy-injector log:\n%s", webhook.Tail(4000))
		}
	})
	framework.Eventually(ctx, t, 30*time.Second, servedBy(addr, "/healthz", certs.CAPEM))
	return addr, certs, webhook
}

// servedBy makes a new connection to addr that trusts only caPEM, and
// reports whether path answers OK over it.
func servedBy(addr, path string, caPEM []byte) func(ctx context.Context) (bool, string, error) {
	return func(ctx context.Context) (bool, string, error) {
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(caPEM)
		client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, DisableKeepAlives: true}}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+addr+path, nil)
		resp, err := client.Do(req)
		if err != nil {
			return false, err.Error(), nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, path + " " + resp.Status, nil
	}
}
