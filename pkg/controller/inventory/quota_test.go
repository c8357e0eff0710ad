package inventory_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/component-base/metrics/testutil"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/samplecrd/network-controller/pkg/component/metrics"
	"github.com/samplecrd/network-controller/pkg/controller/inventory"
	"github.com/samplecrd/network-controller/pkg/controller/neutron/fake"
)

// TestEachListReadsTheProjectsQuotaOnce: the inventory's list loop reads
// the project's quota with each list, one request whatever the Networks,
// and exports it by project and resource (networks: 2 used of 5, one of
// them another cluster's); once the loop stops, the project's series go.
func TestEachListReadsTheProjectsQuotaOnce(t *testing.T) {
	metrics.RegisterController()
	const project = "quota-project"
	f := fake.New()
	f.SetProject(project)
	f.SetNetworkQuota(5)
	seed(f, mark(t, "prod"), ownerA, "10.0.0.0/24")
	seed(f, mark(t, "other-cluster"), ownerB, "10.0.1.0/24")
	clk := clocktesting.NewFakeClock(time.Unix(1e9, 0))
	inv := inventory.New(f, mark(t, "prod"), inventory.Options{ResyncPeriod: time.Minute, Clock: clk})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	l := runLoop(ctx, t, inv, clk)

	quotaReads := func() int {
		return len(slices.DeleteFunc(f.Requests(), func(r string) bool { return r != fake.Quota }))
	}
	l.next("at start", time.Second, time.Minute)
	if got := quotaReads(); got != 1 {
		t.Errorf("%d quota reads after one list, want 1", got)
	}
	limit, err := testutil.GetGaugeMetricValue(metrics.NeutronQuotaLimit.WithLabelValues("", project, "networks"))
	if err != nil {
		t.Fatal(err)
	}
	used, err := testutil.GetGaugeMetricValue(metrics.NeutronQuotaUsed.WithLabelValues("", project, "networks"))
	if err != nil {
		t.Fatal(err)
	}
	if limit != 5 || used != 2 {
		t.Errorf("networks quota: %v used of %v, want 2 of 5", used, limit)
	}
	l.next("a period later", time.Second, 2*time.Minute)
	if got := quotaReads(); got != 2 {
		t.Errorf("%d quota reads after two lists, want 2", got)
	}

	cancel()
	if err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, wait.ForeverTestTimeout, true, func(context.Context) (bool, error) {
		return seriesOf(t, project) == 0, nil
	}); err != nil {
		t.Fatalf("%d quota series of the project are still exported after its loop stopped", seriesOf(t, project))
	}
}

// seriesOf counts the quota series of project that /metrics would serve.
func seriesOf(t *testing.T, project string) int {
	t.Helper()
	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, mf := range families {
		if mf.GetName() != "network_controller_neutron_quota_limit" && mf.GetName() != "network_controller_neutron_quota_used" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "project_id" && l.GetValue() == project {
					n++
				}
			}
		}
	}
	return n
}

// TestTheQuotaSeriesStayWhileAnotherInventoryListsThePlace: two
// namespaces' credentials reach one project, and each inventory lists it
// and exports its quota; the first to stop leaves the series to the
// other, and they go only when the last stops. Without the shared count
// the first to stop would remove them until the other's next list.
func TestTheQuotaSeriesStayWhileAnotherInventoryListsThePlace(t *testing.T) {
	metrics.RegisterController()
	const project = "shared-quota-project"
	exports := &inventory.QuotaExports{}
	run := func() (stop func()) {
		f := fake.New()
		f.SetProject(project)
		f.SetNetworkQuota(5)
		clk := clocktesting.NewFakeClock(time.Unix(1e9, 0))
		inv := inventory.New(f, mark(t, "prod"), inventory.Options{ResyncPeriod: time.Minute, Clock: clk, QuotaExports: exports})
		ctx, cancel := context.WithCancel(t.Context())
		lists := make(chan inventory.Listed, 10)
		done := make(chan struct{})
		go func() {
			defer close(done)
			inv.Run(ctx, func(_ context.Context, listed inventory.Listed) { lists <- listed })
		}()
		l := &loop{t: t, clk: clk, lists: lists}
		l.next("at start", time.Second, time.Minute)
		return func() {
			cancel()
			<-done
		}
	}
	stopA, stopB := run(), run()
	if n := seriesOf(t, project); n == 0 {
		t.Fatal("no quota series of the project while two inventories list it")
	}
	stopA()
	if n := seriesOf(t, project); n == 0 {
		t.Error("the first inventory to stop removed the series the other still exports")
	}
	stopB()
	if n := seriesOf(t, project); n != 0 {
		t.Errorf("%d quota series of the project after both inventories stopped, want none", n)
	}
}
