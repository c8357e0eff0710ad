package injector

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
)

// TestReviewCostCoversWhatAReviewHolds: answering a review holds no more
// memory at once than ReviewCost says, for small reviews and ones of
// nearly MaxRequestBytes, of the shapes that cost the most per byte: one
// long value (copied at every step), or many small fields (a struct, a
// map entry, a generic JSON value each, when the patch is computed).
func TestReviewCostCoversWhatAReviewHolds(t *testing.T) {
	tmpl := mustTemplate(t)
	wh := &Webhook{Template: func() (*Template, error) { return tmpl, nil }}
	for _, tc := range []struct {
		name string
		pod  func(size int) *corev1.Pod
	}{
		{"one long annotation", func(size int) *corev1.Pod {
			p := pod([]string{"web"}, nil, nil)
			p.Annotations["long"] = strings.Repeat("x", size)
			return p
		}},
		{"many environment variables", func(size int) *corev1.Pod {
			p := pod([]string{"web"}, nil, nil)
			for i := range size / 40 {
				p.Spec.Containers[0].Env = append(p.Spec.Containers[0].Env, corev1.EnvVar{Name: fmt.Sprintf("V%d", i), Value: "v"})
			}
			return p
		}},
		{"many labels", func(size int) *corev1.Pod {
			p := pod([]string{"web"}, nil, nil)
			p.Labels = map[string]string{}
			for i := range size / 20 {
				p.Labels[fmt.Sprintf("l%d", i)] = "v"
			}
			return p
		}},
	} {
		for _, size := range []int{0, 64 << 10, MaxRequestBytes * 9 / 10} {
			t.Run(fmt.Sprintf("%s, %d bytes", tc.name, size), func(t *testing.T) {
				if testing.Short() && size > 1<<20 {
					t.Skip("a review of megabytes takes seconds")
				}
				body := reviewOf(t, tc.pod(size))
				if int64(len(body)) > MaxRequestBytes {
					t.Fatalf("a review of %d bytes, over MaxRequestBytes", len(body))
				}
				// With the collector running at every 1% of growth, the
				// live heap, sampled as the review is answered, is close
				// to its peak (sampling can only miss some of it).
				var before runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				defer debug.SetGCPercent(debug.SetGCPercent(1))
				stop, peak := make(chan struct{}), make(chan uint64)
				go func() {
					sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
					var top uint64
					for {
						select {
						case <-stop:
							peak <- top
							return
						default:
						}
						metrics.Read(sample)
						top = max(top, sample[0].Value.Uint64())
						runtime.Gosched()
					}
				}()
				rec := httptest.NewRecorder()
				wh.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/mutate", bytes.NewReader(body)))
				close(stop)
				live := int64(<-peak) - int64(before.HeapAlloc)
				if rec.Code != http.StatusOK {
					t.Fatalf("status %d: %s", rec.Code, rec.Body)
				}
				if cost := ReviewCost(int64(len(body))); live > cost {
					t.Errorf("a review of %d bytes held %d bytes more at its peak, over its ReviewCost of %d", len(body), live, cost)
				} else {
					t.Logf("a review of %d bytes held %d bytes more at its peak (%.1f per byte); ReviewCost %d", len(body), live, float64(live)/float64(len(body)), cost)
				}
			})
		}
	}
}

func reviewOf(t *testing.T, p *corev1.Pod) []byte {
	t.Helper()
	raw, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{UID: "uid", Kind: metav1.GroupVersionKind{Version: "v1", Kind: "Pod"},
			Namespace: "default", Operation: admissionv1.Create, Object: kruntime.RawExtension{Raw: raw}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return body
}
