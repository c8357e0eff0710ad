package main

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/component-base/metrics/testutil"

	applyv1 "github.com/samplecrd/network-controller/pkg/generated/applyconfiguration/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/leader"
	"github.com/samplecrd/network-controller/pkg/metrics"
)

// TestTheWorksClientsWriteNothingWhileFenced: the clients the work
// writes with (fencedClients) send reads, and no write of either API
// while the fence refuses; each refusal is counted.
func TestTheWorksClientsWriteNothingWhileFenced(t *testing.T) {
	metrics.RegisterController()
	var arrived []string
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived = append(arrived, r.Method+" "+r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"NetworkList","apiVersion":"samplecrd.k8s.io/v1","items":[]}`))
	}))
	defer server.Close()
	kube, networks, err := fencedClients(&rest.Config{Host: server.URL}, func() error { return errors.New("the Lease was last renewed 12s ago") })
	if err != nil {
		t.Fatal(err)
	}
	refusals := func() float64 {
		v, err := testutil.GetCounterMetricValue(metrics.WritesFenced.WithLabelValues(metrics.FencedAPIServer))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	before := refusals()
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
		if !errors.Is(err, leader.ErrFenced) {
			t.Errorf("the %s write: %v, want ErrFenced", what, err)
		}
	}
	if len(arrived) != 1 || !strings.HasPrefix(arrived[0], "GET ") {
		t.Errorf("the API server saw %q, want the list alone", arrived)
	}
	if got := refusals() - before; got != 4 {
		t.Errorf("%v refusals counted, want 4", got)
	}
}
