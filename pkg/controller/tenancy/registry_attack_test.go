package tenancy

import (
	"context"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/samplecrd/network-controller/pkg/controller/neutron"
)

// countingRefused is a client whose credentials Keystone refuses, counting
// the authentications asked of it.
type countingRefused struct {
	refused
	asked *atomic.Int32
}

func (c countingRefused) Place(ctx context.Context) (neutron.Place, error) {
	c.asked.Add(1)
	return c.refused.Place(ctx)
}

// TestARefusedCredentialIsAskedAgainOnlyAfterAWhile: a credential that
// cannot be used is read, and authenticated at Keystone, at most once per
// RereadAfter (--cloud-reload-interval), however often its Networks are
// synced, as one that can be used is ("The Secret is read again at most
// every --cloud-reload-interval", docs/tenancy.md).
//
// The attack: a reading that cannot be used "holds no place" (update
// returns before recording it), so nothing remembers it, and every sync
// of every Network naming it reads the Secret and, for credentials
// Keystone refuses, sends a failed authentication to the shared Keystone.
// Refusals are requeued rate-limited from 5ms, so one Network makes about
// ten failed authentications in its first few seconds, and a namespace of
// many Networks ten a second for minutes. A namespace that writes another
// user's name (the controller's own service user, whose name is often
// guessable) with a wrong password has the controller fail that user's
// authentications from the controller's own address: where Keystone's
// lockout_failure_attempts is set, the user is locked, and with it every
// namespace that uses the controller's cloud; where it is not, the
// controller is an unthrottled password oracle for any user of its
// Keystone.
//
// The fix should guarantee: a refused reading (missing, unreadable or
// malformed Secret, Keystone's refusal) is remembered, by the Secret's
// digest, until RereadAfter has passed, without taking a place under Max
// (a separate record, dropped when it expires). Note: this bounds the
// rate per credential; refusing a namespace's cloud that names the
// controller's own user belongs in neutron.ParseTenantCloud.
func TestARefusedCredentialIsAskedAgainOnlyAfterAWhile(t *testing.T) {
	for _, tc := range []struct {
		name    string
		secrets []*corev1.Secret
		refuse  bool
	}{
		{name: "Keystone refuses the credentials", secrets: []*corev1.Secret{secret("team-b", "cloud", keystone)}, refuse: true},
		{name: "the Secret does not exist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, 10, tc.secrets...)
			var asked atomic.Int32
			if tc.refuse {
				f.Registry.opts.Connect = func(*neutron.Cloud) neutron.Interface { return countingRefused{asked: &asked} }
			}
			for range 20 {
				if _, err := f.For(t.Context(), naming("team-b", "cloud")); err == nil {
					t.Fatal("credentials that cannot be used were used")
				}
			}
			if f.gets() > 1 || asked.Load() > 1 {
				t.Errorf("20 syncs within RereadAfter: %d Secret reads, %d authentications at Keystone; want at most 1 each",
					f.gets(), asked.Load())
			}
		})
	}
}
