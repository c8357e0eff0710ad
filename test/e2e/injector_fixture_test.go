package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/samplecrd/network-controller/pkg/injector"
	"github.com/samplecrd/network-controller/test/framework"
)

// injectorFixture is a namespace of its own with the envoy-initializer
// ConfigMap, an envoy-injector process serving it, and a
// MutatingWebhookConfiguration that sends the namespace's Pods there, as
// artifacts/injector/webhook.yaml does (failurePolicy Fail,
// reinvocationPolicy IfNeeded).
type injectorFixture struct {
	ns    string
	addr  string
	certs *framework.ServingCertificate
	kube  kubernetes.Interface
	cm    *corev1.ConfigMap
	// proc is the envoy-injector process.
	proc *framework.Process
}

// designConfig is the template of artifacts/injector/envoy-initializer.yaml.
func designConfig(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(stack.RepoRoot, "artifacts", "injector", "envoy-initializer.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{}
	if err := yaml.UnmarshalStrict(data, cm); err != nil {
		t.Fatal(err)
	}
	return cm.Data[injector.ConfigKey]
}

// newInjectorFixture sets the fixture up with config as the template, and
// returns once the API server sends the namespace's Pods to the webhook.
func newInjectorFixture(ctx context.Context, t *testing.T, config string) *injectorFixture {
	t.Helper()
	f := &injectorFixture{ns: newNamespace(ctx, t), kube: kubeClient(t)}
	// The ServiceAccount admission plugin wants the namespace's default
	// ServiceAccount, which kube-controller-manager would have made.
	if _, err := f.kube.CoreV1().ServiceAccounts(f.ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "envoy-initializer"}, Data: map[string]string{injector.ConfigKey: config}}
	var err error
	if f.cm, err = f.kube.CoreV1().ConfigMaps(f.ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.addr, f.certs, f.proc = startInjector(ctx, t, f.ns)
	framework.Eventually(ctx, t, 30*time.Second, servedBy(f.addr, "/readyz", f.certs.CAPEM))
	f.register(ctx, t, "envoy-injector-"+f.ns, "https://"+f.addr+"/mutate", f.certs.CAPEM, admissionregistrationv1.IfNeededReinvocationPolicy)
	framework.Eventually(ctx, t, 30*time.Second, func(ctx context.Context) (bool, string, error) {
		p, err := f.create(ctx, f.pod(nil))
		if err != nil {
			return false, err.Error(), nil
		}
		_, injected := injector.ReadStatus(p.Annotations)
		return injected, fmt.Sprintf("Pod %s not injected yet", p.Name), nil
	})
	return f
}

// register sends the fixture namespace's Pod creations to url.
func (f *injectorFixture) register(ctx context.Context, t *testing.T, name, url string, caPEM []byte, reinvocation admissionregistrationv1.ReinvocationPolicyType) {
	t.Helper()
	_, err := f.kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name:                    "envoy.injector.samplecrd.k8s.io",
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: caPEM},
			Rules:                   []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create}, Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}}}},
			AdmissionReviewVersions: []string{"v1"},
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
			ReinvocationPolicy:      &reinvocation,
			NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": f.ns}},
			TimeoutSeconds:          ptr.To[int32](5),
		}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = f.kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
}

// pod is a Pod of one container that asks for the sidecar, with more
// annotations; nil annotations ask with the request annotation only.
func (f *injectorFixture) pod(annotations map[string]string) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "web-", Annotations: map[string]string{injector.RequestAnnotation: "true"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
	}
	for k, v := range annotations {
		p.Annotations[k] = v
	}
	return p
}

func (f *injectorFixture) create(ctx context.Context, p *corev1.Pod) (*corev1.Pod, error) {
	return f.kube.CoreV1().Pods(f.ns).Create(ctx, p, metav1.CreateOptions{})
}

// setConfig replaces the template, and waits until the webhook uses it:
// until a Pod created with annotations passes check.
func (f *injectorFixture) setConfig(ctx context.Context, t *testing.T, config string, annotations map[string]string, check func(p *corev1.Pod, err error) bool) {
	t.Helper()
	f.cm.Data[injector.ConfigKey] = config
	var err error
	if f.cm, err = f.kube.CoreV1().ConfigMaps(f.ns).Update(ctx, f.cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(ctx, t, 30*time.Second, func(ctx context.Context) (bool, string, error) {
		p, err := f.create(ctx, f.pod(annotations))
		return check(p, err), fmt.Sprintf("the new template is not in use yet (%v)", err), nil
	})
}

// admissions is the webhook's count of admissions whose labels include
// labels (result, reason).
func (f *injectorFixture) admissions(ctx context.Context, t *testing.T, labels map[string]string) float64 {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(f.certs.CAPEM)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	return scrapeMetric(ctx, t, client, "https://"+f.addr+"/metrics", "envoy_injector_admissions_total", labels)
}

// metric is the webhook's metric name, of the series whose labels include
// labels.
func (f *injectorFixture) metric(ctx context.Context, t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(f.certs.CAPEM)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	return scrapeMetric(ctx, t, client, "https://"+f.addr+"/metrics", name, labels)
}

// startLabeller serves a second mutating webhook, registered to run after
// the injector, that adds the label relabelled=yes to every Pod: the
// change that makes the API server call the injector again
// (reinvocationPolicy IfNeeded).
func (f *injectorFixture) startLabeller(ctx context.Context, t *testing.T) {
	t.Helper()
	certs, err := framework.NewServingCertificate(t.TempDir(), []net.IP{net.ParseIP("127.0.0.1")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.LoadX509KeyPair(certs.CertFile, certs.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(labelPods))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	// Webhooks run in the order of their configurations' names.
	f.register(ctx, t, "zz-labeller-"+f.ns, srv.URL, certs.CAPEM, admissionregistrationv1.NeverReinvocationPolicy)
}

func labelPods(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	review := &admissionv1.AdmissionReview{}
	if err := json.Unmarshal(body, review); err != nil || review.Request == nil {
		http.Error(w, "not an AdmissionReview", http.StatusBadRequest)
		return
	}
	pod := &corev1.Pod{}
	_ = json.Unmarshal(review.Request.Object.Raw, pod)
	op := map[string]any{"op": "add", "path": "/metadata/labels", "value": map[string]string{"relabelled": "yes"}}
	if len(pod.Labels) > 0 {
		op = map[string]any{"op": "add", "path": "/metadata/labels/relabelled", "value": "yes"}
	}
	patch, _ := json.Marshal([]any{op})
	pt := admissionv1.PatchTypeJSONPatch
	review.Response = &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true, Patch: patch, PatchType: &pt}
	review.Request = nil
	out, _ := json.Marshal(review)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(out)
}
