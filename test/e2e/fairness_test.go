package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/controller/fairqueue"
	"github.com/samplecrd/network-controller/test/framework"
)

// TestOneNamespacesFailuresDoNotDelayAnother (issue 40, finding 11): one
// controller serves two namespaces. 1,000 Networks of one ("noisy") name
// a Secret that does not exist and fail at every retry; a Network of the
// other ("quiet") made afterwards becomes Ready within the time a
// Network of that namespace took before the noise, plus a margin.
//
// The controller reaches Neutron through Keystone, so that a Network's
// first pass records its project and is retried (AddRateLimited) before
// the network is made: a Network becoming Ready goes through the rate
// limiter, as every failing Network does. With one bucket shared by the
// whole queue (client-go's default limiter), the noisy namespace's 1,000
// failures put that retry (1,000 − fairqueue.Burst) / fairqueue.QPS =
// 90 s behind; with a bucket per namespace it waits the per-key backoff,
// milliseconds.
func TestOneNamespacesFailuresDoNotDelayAnother(t *testing.T) {
	const (
		failing = 1000
		// margin is what the quiet Network may take beyond the first
		// one's: the noisy namespace's retries, QPS a second of its own
		// bucket, hold a worker for a few milliseconds each, and the API
		// server and Neutron answer slower on a loaded machine.
		margin = 10 * time.Second
	)
	// What the shared bucket would cost the quiet Network: the test can
	// tell the two limiters apart only if its margin is well below it.
	sharedDelay := time.Duration(failing-fairqueue.Burst) * time.Second / fairqueue.QPS
	if margin > sharedDelay/3 {
		t.Fatalf("the margin %v cannot tell a shared bucket's delay of %v from noise", margin, sharedDelay)
	}

	ctx := framework.TestContext(t, 10*time.Minute)
	other := startOtherCluster(ctx, t)
	noisy, quiet := "noisy", "quiet"
	other.namespace(ctx, t, noisy)
	other.namespace(ctx, t, quiet)
	c := startControllerOn(t, other.cp, quiet, []string{"OS_CLIENT_CONFIG_FILE=" + stack.Keystone.CloudsYAML},
		"--namespace=", "--neutron-endpoint=", "--os-cloud="+framework.PasswordCloud)
	cleanupNetworksIn(t, other.nc, noisy)
	cleanupNetworksIn(t, other.nc, quiet)

	// readyIn creates Network quiet/name and returns how long it took to
	// be Ready, as the test sees it (polled every 200ms). It waits long
	// enough to measure a shared bucket's delay, not only to refuse it.
	readyIn := func(name, cidr string) time.Duration {
		t.Helper()
		start := time.Now()
		if _, err := other.nc.SamplecrdV1().Networks(quiet).Create(ctx, &samplecrdv1.Network{
			ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: samplecrdv1.NetworkSpec{CIDR: cidr},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating Network %s/%s: %v", quiet, name, err)
		}
		waitForConditionIn(ctx, t, other.nc, quiet, name, sharedDelay+time.Minute, metav1.ConditionTrue, samplecrdv1.ReasonProvisioned)
		return time.Since(start)
	}
	// The first Network of the controller's project may pay for what is
	// done once (a token, a first list); the second is the measure.
	readyIn("first", "10.176.2.0/24")
	alone := readyIn("before", "10.176.0.0/24")
	t.Logf("a quiet Network alone: Ready in %v", alone)

	// The noise: Networks that name a Secret noisy does not have, made by
	// 16 clients at a time.
	workqueue.ParallelizeUntil(ctx, 16, failing, func(i int) {
		_, err := other.nc.SamplecrdV1().Networks(noisy).Create(ctx, &samplecrdv1.Network{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("noise-%04d", i)},
			Spec: samplecrdv1.NetworkSpec{CIDR: "10.177.0.0/24",
				CloudCredentialsRef: &samplecrdv1.CloudCredentialsReference{SecretName: "missing", CloudName: "any"}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Errorf("creating noise-%04d: %v", i, err)
		}
	})
	if t.Failed() {
		t.FailNow()
	}
	// Every one of them has failed once: each has taken a token of the
	// bucket its retries are counted against.
	framework.Eventually(ctx, t, 5*time.Minute, func(ctx context.Context) (bool, string, error) {
		list, err := other.nc.SamplecrdV1().Networks(noisy).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, "", err
		}
		failed := 0
		for _, n := range list.Items {
			if c := readyCondition(&n); c != nil && c.Reason == samplecrdv1.ReasonCredentialsUnavailable {
				failed++
			}
		}
		return failed == failing, fmt.Sprintf("%d of %d noisy Networks say CredentialsUnavailable", failed, failing), nil
	})
	if retries := c.metric(ctx, t, "workqueue_retries_total", map[string]string{"name": "networks"}); retries < failing {
		t.Errorf("workqueue_retries_total{name=\"networks\"} = %v, want at least the %d failures", retries, failing)
	}

	during := readyIn("during", "10.176.1.0/24")
	t.Logf("a quiet Network beside %d failing ones: Ready in %v (the shared bucket would add about %v)", failing, during, sharedDelay)
	if during > alone+margin {
		t.Errorf("the quiet Network took %v beside the noisy namespace, %v alone: more than the %v margin", during, alone, margin)
	}
}
