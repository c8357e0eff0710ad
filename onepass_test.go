package main

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	core "k8s.io/client-go/testing"
	"k8s.io/klog/v2/ktesting"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/controller/inventory"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	neutronfake "github.com/samplecrd/network-controller/pkg/controller/neutron/fake"
	"github.com/samplecrd/network-controller/pkg/controller/reconcile"
)

// oneProject hands every Network the one real reconciler: pkg/controller/reconcile
// over the fake Neutron, writing to the fixture's fake clientset, so that a
// test follows a Network through the queue as the controller runs it.
type oneProject struct{ r *reconcile.Reconciler }

func (p oneProject) Start(context.Context, func(any)) error { return nil }

func (p oneProject) For(context.Context, *samplecrdv1.Network) (Reconciler, error) { return p.r, nil }

// TestANewNetworkIsReadyAfterOneTripThroughTheQueue: a new Network's
// place (and an adoption's names) is stored in status by the pass that
// makes (or marks) its network, before it does, not by a pass of its own:
// one Get from the queue makes it Ready, and the key is not requeued (no
// step of the queue's rate limiter). A record the API server refuses
// makes nothing in Neutron and is retried with backoff.
func TestANewNetworkIsReadyAfterOneTripThroughTheQueue(t *testing.T) {
	inKeystone := func(f *neutronfake.Neutron) { f.SetProject("project-a"); f.SetRegion("region-1") }
	handmade := func(f *neutronfake.Neutron) {
		inKeystone(f)
		id := f.AddNetwork("handmade", "made by a person")
		f.AddSubnet(id, "handmade", "", "192.168.0.0/16", "192.168.0.1")
	}
	adopting := func(n *samplecrdv1.Network) *samplecrdv1.Network {
		n.Spec.Adopt = &samplecrdv1.Adoption{NetworkID: "net-1"} // the fake's first ID
		return n
	}
	const (
		finalizer = "apply networks"
		status    = "apply networks/status"
	)
	tests := []struct {
		name    string
		network *samplecrdv1.Network
		seed    func(*neutronfake.Neutron)
		// recordFault is the API server's answer to the pass's record.
		recordFault error
		// wantReady is "Status/Reason" after the one trip.
		wantReady    string
		wantRequeues int
		// wantNeutron are the writes Neutron received, in order.
		wantNeutron []string
		// wantAPI are the API server writes, in order.
		wantAPI []string
	}{
		{
			name: "through Keystone: the place stored, the network and subnet made, Ready; no requeue", network: newNetwork(), seed: inKeystone,
			wantReady: "True/Provisioned", wantNeutron: []string{neutronfake.CreateNetwork, neutronfake.CreateSubnet},
			wantAPI: []string{finalizer, status, status},
		},
		{
			name: "a Neutron without Keystone: no place to store, made, Ready; no requeue", network: newNetwork(),
			wantReady: "True/Provisioned", wantNeutron: []string{neutronfake.CreateNetwork, neutronfake.CreateSubnet},
			wantAPI: []string{finalizer, status},
		},
		{
			name: "an adoption: the place and the names stored, then marked, Ready; no requeue", network: adopting(newNetwork()), seed: handmade,
			wantReady: "True/Provisioned", wantNeutron: []string{neutronfake.UpdateSubnet, neutronfake.UpdateNetwork},
			wantAPI: []string{finalizer, status, status, status},
		},
		{
			name: "the place write fails: nothing made in Neutron, Provisioning, one backoff step", network: newNetwork(), seed: inKeystone,
			recordFault: apierrors.NewServiceUnavailable("etcd is down"),
			wantReady:   "False/Provisioning", wantRequeues: 1, wantNeutron: nil,
			wantAPI: []string{finalizer, status, status},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ctx := ktesting.NewTestContext(t)
			f := newFixture(t, tc.network)
			fakeNeutron := neutronfake.New()
			if tc.seed != nil {
				tc.seed(fakeNeutron)
			}
			mark, err := neutron.NewMark("test-cluster", types.UID("c1c1c1c1-0000-4000-8000-0000000000c1"))
			if err != nil {
				t.Fatal(err)
			}
			inv := inventory.New(fakeNeutron, mark, inventory.Options{ResyncPeriod: time.Hour, LateCompletionGrace: time.Hour})
			if _, err := inv.Refresh(ctx); err != nil {
				t.Fatal(err)
			}
			f.controller.projects = oneProject{r: reconcile.New(inv, mark, reconcile.Options{Records: reconcile.ApplyRecord{Client: f.client}})}
			f.client.PrependReactor("patch", "networks", func(action core.Action) (bool, runtime.Object, error) {
				patch, ok := action.(core.PatchActionImpl)
				if ok && tc.recordFault != nil && patch.GetSubresource() == "status" && patch.PatchOptions.FieldManager == reconcile.RecordFieldManager {
					return true, nil, tc.recordFault
				}
				return false, nil, nil
			})
			fakeNeutron.ClearRequests()
			f.client.ClearActions()

			f.controller.workqueue.Add(netKey)
			f.controller.processNextWorkItem(ctx)

			cond := meta.FindStatusCondition(f.network().Status.Conditions, samplecrdv1.ConditionReady)
			if cond == nil {
				t.Fatalf("no Ready condition after one trip, want %s", tc.wantReady)
			}
			if got := string(cond.Status) + "/" + cond.Reason; got != tc.wantReady {
				t.Errorf("Ready after one trip = %s (%s), want %s", got, cond.Message, tc.wantReady)
			}
			if got := f.controller.workqueue.NumRequeues(netKey); got != tc.wantRequeues {
				t.Errorf("requeues = %d, want %d", got, tc.wantRequeues)
			}
			if tc.wantRequeues == 0 && f.controller.workqueue.Len() != 0 {
				t.Error("the key is back in the queue")
			}
			var writes []string
			for _, req := range fakeNeutron.Requests() {
				if strings.HasPrefix(req, "create-") || strings.HasPrefix(req, "update-") || strings.HasPrefix(req, "delete-") {
					writes = append(writes, req)
				}
			}
			if !slices.Equal(writes, tc.wantNeutron) {
				t.Errorf("Neutron writes = %q, want %q", writes, tc.wantNeutron)
			}
			if got := f.writes(); !slices.Equal(got, tc.wantAPI) {
				t.Errorf("API server writes = %q, want %q", got, tc.wantAPI)
			}
		})
	}
}
