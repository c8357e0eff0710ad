package leader

import (
	"context"
	"errors"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/utils/ptr"
)

// release does what client-go's release does once its cached view says
// it leads: read the Lease, then write it back with no holder.
func release(ctx context.Context, lock resourcelock.Interface) error {
	current, _, err := lock.Get(ctx)
	if err != nil {
		return err
	}
	now := metav1.NewTime(time.Now())
	return lock.Update(ctx, resourcelock.LeaderElectionRecord{LeaderTransitions: current.LeaderTransitions,
		LeaseDurationSeconds: 1, RenewTime: now, AcquireTime: now})
}

// TestAReplicaReleasesOnlyALeaseItHolds: a replica whose renewal failed
// while it could not read the Lease still believes it holds it; when it
// then releases, the Lease it reads names its successor, and the release
// must leave it so. Its own Lease it releases as before.
func TestAReplicaReleasesOnlyALeaseItHolds(t *testing.T) {
	for _, tc := range []struct {
		holder     string
		wantHolder string
	}{
		{holder: "successor", wantHolder: "successor"},
		{holder: "me", wantHolder: ""},
	} {
		t.Run("held by "+tc.holder, func(t *testing.T) {
			ctx := t.Context()
			client := fake.NewClientset(&coordinationv1.Lease{
				ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "network-controller"},
				Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(tc.holder), LeaseDurationSeconds: ptr.To[int32](15),
					RenewTime: &metav1.MicroTime{Time: time.Now()}},
			})
			err := release(ctx, &releasesOnlyOurs{Interface: leaseLock(t, client), id: "me"})
			if (tc.holder != "me") != errors.Is(err, errNotOurs) {
				t.Errorf("release: %v", err)
			}
			lease, err := client.CoordinationV1().Leases("default").Get(ctx, "network-controller", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := ptr.Deref(lease.Spec.HolderIdentity, ""); got != tc.wantHolder {
				t.Errorf("the Lease held by %q names %q after the release, want %q", tc.holder, got, tc.wantHolder)
			}
		})
	}
}
