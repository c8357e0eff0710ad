package conversion_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/samplecrd/network-controller/pkg/controller/conversion"
)

// TestReviewCostCoversWhatAReviewAllocates: everything answering a review
// allocates, which bounds what it holds at once, is within ReviewCost of
// its size, for the shapes that cost the most per byte: a long list of
// dual-stack Networks to v1 (each gains its annotation), and Networks of
// many small labels (a map entry each when decoded).
func TestReviewCostCoversWhatAReviewAllocates(t *testing.T) {
	if raceDetector {
		t.Skip("the race detector's own allocations are counted too")
	}
	for _, tc := range []struct {
		name    string
		desired string
		object  func(i int) any
	}{
		{"dual-stack Networks to v1", "samplecrd.k8s.io/v1", func(i int) any { return v2DualStack(fmt.Sprintf("n%d", i)) }},
		{"v1 Networks to v2", "samplecrd.k8s.io/v2", func(i int) any { return v1Network(fmt.Sprintf("n%d", i)) }},
		{"Networks of many labels to v1", "samplecrd.k8s.io/v1", func(i int) any {
			n := v2DualStack(fmt.Sprintf("n%d", i))
			n.Labels = map[string]string{}
			for j := range 200 {
				n.Labels[fmt.Sprintf("l%d", j)] = "v"
			}
			return n
		}},
	} {
		for _, count := range []int{1, 100, 2000} {
			t.Run(fmt.Sprintf("%s, %d", tc.name, count), func(t *testing.T) {
				objects := make([]apiruntime.RawExtension, count)
				for i := range objects {
					objects[i] = raw(t, tc.object(i))
				}
				body := reviewBody(t, tc.desired, objects...)
				if len(body) > conversion.MaxRequestBytes {
					t.Fatalf("a review of %d bytes, over MaxRequestBytes", len(body))
				}
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				rec := httptest.NewRecorder()
				conversion.Webhook{}.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, conversion.Path, bytes.NewReader(body)))
				runtime.ReadMemStats(&after)
				if rec.Code != http.StatusOK || !bytes.Contains(rec.Body.Bytes(), []byte(`"status":"`+metav1.StatusSuccess+`"`)) {
					t.Fatalf("not converted: %d %.300s", rec.Code, rec.Body)
				}
				allocated := int64(after.TotalAlloc - before.TotalAlloc)
				t.Logf("%d bytes of review allocated %d bytes (%.1f times), ReviewCost %d", len(body), allocated, float64(allocated)/float64(len(body)), conversion.ReviewCost(int64(len(body))))
				if allocated > conversion.ReviewCost(int64(len(body))) {
					t.Errorf("a review of %d bytes allocated %d bytes, over ReviewCost's %d", len(body), allocated, conversion.ReviewCost(int64(len(body))))
				}
			})
		}
	}
}
