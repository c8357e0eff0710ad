package fairqueue

import (
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/buffer"
)

// Queue is the storage under the Network work queue (client-go's
// workqueue.Queue): a FIFO per namespace, served round robin. Pop takes
// the oldest key of the namespace whose turn it is, and that namespace,
// if it has keys left, goes to the back of the turns. A namespace's
// oldest key waits behind at most one key of each other namespace,
// however many keys that namespace queued: a resync of a namespace of
// 10,000 Networks no longer puts 10,000 keys ahead of another namespace's
// new Network. API Priority and Fairness serves its queues in the same way.
//
// Dedup and one worker per key stay the work queue's (workqueue.Typed):
// it pushes a key only when the key is not already queued, and Touches
// it otherwise; Touch does nothing, so a key added again keeps its place.
//
// A namespace's FIFO is dropped when its last key is popped, so the
// queue holds state only for namespaces with keys waiting, never for
// every namespace it has seen.
//
// Keys are of any type K whose namespace a function tells: the Network
// queue's cache.ObjectName (NewQueue), the garbage collector's orphans
// (NewQueueFor).
//
// Not safe for concurrent use: workqueue.Typed calls it under its lock.
type Queue[K comparable] struct {
	namespace func(K) string
	// fifos holds the waiting keys of each namespace with keys waiting.
	fifos map[string]*buffer.Ring[K]
	// turns holds the namespaces of fifos, each once, in the order they
	// are served.
	turns buffer.Ring[string]
	// len is the number of keys in all fifos.
	len int
}

var _ workqueue.Queue[cache.ObjectName] = (*Queue[cache.ObjectName])(nil)

// NewQueue returns an empty Queue of the Network queue's keys.
func NewQueue() *Queue[cache.ObjectName] { return NewQueueFor(objectNamespace) }

// NewQueueFor returns an empty Queue of keys whose namespace is
// namespace's.
func NewQueueFor[K comparable](namespace func(K) string) *Queue[K] {
	return &Queue[K]{namespace: namespace, fifos: map[string]*buffer.Ring[K]{}}
}

// QueueConfig is the configuration of a rate-limited work queue named
// name (its workqueue_* metrics) that stores its keys in a Queue:
// client-go's own queue, delaying queue and rate-limiting queue, each
// named as client-go names them, with the fair Queue underneath instead
// of the default single FIFO.
func QueueConfig(name string) workqueue.TypedRateLimitingQueueConfig[cache.ObjectName] {
	return QueueConfigFor(name, objectNamespace)
}

// QueueConfigFor is QueueConfig for keys whose namespace is namespace's.
func QueueConfigFor[K comparable](name string, namespace func(K) string) workqueue.TypedRateLimitingQueueConfig[K] {
	return workqueue.TypedRateLimitingQueueConfig[K]{
		Name: name,
		DelayingQueue: workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[K]{
			Name: name,
			Queue: workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[K]{
				Name:  name,
				Queue: NewQueueFor(namespace),
			}),
		}),
	}
}

// Touch does nothing: a key added again while it waits keeps its place.
func (q *Queue[K]) Touch(K) {}

// Push adds key at the back of its namespace's FIFO; a namespace with no
// keys waiting takes its turn after those that have.
func (q *Queue[K]) Push(key K) {
	namespace := q.namespace(key)
	fifo, ok := q.fifos[namespace]
	if !ok {
		fifo = &buffer.Ring[K]{}
		q.fifos[namespace] = fifo
		q.turns.WriteOne(namespace)
	}
	fifo.WriteOne(key)
	q.len++
}

// Len returns the number of keys waiting.
func (q *Queue[K]) Len() int { return q.len }

// Pop removes and returns the oldest key of the namespace whose turn it
// is. The work queue calls it only when Len is not 0; on an empty Queue
// it returns the zero key.
func (q *Queue[K]) Pop() K {
	namespace, ok := q.turns.ReadOne()
	if !ok {
		var zero K
		return zero
	}
	fifo := q.fifos[namespace]
	key, _ := fifo.ReadOne()
	q.len--
	if fifo.Len() == 0 {
		delete(q.fifos, namespace)
	} else {
		q.turns.WriteOne(namespace)
	}
	return key
}

// namespaces returns how many namespaces have keys waiting.
func (q *Queue[K]) namespaces() int { return len(q.fifos) }
