package neutron

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	clocktesting "k8s.io/utils/clock/testing"
)

// cloudFixture is a Session over a Neutron that lists no networks, with a
// clouds.yaml whose password the test sets, and a Keystone (connect) that
// accepts only the passwords "right", for project-1, and "other", for
// project-2.
type cloudFixture struct {
	clock    *clocktesting.FakeClock
	session  *Session
	password atomic.Value // what clouds.yaml says now
	connects atomic.Int32 // attempts to authenticate
	requests atomic.Int32 // requests Neutron received
	// refuse makes Neutron answer 401, as it does for a revoked token.
	refuse atomic.Bool
}

func newCloudFixture(t *testing.T, password string) *cloudFixture {
	t.Helper()
	f := &cloudFixture{clock: clocktesting.NewFakeClock(time.Unix(1e9, 0))}
	f.password.Store(password)
	neutronServer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.requests.Add(1)
		if f.refuse.Load() {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"networks": []}`))
	}))
	t.Cleanup(neutronServer.Close)

	read := func() (*Cloud, error) {
		return &Cloud{auth: gophercloud.AuthOptions{Password: f.password.Load().(string)}}, nil
	}
	first, _ := read()
	f.session = NewSession(first, SessionOptions{
		Read: read,
		Connect: func(_ context.Context, cloud *Cloud) (*gophercloud.ServiceClient, Place, error) {
			f.connects.Add(1)
			project, ok := map[string]string{"right": "project-1", "other": "project-2"}[cloud.auth.Password]
			if !ok {
				return nil, Place{}, gophercloud.ErrUnexpectedResponseCode{Actual: http.StatusUnauthorized, Method: "POST", URL: "/v3/auth/tokens"}
			}
			client, err := NewNoAuthServiceClient(neutronServer.URL, nil)
			return client, Place{AuthURL: "https://keystone.test/v3", ProjectID: project}, err
		},
		ReloadInterval: 10 * time.Second,
		MaxRetryDelay:  time.Minute,
		Clock:          f.clock,
	})
	return f
}

func (f *cloudFixture) list() error { return f.listIn(context.Background()) }

func (f *cloudFixture) listIn(ctx context.Context) error {
	return f.session.ListNetworks(ctx, "mark", func([]Network) error { return nil })
}

// TestARequestGoesOnlyWhereItsContextRequires: a check of the place and
// the request it allows are two moments, and clouds.yaml may be swapped
// to another project's credentials in between. A request whose context
// requires the first place (InPlace) is then refused with a
// CredentialsError, and Neutron receives nothing; Place itself answers
// the new place, and a request that requires none goes.
func TestARequestGoesOnlyWhereItsContextRequires(t *testing.T) {
	f := newCloudFixture(t, "right")
	first, err := f.session.Place(context.Background())
	if err != nil || first.ProjectID != "project-1" {
		t.Fatalf("Place = %v, %v", first, err)
	}
	pinned := InPlace(context.Background(), first)
	if err := f.listIn(pinned); err != nil {
		t.Fatalf("a request in its place: %v", err)
	}

	f.password.Store("other") // the swap, after the check
	f.clock.Step(time.Minute)
	sent := f.requests.Load()
	if err := f.listIn(pinned); !IsCredentialsError(err) {
		t.Errorf("a request that requires project-1, with project-2's credentials: %v, want a CredentialsError", err)
	}
	if n := f.requests.Load(); n != sent {
		t.Errorf("Neutron received %d requests, want none", n-sent)
	}
	if now, err := f.session.Place(pinned); err != nil || now.ProjectID != "project-2" {
		t.Errorf("Place = %v, %v; want project-2, where the credentials now reach", now, err)
	}
	if err := f.list(); err != nil {
		t.Errorf("a request that requires no place: %v", err)
	}
}

// TestFixedCredentialsAreUsedWithoutARestart: wrong credentials fail every
// request with an AuthError and cost Keystone one attempt per backoff step;
// once clouds.yaml says the right password, the next read of it connects at
// once, whatever the backoff.
func TestFixedCredentialsAreUsedWithoutARestart(t *testing.T) {
	f := newCloudFixture(t, "wrong")
	for range 5 {
		if err := f.list(); !IsAuthError(err) {
			t.Fatalf("list with wrong credentials: %v, want an AuthError", err)
		}
	}
	if n := f.connects.Load(); n != 1 {
		t.Errorf("%d attempts to authenticate within the backoff, want 1", n)
	}
	if !IsAuthError(f.session.Err()) {
		t.Errorf("Err() = %v, want the AuthError", f.session.Err())
	}

	f.password.Store("right")
	f.clock.Step(5 * time.Second) // before the configuration is read again
	if err := f.list(); !IsAuthError(err) {
		t.Errorf("list before clouds.yaml is read again: %v, want the old AuthError", err)
	}
	f.clock.Step(5 * time.Second)
	if err := f.list(); err != nil {
		t.Fatalf("list after clouds.yaml was fixed: %v", err)
	}
	if f.session.Err() != nil {
		t.Errorf("Err() = %v after a successful connect", f.session.Err())
	}
}

// TestARevokedTokenConnectsAgain: a request refused with a 401 (gophercloud
// already tried to re-authenticate) drops the client; after the backoff the
// next request authenticates afresh.
func TestARevokedTokenConnectsAgain(t *testing.T) {
	f := newCloudFixture(t, "right")
	if err := f.list(); err != nil {
		t.Fatal(err)
	}
	f.refuse.Store(true)
	if err := f.list(); !IsAuthError(err) {
		t.Fatalf("list refused with 401: %v, want an AuthError", err)
	}
	f.refuse.Store(false)
	if err := f.list(); !IsAuthError(err) {
		t.Errorf("list within the backoff: %v, want the AuthError", err)
	}
	f.clock.Step(2 * time.Second)
	if err := f.list(); err != nil {
		t.Fatalf("list after the backoff: %v", err)
	}
	if n := f.connects.Load(); n != 2 {
		t.Errorf("%d connects, want 2", n)
	}
}

// TestUnreachableKeystoneIsNotAnAuthError: a connect that got no answer is
// unavailability (retried, the breaker's business), not refused credentials.
func TestUnreachableKeystoneIsNotAnAuthError(t *testing.T) {
	s := NewSession(&Cloud{}, SessionOptions{
		Read: func() (*Cloud, error) { return nil, errors.New("unused") },
		Connect: func(context.Context, *Cloud) (*gophercloud.ServiceClient, Place, error) {
			return nil, Place{}, errors.New("dial tcp 127.0.0.1:5000: connection refused")
		},
		ReloadInterval: time.Hour, MaxRetryDelay: time.Minute,
	})
	err := s.ListNetworks(context.Background(), "mark", func([]Network) error { return nil })
	if err == nil || IsAuthError(err) || !Unreachable(err) {
		t.Errorf("err = %v: want unavailability, not an AuthError", err)
	}
}
