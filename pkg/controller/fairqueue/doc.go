// Package fairqueue makes the Network work queue, and the garbage
// collector's (pkg/controller/collector), fair across namespaces: one namespace's
// failures or backlog do not delay another namespace's keys.
//
// client-go's default controller rate limiter is the larger of a per-key
// exponential backoff and one token bucket (10/s, burst 100) shared by
// every key. In a controller that serves many namespaces, the shared
// bucket is a shared budget: 1,200 Networks failing in one namespace take
// two minutes of tokens, and every other namespace's retries wait behind
// them. RateLimiter keeps the per-key backoff and gives each namespace a
// bucket of its own instead.
//
// client-go's default queue is one FIFO: a namespace that queues 10,000
// keys at once (a resync) puts them all ahead of another namespace's new
// Network. Queue, the storage under the work queue (QueueConfig), keeps a
// FIFO per namespace and serves them in turn.
package fairqueue
