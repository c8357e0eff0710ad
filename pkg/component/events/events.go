// Package events starts client-go's Event broadcaster the way both
// programs need it at scale. client-go's per-object spam filter and
// aggregator remember 4,096 objects: a controller of more Networks (or a
// webhook of more Pods) forgets the oldest, and each object it forgot may
// burst again. Here they remember CorrelatorCacheSize objects, and on top
// of the per-object filter a token bucket bounds the Events per second that
// all objects together write, so that an outage across 100,000 Networks
// cannot flood the API server and etcd with Events.
package events

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/flowcontrol"
)

// CorrelatorCacheSize is how many objects the spam filter and the
// aggregator each remember: above the largest fleets measured (100,000
// Networks, docs/benchmarks.md), at a few hundred bytes per object that
// has had an Event.
const CorrelatorCacheSize = 1 << 17

// Limit bounds the Events all objects together write: QPS on average,
// Burst at once. The kubelet's --event-qps and --event-burst, by another
// name for the same thing; its defaults are 50 and 100.
type Limit struct {
	QPS   float32
	Burst int
}

// NewBroadcaster starts a broadcaster that writes to client's Events API
// within limit, and calls dropped for every Event the limit held back.
// Shut it down when done.
func NewBroadcaster(ctx context.Context, client kubernetes.Interface, limit Limit, dropped func()) record.EventBroadcaster {
	b := record.NewBroadcaster(record.WithContext(ctx),
		record.WithCorrelatorOptions(record.CorrelatorOptions{LRUCacheSize: CorrelatorCacheSize}))
	b.StartRecordingToSink(NewLimitedSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")}, limit, dropped))
	return b
}

// NewLimitedSink is sink within limit: an Event over it is dropped, and
// dropped is called. A limit with no QPS is none.
func NewLimitedSink(sink record.EventSink, limit Limit, dropped func()) record.EventSink {
	if limit.QPS <= 0 {
		return sink
	}
	return &limitedSink{sink: sink, bucket: flowcontrol.NewTokenBucketRateLimiter(limit.QPS, max(limit.Burst, 1)), dropped: dropped}
}

type limitedSink struct {
	sink    record.EventSink
	bucket  flowcontrol.RateLimiter
	dropped func()
}

// A dropped Event is reported to the broadcaster as written: an error
// would make it retry the Event (and log it) up to 12 times, the opposite
// of dropping it.
func (s *limitedSink) allow(e *corev1.Event) (*corev1.Event, bool) {
	if s.bucket.TryAccept() {
		return nil, true
	}
	if s.dropped != nil {
		s.dropped()
	}
	return e, false
}

func (s *limitedSink) Create(e *corev1.Event) (*corev1.Event, error) {
	if dropped, ok := s.allow(e); !ok {
		return dropped, nil
	}
	return s.sink.Create(e)
}

func (s *limitedSink) Update(e *corev1.Event) (*corev1.Event, error) {
	if dropped, ok := s.allow(e); !ok {
		return dropped, nil
	}
	return s.sink.Update(e)
}

func (s *limitedSink) Patch(old *corev1.Event, data []byte) (*corev1.Event, error) {
	if dropped, ok := s.allow(old); !ok {
		return dropped, nil
	}
	return s.sink.Patch(old, data)
}
