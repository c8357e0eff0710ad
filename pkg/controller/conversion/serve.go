package conversion

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"time"

	"k8s.io/klog/v2"

	"github.com/samplecrd/network-controller/pkg/component/serving"
)

// Limits are what the webhook holds its requests to, as the injector
// holds its reviews (serving.LimitConcurrency): a few at once, each body
// read in bounded chunks, those whose clients have not sent their bodies
// yet in places of their own, and all of them together within a memory
// budget that the controller's own memory limit (the chart's 1536Mi)
// leaves room for beside its caches: the largest review, the places, and
// 16 MiB for the small reviews the API server sends meanwhile.
func Limits() serving.Limits {
	l := serving.Limits{
		Slots:      8,
		MaxBody:    MaxRequestBytes,
		PerRequest: serving.RequestOverhead,
		Cost:       ReviewCost,
		Waiting:    serving.WaitingRequests,
		PerSource:  serving.WaitingPerSource,
		// Short beside the API server's 30 s timeout of a conversion call,
		// so that an overloaded replica says so while the API server can
		// still retry the read.
		Wait: time.Second,
	}
	l.Budget = l.Least() + 16<<20
	return l
}

// Handler is the webhook at Path behind Limits, reading stored to check
// v1 writes.
func Handler(stored Stored) http.Handler {
	m := http.NewServeMux()
	m.Handle(Path, serving.LimitConcurrency(Webhook{Stored: stored}, Limits()))
	return m
}

// Serve listens on addr and serves Handler(stored) over HTTPS with
// tlsConfig until ctx ends. It returns once it listens: an address that
// cannot be bound is its error; a server that fails later is logged.
func Serve(ctx context.Context, addr string, tlsConfig *tls.Config, stored Stored) (net.Addr, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listening on %s for the conversion webhook: %w", addr, err)
	}
	srv := serving.NewWebhookServer(ctx, Handler(stored), tlsConfig)
	logger := klog.FromContext(ctx)
	go func() {
		if err := serving.Run(ctx, srv, ln); err != nil {
			logger.Error(err, "Conversion webhook server failed", "address", addr)
		}
	}()
	logger.Info("Serving the conversion webhook", "address", ln.Addr().String(), "path", Path)
	return ln.Addr(), nil
}
