package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/test/framework"
)

// TestATenantPolicySaysHowFullItsNamespacesAre (issue 54): in a cluster
// of its own, served whole (no --namespace, as a cluster's one controller
// runs), a TenantPolicy caps two namespaces at three Networks each. With
// four Networks in the first and one in the second, its status says 3/3
// and 1/3 and names the fourth as waiting, and its printer columns show
// the counts; once one of the three is deleted, the fourth is made and
// none waits.
func TestATenantPolicySaysHowFullItsNamespacesAre(t *testing.T) {
	ctx := framework.TestContext(t, 4*time.Minute)
	ns := newNamespace(ctx, t)
	o := startOtherCluster(ctx, t)
	full, light := ns+"-full", ns+"-light"
	o.namespace(ctx, t, full)
	o.namespace(ctx, t, light)
	startControllerOn(t, o.cp, ns, nil, "--namespace=")
	cleanupNetworksIn(t, o.nc, full)
	cleanupNetworksIn(t, o.nc, light)
	policy := &samplecrdv1.TenantPolicy{ObjectMeta: metav1.ObjectMeta{Name: "cap-" + ns}, Spec: samplecrdv1.TenantPolicySpec{
		NamespaceSelector: metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpIn, Values: []string{full, light}}}},
		MaxNetworks: ptr.To[int32](3)}}
	if _, err := o.nc.SamplecrdV1().TenantPolicies().Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// Made one after another: a, b and c are the oldest, d waits.
	for i, name := range []string{"a", "b", "c"} {
		createIn(ctx, t, o.nc, full, name, fmt.Sprintf("10.179.%d.0/24", i))
	}
	createIn(ctx, t, o.nc, light, "one", "10.179.9.0/24")
	if _, err := o.nc.SamplecrdV1().Networks(full).Create(ctx, &samplecrdv1.Network{ObjectMeta: metav1.ObjectMeta{Name: "d"},
		Spec: samplecrdv1.NetworkSpec{CIDR: "10.179.3.0/24"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForConditionIn(ctx, t, o.nc, full, "d", time.Minute, metav1.ConditionFalse, samplecrdv1.ReasonNotAllowed)

	three := ptr.To[int32](3)
	statusIs(ctx, t, o, policy.Name, samplecrdv1.TenantPolicyStatus{ObservedGeneration: 1, Namespaces: 2, NamespacesAtCap: 1, NetworksWaiting: 1,
		Usage: []samplecrdv1.NamespaceUsage{
			{Namespace: full, AtWork: 3, MaxNetworks: three, Waiting: 1, WaitingNetworks: []string{"d"}},
			{Namespace: light, AtWork: 1, MaxNetworks: three},
		}})
	raw, err := o.nc.SamplecrdV1().RESTClient().Get().Resource("tenantpolicies").Name(policy.Name).
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var table metav1.Table
	if err := json.Unmarshal(raw, &table); err != nil || len(table.Rows) != 1 {
		t.Fatalf("not a one-row table (%v): %s", err, raw)
	}
	columns := map[string]string{}
	for i, c := range table.ColumnDefinitions {
		columns[c.Name] = fmt.Sprint(table.Rows[0].Cells[i])
	}
	for name, want := range map[string]string{"Max": "3", "Namespaces": "2", "At-Cap": "1", "Waiting": "1"} {
		if columns[name] != want {
			t.Errorf("kubectl get tenantpolicies: column %s is %q, want %q (%v)", name, columns[name], want, columns)
		}
	}

	if err := o.nc.SamplecrdV1().Networks(full).Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForConditionIn(ctx, t, o.nc, full, "d", time.Minute, metav1.ConditionTrue, samplecrdv1.ReasonProvisioned)
	statusIs(ctx, t, o, policy.Name, samplecrdv1.TenantPolicyStatus{ObservedGeneration: 1, Namespaces: 2, NamespacesAtCap: 1,
		Usage: []samplecrdv1.NamespaceUsage{
			{Namespace: full, AtWork: 3, MaxNetworks: three},
			{Namespace: light, AtWork: 1, MaxNetworks: three},
		}})
}

// statusIs waits until TenantPolicy name's status in cluster o is want.
func statusIs(ctx context.Context, t *testing.T, o *otherCluster, name string, want samplecrdv1.TenantPolicyStatus) {
	t.Helper()
	wantJSON, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	framework.Eventually(ctx, t, time.Minute, func(ctx context.Context) (bool, string, error) {
		tp, err := o.nc.SamplecrdV1().TenantPolicies().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		got, err := json.Marshal(tp.Status)
		return string(got) == string(wantJSON), fmt.Sprintf("status %s, want %s", got, wantJSON), err
	})
}
