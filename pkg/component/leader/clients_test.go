package leader

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	applyv1 "github.com/samplecrd/network-controller/pkg/generated/applyconfiguration/samplecrd/v1"
)

// TestTheWorksClientsWriteNothingWhileFenced: the clients the work
// writes with (FencedClients) send reads, and no write of either API
// while the fence refuses; each refusal is counted.
func TestTheWorksClientsWriteNothingWhileFenced(t *testing.T) {
	var arrived []string
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived = append(arrived, r.Method+" "+r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"NetworkList","apiVersion":"samplecrd.k8s.io/v1","items":[]}`))
	}))
	defer server.Close()
	var refused atomic.Int32
	kube, networks, err := FencedClients(&rest.Config{Host: server.URL}, func() error { return errors.New("the Lease was last renewed 12s ago") }, func() { refused.Add(1) })
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := networks.SamplecrdV1().Networks("ns").List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("a list through the fenced client: %v", err)
	}
	writes := map[string]error{}
	_, writes["status"] = networks.SamplecrdV1().Networks("ns").ApplyStatus(ctx, applyv1.Network("net", "ns"), metav1.ApplyOptions{FieldManager: "t"})
	_, writes["configmap"] = kube.CoreV1().ConfigMaps("ns").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}}, metav1.CreateOptions{})
	_, writes["event"] = kube.CoreV1().Events("ns").Create(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e"}}, metav1.CreateOptions{})
	writes["delete"] = kube.CoreV1().ConfigMaps("ns").Delete(ctx, "x", metav1.DeleteOptions{})
	for what, err := range writes {
		if !errors.Is(err, ErrFenced) {
			t.Errorf("the %s write: %v, want ErrFenced", what, err)
		}
	}
	if len(arrived) != 1 || !strings.HasPrefix(arrived[0], "GET ") {
		t.Errorf("the API server saw %q, want the list alone", arrived)
	}
	if got := refused.Load(); got != 4 {
		t.Errorf("%v refusals counted, want 4", got)
	}
}
