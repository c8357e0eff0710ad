package serving

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
)

// DelegatedAuth lets the API server decide who may read an endpoint, as
// kube-controller-manager's secure port does: the caller's bearer token is
// checked with a TokenReview, and what it may do with a
// SubjectAccessReview for the request's path (nonResourceURLs in RBAC).
// Answers are cached for a few seconds, so a scrape every 15 s costs the
// API server little. The program's own credentials need the ClusterRole
// system:auth-delegator.
type DelegatedAuth struct {
	authn authenticator.Request
	authz authorizer.Authorizer
}

// NewDelegatedAuth asks client's API server.
func NewDelegatedAuth(client kubernetes.Interface) (*DelegatedAuth, error) {
	backoff := &wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5}
	authn, _, err := authenticatorfactory.DelegatingAuthenticatorConfig{
		TokenAccessReviewClient:  client.AuthenticationV1(),
		TokenAccessReviewTimeout: 10 * time.Second,
		WebhookRetryBackoff:      backoff,
		CacheTTL:                 10 * time.Second,
	}.New()
	if err != nil {
		return nil, fmt.Errorf("building the delegated authenticator: %w", err)
	}
	authz, err := authorizerfactory.DelegatingAuthorizerConfig{
		SubjectAccessReviewClient: client.AuthorizationV1(),
		AllowCacheTTL:             10 * time.Second,
		DenyCacheTTL:              10 * time.Second,
		WebhookRetryBackoff:       backoff,
	}.New()
	if err != nil {
		return nil, fmt.Errorf("building the delegated authorizer: %w", err)
	}
	return &DelegatedAuth{authn: authn, authz: authz}, nil
}

// Protect serves h only to callers the API server authenticates (else
// 401) and authorizes to the request's verb on its path (else 403).
func (d *DelegatedAuth) Protect(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		resp, ok, err := d.authn.AuthenticateRequest(r)
		if err != nil || !ok {
			if err != nil {
				klog.FromContext(r.Context()).V(2).Info("Unauthenticated request", "path", r.URL.Path, "err", err)
			}
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		decision, reason, err := d.authz.Authorize(r.Context(), authorizer.AttributesRecord{
			User:            resp.User,
			Verb:            strings.ToLower(r.Method),
			Path:            r.URL.Path,
			ResourceRequest: false,
		})
		if err != nil || decision != authorizer.DecisionAllow {
			klog.FromContext(r.Context()).V(2).Info("Forbidden request", "path", r.URL.Path, "user", resp.User.GetName(), "reason", reason, "err", err)
			http.Error(w, fmt.Sprintf("Forbidden: %s may not %s %s", resp.User.GetName(), strings.ToLower(r.Method), r.URL.Path), http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}
