package serving

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"time"
)

// The deadlines of a webhook's server. The API server sends each review
// whole, at once, and gives up on the answer after 30 s (a conversion) or
// the webhook's timeoutSeconds (an admission, at most 30 s): a client
// that takes seconds to send its headers or its body is not the API
// server, and is cut well before the API server's own timeout, so the
// connections it holds are free again while the API server still waits.
const (
	// webhookHeaderTimeout is from a connection's opening (its TLS
	// handshake included), or from the end of its idle wait, to the end
	// of a request's headers.
	webhookHeaderTimeout = 5 * time.Second
	// webhookReadTimeout is from a request's start to the end of its
	// body: 8 MiB, the largest review, at under 1 MB/s.
	webhookReadTimeout = 10 * time.Second
	// webhookWriteTimeout is from the end of a request's headers to the
	// end of its answer: up to the API server's own timeout, since it
	// covers the answer being worked out.
	webhookWriteTimeout = 30 * time.Second
	// webhookIdleTimeout is how long a kept-alive connection waits for
	// its next request. The API server dials again when it needs one,
	// for a handshake's cost.
	webhookIdleTimeout = 10 * time.Second
)

// NewWebhookServer is the HTTPS server of a webhook the API server calls,
// with tlsConfig, serving h (behind LimitConcurrency) until ctx ends, as
// both the injector and the conversion webhook serve theirs: the
// deadlines above, and headers of at most 64 KiB. Serve it with Run.
func NewWebhookServer(ctx context.Context, h http.Handler, tlsConfig *tls.Config) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: webhookHeaderTimeout,
		ReadTimeout:       webhookReadTimeout,
		WriteTimeout:      webhookWriteTimeout,
		IdleTimeout:       webhookIdleTimeout,
		MaxHeaderBytes:    64 << 10,
		TLSConfig:         tlsConfig,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
}
