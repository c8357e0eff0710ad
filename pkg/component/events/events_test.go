package events

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// countingSink is the API server's Events endpoint, counting what reaches it.
type countingSink struct{ creates, updates, patches int }

func (c *countingSink) Create(e *corev1.Event) (*corev1.Event, error) { c.creates++; return e, nil }
func (c *countingSink) Update(e *corev1.Event) (*corev1.Event, error) { c.updates++; return e, nil }
func (c *countingSink) Patch(e *corev1.Event, _ []byte) (*corev1.Event, error) {
	c.patches++
	return e, nil
}

// TestTheLimitHoldsAcrossObjects: a burst of Events about 10,000
// different objects (each one the per-object filter would let through)
// reaches the API server only up to the bucket's burst; the rest are
// dropped, counted, and reported as written so nothing retries them.
func TestTheLimitHoldsAcrossObjects(t *testing.T) {
	api := &countingSink{}
	dropped := 0
	sink := NewLimitedSink(api, Limit{QPS: 0.001, Burst: 100}, func() { dropped++ })
	for i := range 10000 {
		e := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("n-%d.1", i)}}
		var err error
		switch i % 3 {
		case 0:
			_, err = sink.Create(e)
		case 1:
			_, err = sink.Update(e)
		default:
			_, err = sink.Patch(e, nil)
		}
		if err != nil {
			t.Fatalf("event %d: %v (an error makes the broadcaster retry)", i, err)
		}
	}
	if sent := api.creates + api.updates + api.patches; sent != 100 || dropped != 9900 {
		t.Errorf("%d Events reached the API server and %d were dropped, want 100 and 9900", sent, dropped)
	}
}

func TestNoLimitIsNone(t *testing.T) {
	api := &countingSink{}
	sink := NewLimitedSink(api, Limit{}, nil)
	for range 1000 {
		_, _ = sink.Create(&corev1.Event{})
	}
	if api.creates != 1000 {
		t.Errorf("%d of 1000 Events reached the API server without a limit", api.creates)
	}
}
