package serving

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// TestProtect: no accepted token is 401, a user the API server does not
// authorize for the path is 403, an authorized one is served; the
// authorizer is asked about the request's verb and path.
func TestProtect(t *testing.T) {
	var asked authorizer.Attributes
	d := &DelegatedAuth{
		authn: authenticator.RequestFunc(func(r *http.Request) (*authenticator.Response, bool, error) {
			switch r.Header.Get("Authorization") {
			case "Bearer reader":
				return &authenticator.Response{User: &user.DefaultInfo{Name: "reader"}}, true, nil
			case "Bearer nobody":
				return &authenticator.Response{User: &user.DefaultInfo{Name: "nobody"}}, true, nil
			}
			return nil, false, nil
		}),
		authz: authorizer.AuthorizerFunc(func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
			asked = a
			if a.GetUser().GetName() == "reader" {
				return authorizer.DecisionAllow, "", nil
			}
			return authorizer.DecisionNoOpinion, "no binding", nil
		}),
	}
	h := d.Protect(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("metrics")) }))
	for _, tc := range []struct {
		token string
		want  int
	}{{"", http.StatusUnauthorized}, {"someone", http.StatusUnauthorized}, {"nobody", http.StatusForbidden}, {"reader", http.StatusOK}} {
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		if tc.token != "" {
			req.Header.Set("Authorization", "Bearer "+tc.token)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tc.want {
			t.Errorf("token %q: %d, want %d", tc.token, rec.Code, tc.want)
		}
	}
	if asked == nil || asked.GetVerb() != "get" || asked.GetPath() != "/metrics" || asked.IsResourceRequest() {
		t.Errorf("the authorizer was asked %+v, want get of the non-resource path /metrics", asked)
	}
}
