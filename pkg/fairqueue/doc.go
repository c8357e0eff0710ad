// Package fairqueue holds the Network queue's rate limiter, which keeps
// one namespace's failures from delaying another namespace's retries.
//
// client-go's default controller rate limiter is the larger of a per-key
// exponential backoff and one token bucket (10/s, burst 100) shared by
// every key. In a controller that serves many namespaces, the shared
// bucket is a shared budget: 1,200 Networks failing in one namespace take
// two minutes of tokens, and every other namespace's retries wait behind
// them. RateLimiter keeps the per-key backoff and gives each namespace a
// bucket of its own instead.
package fairqueue
