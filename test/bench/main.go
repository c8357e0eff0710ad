// Command bench measures network-controller against the real stack — etcd,
// kube-apiserver, neutron-server with ML2/OVN — and prints one table: how
// fast Networks become Ready next to what Neutron and the API server can do
// at all, what each Network costs, what an in-sync cluster costs per
// resync, a restart, memory, and how fast and at what cost in Neutron
// requests all N are deleted again. It asserts nothing.
//
//	go run ./test/bench -n 100 -workers 8        (make bench N=100)
//
// Figures come from the same run: the controller's own metrics
// (rest_client_*, network_controller_*), kube-apiserver's
// apiserver_request_total, and timestamps taken as watch events arrive.
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
	applyv2 "github.com/samplecrd/network-controller/pkg/generated/applyconfiguration/samplecrd/v2"
	clientset "github.com/samplecrd/network-controller/pkg/generated/clientset/versioned"
	"github.com/samplecrd/network-controller/test/framework"
)

type config struct {
	n, workers int
	resync     time.Duration
	// rawN is how many pairs the raw Neutron loop makes, N when 0: at
	// N=10,000 the loop alone would take as long as the controller.
	rawN int
	// rich gives every Network the subnet options too.
	rich bool
	// fakeNeutron puts an in-memory Neutron (fakeneutron.go) in place of
	// neutron-server, for N beyond what neutron-server makes in a session.
	fakeNeutron bool
	// keystone puts neutron-server behind Keystone, and the controller
	// authenticates with --os-cloud: the run then counts the tokens.
	keystone bool
	// neutronEndpoint is where the controller finds Neutron: set by run.
	neutronEndpoint string
	// kubeAPIQPS and kubeAPIBurst are the controller's client-side limit
	// on API server requests.
	kubeAPIQPS   float64
	kubeAPIBurst int
	// rounds is how many times the plain loop and the controller are
	// measured in turn (pairedRound); 0: 3 up to N = 200, else 1.
	rounds int
	// applyN is how many Networks one kubectl apply makes in the phase
	// that compares a v1 client's creates with a v2 client's (applyPhase);
	// 0 skips it.
	applyN int
}

func main() {
	var c config
	flag.IntVar(&c.n, "n", 100, "number of Networks")
	flag.IntVar(&c.workers, "workers", 8, "the controller's --workers, and the parallelism of the raw measurements")
	// The controller's default Neutron list period: a shorter one lists
	// all of Neutron more often, which at N=1000 costs a quarter of the
	// creates' rate on 2 cores (docs/benchmarks.md).
	flag.DurationVar(&c.resync, "resync", 5*time.Minute, "the controller's --resync-period and --neutron-resync-period (5m, the Neutron default)")
	flag.IntVar(&c.rawN, "raw-n", 0, "pairs the raw Neutron loop makes to measure Neutron's limit (0: N)")
	flag.BoolVar(&c.rich, "rich", false, "give every Network DNS servers, two host routes, an allocation pool and an MTU")
	flag.Float64Var(&c.kubeAPIQPS, "kube-api-qps", 200, "the controller's --kube-api-qps, its client-side limit on API server requests (200, its default)")
	flag.IntVar(&c.kubeAPIBurst, "kube-api-burst", 400, "the controller's --kube-api-burst (400, its default)")
	flag.IntVar(&c.applyN, "apply-n", 200, "Networks one kubectl apply makes, v1 against v2 (0: skip the phase)")
	flag.IntVar(&c.rounds, "rounds", 0, "times the plain loop and the controller create and delete N in turn; the ratio printed is their median (0: 3 up to N=200, else 1)")
	flag.BoolVar(&c.fakeNeutron, "fake-neutron", false, "an in-memory Neutron in place of neutron-server (the API server stays real): for N of 100,000")
	flag.BoolVar(&c.keystone, "keystone", false, "neutron-server behind a real Keystone (tokens live three minutes here), the controller authenticating with --os-cloud: prints the tokens Keystone issued during the creates")
	flag.Parse()
	if c.keystone && c.fakeNeutron {
		fmt.Fprintln(os.Stderr, "bench: -keystone needs neutron-server, not -fake-neutron")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, c); err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(1)
	}
}

// row is one line of the table.
type row struct{ figure, value, note string }

func run(ctx context.Context, c config) error {
	start := time.Now()
	stack, err := framework.Start(ctx, framework.Options{Neutron: !c.fakeNeutron, Keystone: c.keystone, ConversionWebhook: true})
	if err != nil {
		return err
	}
	defer stack.Stop()
	if c.fakeNeutron {
		fake, err := startFakeNeutron()
		if err != nil {
			return err
		}
		c.neutronEndpoint = fake.URL
	} else {
		c.neutronEndpoint = stack.Neutron.Endpoint
	}
	binary := filepath.Join(stack.Dir, "network-controller")
	build := exec.CommandContext(ctx, "go", "build", "-o", binary, ".")
	build.Dir = stack.RepoRoot
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("building the controller: %v\n%s", err, out)
	}
	admin := stack.ControlPlane.AdminConfig
	nc := clientset.NewForConfigOrDie(admin)
	kube := kubernetes.NewForConfigOrDie(admin)
	for _, ns := range []string{"bench", "bench-raw"} {
		if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "bench: stack up in %s\n", time.Since(start).Round(time.Millisecond))
	var rows []row
	add := func(figure, value, note string) {
		rows = append(rows, row{figure, value, note})
		fmt.Fprintf(os.Stderr, "bench: %s = %s\n", figure, value)
	}

	apiRate, err := rawStatusWrites(ctx, nc, c.workers, min(c.n, 200), 4*min(c.n, 200))
	if err != nil {
		return err
	}
	add("API server: Network status applies/s", fmt.Sprintf("%.0f", apiRate), fmt.Sprintf("%d in parallel", c.workers))

	ctrl, err := startController(ctx, stack, binary, c)
	if err != nil {
		return err
	}
	defer func() { _ = ctrl.proc.Stop(10 * time.Second) }()
	heap0, err := ctrl.heapAfterGC(ctx)
	if err != nil {
		return err
	}
	// The physical limits, with the controller's parallelism, measured in
	// turn with the controller on the same Neutron: the raw loop makes as
	// many pairs as the controller will and deletes them, then the
	// controller makes and deletes N. Neutron's own rate drifts from
	// minute to minute on a shared machine, so at small N a ratio of one
	// pair of runs moves by several points; earlier rounds are paired
	// runs of their own, and the ratio printed is the median of all.
	// The rate drifts one way over a long run (Neutron's databases grow),
	// so each controller run is compared with the plain loops on both
	// sides of it (bracketed): the one before it and the next round's, or,
	// for the last, one more plain loop at the end.
	var plainRuns, ctrlRuns []rates
	// Each timed phase, the plain loop's and the controller's alike,
	// begins once Neutron has settled after the one before (quietNeutron).
	var waits settled
	if !c.fakeNeutron {
		for r := 1; r < roundsOf(c); r++ {
			plain, measured, err := pairedRound(ctx, stack.Neutron.Client, nc, ctrl, c, &waits)
			if err != nil {
				return fmt.Errorf("round %d: %w", r, err)
			}
			plainRuns, ctrlRuns = append(plainRuns, plain), append(ctrlRuns, measured)
		}
	}
	// The last round's plain loop, whose pairs are gone again before the
	// controller's creates: Neutron slows as it fills, so both must see
	// the same state.
	neutronRate, neutronDeleteRate := math.Inf(1), math.Inf(1)
	rawN := c.plainN()
	var plainCPU plainCPU   // the plain loop's CPU per pair made and deleted
	var bulkRates []bulkRun // the bulk loop's, by batch
	if c.fakeNeutron {
		add("Neutron", "in memory (-fake-neutron)", "not a limit: the API server and the controller are what is measured")
	} else {
		if neutronRate, neutronDeleteRate, plainCPU, err = rawNeutron(ctx, stack.Neutron.Client, c.workers, rawN, &waits); err != nil {
			return err
		}
		plainRuns = append(plainRuns, rates{neutronRate, neutronDeleteRate})
		add("Neutron: network+subnet creates/s (plain gophercloud loop)", fmt.Sprintf("%.2f", neutronRate),
			fmt.Sprintf("%d pairs, %d in parallel, 2 writes per pair with the controller's names and descriptions", rawN, c.workers))
		add("Neutron: network deletes/s (plain loop)", fmt.Sprintf("%.2f", neutronDeleteRate),
			fmt.Sprintf("the same %d pairs, %d in parallel, one DELETE of the network per pair: Neutron deletes its subnet with it", rawN, c.workers))
		for _, batch := range bulkBatches(c.workers, rawN) {
			parallel := max(1, c.workers/batch)
			rate, err := bulkLoop(ctx, stack.Neutron.Client, parallel, rawN, batch, &waits)
			if err != nil {
				return err
			}
			bulkRates = append(bulkRates, bulkRun{batch, rate})
			add(fmt.Sprintf("Neutron: network+subnet creates/s (bulk loop, %d pairs per POST)", batch), fmt.Sprintf("%.2f (%.0f%% of the plain loop)", rate, 100*rate/neutronRate),
				fmt.Sprintf("%d pairs; one POST of %d networks, then one of their subnets, %d such at a time: at most %d pairs in flight (the controller's workers: %d)", rawN, batch, parallel, batch*parallel, c.workers))
		}
		if err := waits.wait(ctx); err != nil {
			return err
		}
		plainLatency, ifMatchLatency, err := ifMatchMixed(ctx, stack.Neutron.Client, c.workers, rawN, &waits)
		if err != nil {
			return err
		}
		add("Neutron: DELETE latency, plain / If-Match onto a listed revision, mixed in one phase", fmt.Sprintf("%s / %s (%.0f%%)",
			plainLatency.Round(time.Millisecond), ifMatchLatency.Round(time.Millisecond), 100*float64(plainLatency)/float64(ifMatchLatency)),
			fmt.Sprintf("%d more pairs, listed once, deleted %d in parallel, every other one as the controller deletes (neutron.Gophercloud.DeleteNetwork); in %% the If-Match DELETEs' rate over the plain ones'", rawN, c.workers))
	}

	// 1. Throughput: N Networks at once, Ready observed by a watch. The
	// CPU counted from here is the creates' alone: Neutron settles first
	// (createAndWait's own wait then ends after a quiet second).
	if err := waits.wait(ctx); err != nil {
		return err
	}
	m0, a0, cpu0, k0 := ctrl.scrape(ctx), apiserverWrites(ctx, admin), sampleCPU(), keystoneTokens(stack)
	readyAt, createdAt, elapsed, err := createAndWait(ctx, nc, c.n, c.rich, &waits)
	if err != nil {
		return err
	}
	cpu1 := sampleCPU()
	m1, a1, k1 := ctrl.scrape(ctx), apiserverWrites(ctx, admin), keystoneTokens(stack)
	if c.keystone {
		tokens := func(m metricsText, reason string) float64 {
			return m.value("network_controller_keystone_tokens_total", `reason="`+reason+`"`)
		}
		add("Keystone tokens during the creates: the controller's (connect / reauth)",
			fmt.Sprintf("%.0f (%.0f / %.0f)", tokens(m1, "connect")+tokens(m1, "reauth")-tokens(m0, "connect")-tokens(m0, "reauth"),
				tokens(m1, "connect")-tokens(m0, "connect"), tokens(m1, "reauth")-tokens(m0, "reauth")),
			fmt.Sprintf("network_controller_keystone_tokens_total, over the %s of the creates; tokens live %s here", elapsed.Round(time.Second), framework.TokenLifetime))
		add("Keystone tokens during the creates: all", strconv.Itoa(k1-k0), "201s to POST /v3/auth/tokens in Keystone's log: the controller's, neutron-server's own (keystonemiddleware's service token), the bench's plain loop's")
	}
	rate := float64(c.n) / elapsed.Seconds()
	add("Throughput: Networks Ready/s", fmt.Sprintf("%.2f", rate), fmt.Sprintf("%d Networks in %s, --workers=%d", c.n, elapsed.Round(time.Millisecond), c.workers))
	for _, b := range bulkRates {
		add(fmt.Sprintf("Throughput / bulk loop of %d pairs per POST", b.batch), fmt.Sprintf("%.0f%%", 100*rate/b.rate),
			"the controller's creates/s over the bulk loop's in the same sitting (one run each, not bracketed)")
	}
	var lat []time.Duration
	for name, t := range readyAt {
		lat = append(lat, t.Sub(createdAt[name]))
	}
	slices.Sort(lat)
	if !c.fakeNeutron {
		add("CPU-seconds per pair made, plain loop: Neutron side / the rest", plainCPU.create,
			"utime+stime from /proc: neutron-server, MariaDB, OVN's databases and northd / kube-apiserver, etcd, the controller (idle) and the benchmark's client")
		add("CPU-seconds per pair made, plain loop, Neutron side: neutron-server / MariaDB / OVN databases / northd / Keystone", plainCPU.createParts,
			"the Neutron side above by process, and Keystone's (not in it), which validates the tokens")
		add("CPU-seconds per Network, controller's creates: Neutron side / Kubernetes side", cpuRow(cpu0, cpu1, c.n),
			fmt.Sprintf("the second side is kube-apiserver, etcd, the controller and the benchmark's watch, out of %d cores", runtime.NumCPU()))
		add("CPU-seconds per Network, controller's creates, Kubernetes side: API server and etcd / controller / benchmark", kubernetesRow(cpu0, cpu1, c.n),
			"the same CPU as the row above, by process: what serving the Network's writes, its Event and the watches costs, against the controller's own work")
		add("CPU-seconds per Network, controller's creates, Neutron side: neutron-server / MariaDB / OVN databases / northd / Keystone", neutronRow(cpu0, cpu1, c.n), "")
	}
	add("Create→Ready latency p50 / p90 / p99", fmt.Sprintf("%s / %s / %s", pct(lat, 50), pct(lat, 90), pct(lat, 99)), "from the create call to the watch event")

	// 2. Against the physical limit.
	writesPerNet := (a1.networks - a0.networks) / float64(c.n)
	apiNetRate := apiRate / max(writesPerNet, 1)
	// The controller's own client-side limiter is a limit too: each of its
	// clientsets waits for tokens of --kube-api-qps, the samplecrd one for
	// the Network writes (Events go through the core one, with a limiter of
	// its own).
	requestsPerNet := writesPerNet
	clientNetRate := c.kubeAPIQPS / max(requestsPerNet, 1)
	limit, which := neutronRate, "Neutron"
	if apiNetRate < limit {
		limit, which = apiNetRate, "API server"
	}
	if clientNetRate < limit {
		limit, which = clientNetRate, "the controller's --kube-api-qps"
	}
	add("Throughput / physical limit", fmt.Sprintf("%.0f%%", 100*rate/limit), fmt.Sprintf("limit %.2f/s set by %s (API server: %.0f applies/s ÷ %.1f writes per Network; --kube-api-qps=%g ÷ %.2f Network writes per Network = %.2f/s)",
		limit, which, apiRate, writesPerNet, c.kubeAPIQPS, requestsPerNet, clientNetRate))
	waited := m1.value("rest_client_rate_limiter_duration_seconds_sum") - m0.value("rest_client_rate_limiter_duration_seconds_sum")
	add("Client-side limiter: time requests waited for --kube-api-qps", fmt.Sprintf("%.1f s", waited),
		fmt.Sprintf("%.0f%% of the %d workers' time; rest_client_rate_limiter_duration_seconds", 100*waited/(float64(c.workers)*elapsed.Seconds()), c.workers))

	// Where the workers' time went: what they waited for Neutron, and for
	// the API server's writes (Events included, which the broadcaster
	// sends beside the workers), over what 8 workers had.
	slots := float64(c.workers) * elapsed.Seconds()
	neutronWait := m1.value("network_controller_neutron_request_duration_seconds_sum") - m0.value("network_controller_neutron_request_duration_seconds_sum")
	apiWait := m1.kubeWriteSeconds() - m0.kubeWriteSeconds()
	add("Workers' time during the creates: waiting for Neutron / for API writes", fmt.Sprintf("%.0f%% / %.0f%%", 100*neutronWait/slots, 100*apiWait/slots),
		fmt.Sprintf("network_controller_neutron_request_duration_seconds and rest_client_request_duration_seconds (POST/PUT/PATCH/DELETE), over %d workers × the %s of the creates", c.workers, elapsed.Round(time.Millisecond)))

	// 3. Cost per Network to reach Ready.
	add("API server writes per Network (Network, its status)", fmt.Sprintf("%.2f", writesPerNet), "apiserver_request_total, resource networks")
	add("Event writes per Network", fmt.Sprintf("%.2f", (a1.events-a0.events)/float64(c.n)), "apiserver_request_total, resource events")
	add("Controller API writes per Network (all resources)", fmt.Sprintf("%.2f", (m1.kubeWrites()-m0.kubeWrites())/float64(c.n)), "rest_client_requests_total, POST/PUT/PATCH/DELETE")
	add("Neutron writes per Network", fmt.Sprintf("%.2f", (m1.neutron("POST", "PUT", "DELETE")-m0.neutron("POST", "PUT", "DELETE"))/float64(c.n)), "network_controller_neutron_requests_total")
	add("Neutron reads per Network", fmt.Sprintf("%.2f", (m1.neutron("GET")-m0.neutron("GET"))/float64(c.n)), "includes the periodic lists during the run")

	// 6. Memory, with every Network cached and in sync.
	heapN, err := ctrl.heapAfterGC(ctx)
	if err != nil {
		return err
	}
	add("Controller heap after GC: empty / with N Networks", fmt.Sprintf("%s / %s", mib(heap0), mib(heapN)), "")
	add("Heap per Network above the baseline", fmt.Sprintf("%.0f B", (heapN-heap0)/float64(c.n)), "informer cache + Neutron inventory")

	// 4. Steady state: one full resync period of an in-sync cluster. A
	// Network is in sync once its status also holds its subnets' address
	// counts, which the first Neutron list after its create reads and
	// writes once (a Recount): until then the period would count those
	// one-time writes as the steady state's.
	countsWait, err := countsReported(ctx, nc, c.n, 2*c.resync)
	if err != nil {
		return err
	}
	add("Wait for the address counts before the steady state", countsWait.Round(time.Second).String(),
		"until every Network's status.subnets holds usedIPs and freeIPs, which the first Neutron list after its create writes once (at most 2 list periods)")
	m2, a2 := ctrl.scrape(ctx), apiserverWrites(ctx, admin)
	t2 := time.Now()
	for {
		m := ctrl.scrape(ctx)
		if time.Since(t2) >= c.resync && m.syncs()-m2.syncs() >= float64(c.n) && m.neutron("GET")-m2.neutron("GET") >= 2 {
			break
		}
		if err := sleep(ctx, 500*time.Millisecond); err != nil {
			return err
		}
	}
	m3, a3 := ctrl.scrape(ctx), apiserverWrites(ctx, admin)
	add("Steady state: API server writes per resync period", fmt.Sprintf("%.0f", (a3.networks-a2.networks)+(a3.events-a2.events)), fmt.Sprintf("over %s with %.0f syncs", time.Since(t2).Round(time.Second), m3.syncs()-m2.syncs()))
	// A full last page is followed by an empty one.
	pages := c.n/1000 + 1
	periods := max(1, time.Since(t2).Seconds()/c.resync.Seconds())
	add("Steady state: controller CPU per resync period", fmt.Sprintf("%.2f s", (m3.value("process_cpu_seconds_total")-m2.value("process_cpu_seconds_total"))/periods),
		"process_cpu_seconds_total: the informer's resync, the Neutron list, N syncs")
	peak, err := ctrl.proc.PeakRSS()
	if err != nil {
		return err
	}
	add("Controller peak RSS (VmHWM), from start through the resync", mib(float64(peak)), "what a container memory limit must hold")
	add("Steady state: Neutron requests per resync period", fmt.Sprintf("%.0f", (m3.neutron("GET", "POST", "PUT", "DELETE")-m2.neutron("GET", "POST", "PUT", "DELETE"))/periods),
		fmt.Sprintf("%d page(s) of networks and of subnets per list, the routers of Networks of their own, and one of the address counts (network-ip-availabilities)", pages))

	// 5. Restart of an in-sync cluster.
	if err := ctrl.proc.Stop(10 * time.Second); err != nil {
		return err
	}
	a4 := apiserverWrites(ctx, admin)
	restarted := time.Now()
	ctrl, err = startController(ctx, stack, binary, c)
	if err != nil {
		return err
	}
	defer func() { _ = ctrl.proc.Stop(10 * time.Second) }()
	var m5 metricsText
	for {
		m5 = ctrl.scrape(ctx)
		if m5.value("network_controller_syncs_total", `result="success"`) >= float64(c.n) {
			break
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
	a5 := apiserverWrites(ctx, admin)
	add("Restart: start to all Networks confirmed in sync", time.Since(restarted).Round(time.Millisecond).String(), "process start, informer sync, one Neutron list, N syncs")
	add("Restart: API server writes / Neutron requests", fmt.Sprintf("%.0f / %.0f", (a5.networks-a4.networks)+(a5.events-a4.events), m5.neutron("GET", "POST", "PUT", "DELETE")), "")

	// 8. A v1 client's lists of every Network, through the webhook.
	if err := v1Lists(ctx, nc, stack.ControlPlane.AdminKubeconfig, c.n, add); err != nil {
		return err
	}

	// 7. Delete: all N at once, gone from the API server once the
	// controller has deleted their Neutron resources and its finalizer.
	if err := waits.wait(ctx); err != nil {
		return err
	}
	m6, cpu6 := ctrl.scrape(ctx), sampleCPU()
	deleteElapsed, err := deleteAndWait(ctx, nc, "bench", c.n, &waits)
	if err != nil {
		return err
	}
	m7, cpu7 := ctrl.scrape(ctx), sampleCPU()
	if !c.fakeNeutron {
		add("CPU-seconds per network deleted, plain loop: Neutron side / the rest", plainCPU.delete, "as for the pairs made")
		add("CPU-seconds per network deleted, plain loop, Neutron side: neutron-server / MariaDB / OVN databases / northd / Keystone", plainCPU.deleteParts, "")
		add("CPU-seconds per Network deleted by the controller: Neutron side / Kubernetes side", cpuRow(cpu6, cpu7, c.n),
			fmt.Sprintf("the Kubernetes side (the deletes' API writes, the finalizer's, the Events, the watches) shares the %d cores with Neutron's, which the plain loop has to itself", runtime.NumCPU()))
		add("CPU-seconds per Network deleted, Kubernetes side: API server and etcd / controller / benchmark", kubernetesRow(cpu6, cpu7, c.n), "")
		add("CPU-seconds per Network deleted by the controller, Neutron side: neutron-server / MariaDB / OVN databases / northd / Keystone", neutronRow(cpu6, cpu7, c.n), "")
	}
	plainDeletes := "-fake-neutron: no plain loop"
	if !c.fakeNeutron {
		plainDeletes = fmt.Sprintf("plain loop: %.2f network deletes/s", neutronDeleteRate)
	}
	add("Delete: Networks gone/s", fmt.Sprintf("%.2f", float64(c.n)/deleteElapsed.Seconds()),
		fmt.Sprintf("%d Networks deleted at once, all gone in %s; %s", c.n, deleteElapsed.Round(time.Millisecond), plainDeletes))
	if !c.fakeNeutron {
		ctrlRuns = append(ctrlRuns, rates{rate, float64(c.n) / deleteElapsed.Seconds()})
		// The closing plain loop: the last controller run's other side.
		closing, closingDelete, _, err := rawNeutron(ctx, stack.Neutron.Client, c.workers, rawN, &waits)
		if err != nil {
			return fmt.Errorf("the closing plain loop: %w", err)
		}
		plainRuns = append(plainRuns, rates{closing, closingDelete})
		creates, deletes := bracketed(plainRuns, ctrlRuns)
		how := fmt.Sprintf("%d round(s) of N; each the controller's rate over the mean of the plain loops just before and just after it (%s)", len(creates), plainList(plainRuns))
		add("Throughput / plain loop, median of the rounds", percents(creates), how+", creates/s; the last is the round above")
		add("Delete / plain loop, median of the rounds", percents(deletes), how+", deletes/s")
		add("Wait for Neutron to settle before each timed phase", waits.String(),
			fmt.Sprintf("until its side used under %.0f%% of a core over a second (at most %s): OVN works through a phase's changes after its last answer", 100*quietShare, quietDeadline))
	}
	deleteSlots := float64(c.workers) * deleteElapsed.Seconds()
	add("Workers' time during the delete: waiting for Neutron / for API writes",
		fmt.Sprintf("%.0f%% / %.0f%%", 100*(m7.value("network_controller_neutron_request_duration_seconds_sum")-m6.value("network_controller_neutron_request_duration_seconds_sum"))/deleteSlots,
			100*(m7.kubeWriteSeconds()-m6.kubeWriteSeconds())/deleteSlots),
		fmt.Sprintf("as for the creates, over %d workers × the %s of the delete", c.workers, deleteElapsed.Round(time.Millisecond)))
	add("Delete: Neutron reads per Network", fmt.Sprintf("%.2f", (m7.neutron("GET")-m6.neutron("GET"))/float64(c.n)),
		"network_controller_neutron_requests_total GET, with the lists during the delete: a network the latest list read is deleted onto its revision, unread")
	add("Delete: Neutron requests per Network", fmt.Sprintf("%.2f", (m7.neutron("DELETE")-m6.neutron("DELETE"))/float64(c.n)),
		fmt.Sprintf("network_controller_neutron_requests_total DELETE; all methods %.2f, with the periodic lists", (m7.neutron("GET", "POST", "PUT", "DELETE")-m6.neutron("GET", "POST", "PUT", "DELETE"))/float64(c.n)))

	// 9. What a v1 client's creates cost against a v2 client's, the
	// conversion webhook in the path of every v1 request.
	if c.applyN > 0 {
		if err := applyPhase(ctx, nc, stack.ControlPlane.AdminKubeconfig, stack.Dir, c.applyN, &waits, add); err != nil {
			return err
		}
	}

	fmt.Printf("| figure | value | note |\n| --- | --- | --- |\n")
	for _, r := range rows {
		fmt.Printf("| %s | %s | %s |\n", r.figure, r.value, r.note)
	}
	fmt.Printf("\nN=%d, --workers=%d, resync %s; %d cores, %s memory; %s\n", c.n, c.workers, c.resync, runtime.NumCPU(), memTotal(), runtime.Version())
	return nil
}

// plainN is how many pairs the plain loop makes: -raw-n, or N.
func (c config) plainN() int { return cmp.Or(c.rawN, c.n) }

// roundsOf is c.rounds, or its default: three paired rounds where a round
// takes about a minute, one where it takes many.
func roundsOf(c config) int {
	if c.rounds > 0 {
		return c.rounds
	}
	if c.n <= 200 {
		return 3
	}
	return 1
}

// rates is one run's creates/s and deletes/s: the plain loop's pairs, or
// the controller's Networks.
type rates struct{ create, delete float64 }

// pairedRound measures the plain loop and the controller once each, in
// turn, on the same Neutron: plainN pairs made and deleted by the plain loop,
// then N Networks made (Ready) and deleted (gone) through the controller.
// It returns both runs' rates.
func pairedRound(ctx context.Context, client *gophercloud.ServiceClient, nc clientset.Interface, proc *controllerProcess, c config, waits *settled) (plain, ctrl rates, err error) {
	plain.create, plain.delete, _, err = rawNeutron(ctx, client, c.workers, c.plainN(), waits)
	if err != nil {
		return rates{}, rates{}, err
	}
	_, _, created, err := createAndWait(ctx, nc, c.n, c.rich, waits)
	if err != nil {
		return rates{}, rates{}, err
	}
	// The deletes begin once every Network shows its address counts:
	// the list that follows a pause in the writes has read them all, and
	// each delete is the one request onto the revision it read, as in the
	// last round (a Network deleted within seconds of its create reads
	// first: three requests, a fallback the rounds would otherwise time).
	// Such lists are at most a tenth of a resync period apart; credentials
	// that get no counts (a member's, -keystone) wait that long, and read.
	if _, err := countsReported(ctx, nc, c.n, c.resync/10+10*time.Second); err != nil {
		return rates{}, rates{}, err
	}
	if err := waits.wait(ctx); err != nil {
		return rates{}, rates{}, err
	}
	m0 := proc.scrape(ctx)
	deleted, err := deleteAndWait(ctx, nc, "bench", c.n, waits)
	if err != nil {
		return rates{}, rates{}, err
	}
	m1 := proc.scrape(ctx)
	n := float64(c.n)
	ctrl = rates{n / created.Seconds(), n / deleted.Seconds()}
	fmt.Fprintf(os.Stderr, "bench: paired round: creates %.2f/s against the plain loop's %.2f/s, deletes %.2f/s against %.2f/s (%.2f DELETE and %.2f GET per Network)\n",
		ctrl.create, plain.create, ctrl.delete, plain.delete, (m1.neutron("DELETE")-m0.neutron("DELETE"))/n, (m1.neutron("GET")-m0.neutron("GET"))/n)
	return plain, ctrl, nil
}

// bracketed returns each controller run's creates and deletes over the
// mean of the plain loops on either side of it: plain[i] ran just before
// ctrl[i], and plain[i+1] just after. A drift of Neutron's rate over the
// run, which a ratio to the loop before alone charges to the controller
// (or credits it with), cancels to first order.
func bracketed(plain, ctrl []rates) (creates, deletes []float64) {
	for i, r := range ctrl {
		before, after := plain[i], plain[min(i+1, len(plain)-1)]
		creates = append(creates, r.create/((before.create+after.create)/2))
		deletes = append(deletes, r.delete/((before.delete+after.delete)/2))
	}
	return creates, deletes
}

// plainList prints the plain loops' creates/s in the order run.
func plainList(plain []rates) string {
	each := make([]string, len(plain))
	for i, r := range plain {
		each[i] = fmt.Sprintf("%.2f", r.create)
	}
	return "plain loops " + strings.Join(each, ", ")
}

// percents prints ratios as their median and each, in the order measured:
// "97% (91%, 97%, 99%)".
func percents(ratios []float64) string {
	each := make([]string, len(ratios))
	for i, r := range ratios {
		each[i] = fmt.Sprintf("%.0f%%", 100*r)
	}
	sorted := slices.Sorted(slices.Values(ratios))
	median := sorted[len(sorted)/2]
	if len(sorted)%2 == 0 {
		median = (sorted[len(sorted)/2-1] + median) / 2
	}
	return fmt.Sprintf("%.0f%% (%s)", 100*median, strings.Join(each, ", "))
}

// rawNeutron creates count network+subnet pairs with plain gophercloud
// calls, parallel at a time — one request each, named and described as the
// controller names and describes its own — and returns pairs per second.
// It deletes them again, one request per pair (the network's: Neutron
// deletes its subnet with it), so the controller starts from the same
// Neutron, and returns those deletes per second too, and the CPU per pair
// the creates cost on each side of the machine (cpuRow).
func rawNeutron(ctx context.Context, client *gophercloud.ServiceClient, parallel, count int, waits *settled) (createRate, deleteRate float64, cpu plainCPU, err error) {
	// Named as a cluster of its own would name them; deleted again below.
	mark, err := neutron.NewMark("bench-raw", uuid.NewUUID())
	if err != nil {
		return 0, 0, cpu, err
	}
	created := make([]string, count)
	if err := waits.wait(ctx); err != nil {
		return 0, 0, cpu, err
	}
	cpu0 := sampleCPU()
	elapsed, err := inParallel(count, parallel, func(i int) error {
		name := mark.ResourceName(neutron.Owner{Namespace: "bench-raw", Name: fmt.Sprintf("net-%05d", i), UID: uuid.NewUUID()})
		n, err := networks.Create(ctx, client, networks.CreateOpts{Name: name, Description: mark.Description()}).Extract()
		if err != nil {
			return err
		}
		created[i] = n.ID
		_, err = subnets.Create(ctx, client, subnets.CreateOpts{NetworkID: n.ID, Name: name, Description: mark.Description(),
			CIDR: fmt.Sprintf("172.%d.%d.0/24", 16+i/256, i%256), IPVersion: gophercloud.IPv4,
			GatewayIP: ptr.To(fmt.Sprintf("172.%d.%d.1", 16+i/256, i%256))}).Extract()
		return err
	})
	cpu2 := sampleCPU()
	cpu.create, cpu.createParts = cpuRow(cpu0, cpu2, count), neutronRow(cpu0, cpu2, count)
	if waitErr := waits.wait(ctx); waitErr != nil {
		return 0, 0, cpu, waitErr
	}
	cpu1 := sampleCPU()
	deleted, deleteErr := inParallel(count, parallel, func(i int) error {
		if created[i] == "" {
			return nil
		}
		return networks.Delete(ctx, client, created[i]).ExtractErr()
	})
	cpu3 := sampleCPU()
	cpu.delete, cpu.deleteParts = cpuRow(cpu1, cpu3, count), neutronRow(cpu1, cpu3, count)
	if err == nil && deleteErr != nil {
		err = fmt.Errorf("deleting the plain loop's pairs: %w", deleteErr)
	}
	return float64(count) / elapsed.Seconds(), float64(count) / deleted.Seconds(), cpu, err
}

// plainCPU is the plain loop's CPU per pair (cpuRow), making them and
// deleting them, and the Neutron side of each by process (neutronRow).
type plainCPU struct{ create, delete, createParts, deleteParts string }

// ifMatchMixed makes count pairs as rawNeutron does, reads their
// revisions with one list, as the controller's inventory does, and then
// deletes them in one phase, parallel at a time: every other network with
// a plain DELETE, the rest as the controller deletes, one DELETE onto the
// listed revision (If-Match) through the controller's own neutron client.
// Both kinds share the same moments, the same Neutron and the same load,
// so the ratio of their mean latencies is what the precondition itself
// costs a DELETE (at a fixed parallelism, a rate is parallel over the
// mean latency); phases measured one after the other differ by more.
func ifMatchMixed(ctx context.Context, client *gophercloud.ServiceClient, parallel, count int, waits *settled) (plain, ifMatch time.Duration, err error) {
	mark, err := neutron.NewMark("bench-ifmatch", uuid.NewUUID())
	if err != nil {
		return 0, 0, err
	}
	if _, err := inParallel(count, parallel, func(i int) error {
		name := mark.ResourceName(neutron.Owner{Namespace: "bench-ifmatch", Name: fmt.Sprintf("net-%05d", i), UID: uuid.NewUUID()})
		n, err := networks.Create(ctx, client, networks.CreateOpts{Name: name, Description: mark.Description()}).Extract()
		if err != nil {
			return err
		}
		_, err = subnets.Create(ctx, client, subnets.CreateOpts{NetworkID: n.ID, Name: name, Description: mark.Description(),
			CIDR: fmt.Sprintf("172.%d.%d.0/24", 16+i/256, i%256), IPVersion: gophercloud.IPv4,
			GatewayIP: ptr.To(fmt.Sprintf("172.%d.%d.1", 16+i/256, i%256))}).Extract()
		return err
	}); err != nil {
		return 0, 0, fmt.Errorf("making the mixed loop's pairs: %w", err)
	}
	pages, err := networks.List(client, networks.ListOpts{Description: mark.Description()}).AllPages(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("listing the mixed loop's networks: %w", err)
	}
	listed, err := networks.ExtractNetworks(pages)
	if err != nil {
		return 0, 0, err
	}
	if len(listed) != count {
		return 0, 0, fmt.Errorf("the mixed loop listed %d networks, made %d", len(listed), count)
	}
	if err := waits.wait(ctx); err != nil {
		return 0, 0, err
	}
	g := neutron.NewGophercloud(client, neutron.Place{})
	took := make([]time.Duration, count)
	if _, err := inParallel(count, parallel, func(i int) error {
		start := time.Now()
		defer func() { took[i] = time.Since(start) }()
		if i%2 == 0 {
			return networks.Delete(ctx, client, listed[i].ID).ExtractErr()
		}
		return g.DeleteNetwork(ctx, listed[i].ID, listed[i].RevisionNumber)
	}); err != nil {
		return 0, 0, fmt.Errorf("the mixed loop's deletes: %w", err)
	}
	var sums [2]time.Duration
	for i, d := range took {
		sums[i%2] += d
	}
	return sums[0] / time.Duration((count+1)/2), sums[1] / time.Duration(max(count/2, 1)), nil
}

func rawStatusWrites(ctx context.Context, nc clientset.Interface, parallel, objects, writes int) (float64, error) {
	client := nc.SamplecrdV2().Networks("bench-raw")
	for i := range objects {
		if _, err := client.Create(ctx, &samplecrdv2.Network{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("raw-%d", i)},
			Spec: samplecrdv2.NetworkSpec{Subnets: []samplecrdv2.SubnetSpec{{CIDR: "10.0.0.0/24", Gateway: "10.0.0.1"}}}}, metav1.CreateOptions{}); err != nil {
			return 0, err
		}
	}
	elapsed, err := inParallel(writes, parallel, func(i int) error {
		// A new observedGeneration each time: every apply is a real write.
		ac := applyv2.Network(fmt.Sprintf("raw-%d", i%objects), "bench-raw").WithStatus(applyv2.NetworkStatus().WithObservedGeneration(int64(i + 1)))
		_, err := client.ApplyStatus(ctx, ac, metav1.ApplyOptions{FieldManager: "bench", Force: true})
		return err
	})
	return float64(writes) / elapsed.Seconds(), err
}

// countsReported waits until each of the n Networks of namespace bench
// reports its subnets' address counts, or until limit has passed, and
// returns how long it waited.
func countsReported(ctx context.Context, nc clientset.Interface, n int, limit time.Duration) (time.Duration, error) {
	start := time.Now()
	for time.Since(start) < limit {
		list, err := nc.SamplecrdV2().Networks("bench").List(ctx, metav1.ListOptions{})
		if err != nil {
			return 0, err
		}
		counted := 0
		for _, net := range list.Items {
			if len(net.Status.Subnets) > 0 && !slices.ContainsFunc(net.Status.Subnets, func(s samplecrdv2.SubnetStatus) bool { return s.UsedIPs == nil }) {
				counted++
			}
		}
		if counted >= n {
			break
		}
		if err := sleep(ctx, 2*time.Second); err != nil {
			return 0, err
		}
	}
	return time.Since(start), nil
}

type controllerProcess struct {
	proc       *framework.Process
	metricsURL string
}

func startController(ctx context.Context, stack *framework.Stack, binary string, c config) (*controllerProcess, error) {
	ports, err := framework.FreePorts(2)
	if err != nil {
		return nil, err
	}
	// The client-side limit on Neutron requests (--neutron-qps, 20/s)
	// protects a real neutron-server; in front of the in-memory one it
	// would be all the run measures (10 Networks/s).
	var neutronFlags []string
	if c.fakeNeutron {
		neutronFlags = []string{"--neutron-qps=100000", "--neutron-burst=100000"}
	}
	// Behind Keystone, the controller authenticates as the stack's
	// controller user; otherwise it reaches the noauth endpoint.
	cloud := []string{"--neutron-endpoint=" + c.neutronEndpoint}
	env := os.Environ()
	if c.keystone {
		cloud = []string{"--os-cloud=" + framework.PasswordCloud}
		env = append(env, "OS_CLIENT_CONFIG_FILE="+stack.Keystone.CloudsYAML)
	}
	neutronFlags = append(neutronFlags, cloud...)
	p := &framework.Process{
		Name: "network-controller",
		Path: binary,
		Env:  env,
		Args: append([]string{
			"--kubeconfig=" + stack.ControlPlane.AdminKubeconfig,
			"--namespace=bench",
			"--cluster-name=bench",
			"--leader-elect=false",
			"--profiling",
			fmt.Sprintf("--workers=%d", c.workers),
			fmt.Sprintf("--kube-api-qps=%g", c.kubeAPIQPS),
			fmt.Sprintf("--kube-api-burst=%d", c.kubeAPIBurst),
			"--resync-period=" + c.resync.String(),
			"--neutron-resync-period=" + c.resync.String(),
			fmt.Sprintf("--metrics-bind-address=127.0.0.1:%d", ports[0]),
			fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", ports[1]),
		}, neutronFlags...),
		Dir:     stack.Dir,
		LogPath: filepath.Join(stack.Dir, fmt.Sprintf("controller-%d.log", time.Now().UnixNano())),
	}
	if err := p.Start(); err != nil {
		return nil, err
	}
	readyz := fmt.Sprintf("http://127.0.0.1:%d/readyz", ports[1])
	for {
		if code, _ := get(ctx, readyz); code == http.StatusOK {
			break
		}
		if p.Exited() {
			return nil, fmt.Errorf("the controller exited:\n%s", p.Tail(4000))
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return nil, err
		}
	}
	return &controllerProcess{proc: p, metricsURL: fmt.Sprintf("http://127.0.0.1:%d", ports[0])}, nil
}

// metricsText is one scrape of a /metrics page.
type metricsText string

func (c *controllerProcess) scrape(ctx context.Context) metricsText {
	_, body := get(ctx, c.metricsURL+"/metrics")
	return metricsText(body)
}

// heapAfterGC forces a collection in the controller (pprof's gc=1) and
// reads the live heap.
func (c *controllerProcess) heapAfterGC(ctx context.Context) (float64, error) {
	if code, body := get(ctx, c.metricsURL+"/debug/pprof/heap?gc=1"); code != http.StatusOK {
		return 0, fmt.Errorf("pprof: %d %s", code, body)
	}
	return c.scrape(ctx).value("go_memstats_heap_alloc_bytes"), nil
}

// value sums the series of the metric whose labels contain every filter.
func (m metricsText) value(name string, filters ...string) float64 {
	total := 0.0
	for _, line := range strings.Split(string(m), "\n") {
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		ok := true
		for _, f := range filters {
			ok = ok && strings.Contains(line, f)
		}
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndex(line, " ")+1:], 64)
		if err == nil {
			total += v
		}
	}
	return total
}

func (m metricsText) kubeWrites() float64 {
	total := 0.0
	for _, verb := range []string{"POST", "PUT", "PATCH", "DELETE"} {
		total += m.value("rest_client_requests_total", `method="`+verb+`"`)
	}
	return total
}

// kubeWriteSeconds is the time the controller's API server writes took,
// summed.
func (m metricsText) kubeWriteSeconds() float64 {
	total := 0.0
	for _, verb := range []string{"POST", "PUT", "PATCH", "DELETE"} {
		total += m.value("rest_client_request_duration_seconds_sum", `verb="`+verb+`"`)
	}
	return total
}

func (m metricsText) neutron(methods ...string) float64 {
	total := 0.0
	for _, method := range methods {
		total += m.value("network_controller_neutron_requests_total", `method="`+method+`"`)
	}
	return total
}

func (m metricsText) syncs() float64 { return m.value("network_controller_syncs_total") }

// writes are kube-apiserver's own counts of write requests.
type writes struct{ networks, events float64 }

func apiserverWrites(ctx context.Context, admin *rest.Config) writes {
	client, err := rest.HTTPClientFor(admin)
	if err != nil {
		return writes{}
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, admin.Host+"/metrics", nil)
	resp, err := client.Do(req)
	if err != nil {
		return writes{}
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	m := metricsText(body)
	var w writes
	for _, verb := range []string{"APPLY", "PATCH", "UPDATE", "POST", "DELETE"} {
		// The Networks' creates (POST) are the bench's, not the controller's,
		// which never creates one.
		if verb != "POST" {
			w.networks += m.value("apiserver_request_total", `resource="networks"`, `verb="`+verb+`"`)
		}
		w.events += m.value("apiserver_request_total", `resource="events"`, `verb="`+verb+`"`)
	}
	return w
}

func get(ctx context.Context, url string) (int, string) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func pct(sorted []time.Duration, p int) string {
	if len(sorted) == 0 {
		return "-"
	}
	i := (len(sorted)*p + 99) / 100
	return sorted[max(0, min(i-1, len(sorted)-1))].Round(time.Millisecond).String()
}

func mib(b float64) string { return fmt.Sprintf("%.1f MiB", b/(1<<20)) }

func memTotal() string {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return "?"
	}
	fields := strings.Fields(strings.SplitN(string(data), "\n", 2)[0])
	if len(fields) < 2 {
		return "?"
	}
	kb, _ := strconv.ParseFloat(fields[1], 64)
	return fmt.Sprintf("%.0f GiB", kb/(1<<20))
}

// keystoneTokens is how many tokens Keystone has issued in the stack's
// life (201s to POST /v3/auth/tokens in its log), 0 without Keystone.
func keystoneTokens(stack *framework.Stack) int {
	if stack.Keystone == nil || stack.Keystone.Server == nil {
		return 0
	}
	log, err := os.ReadFile(stack.Keystone.Server.LogPath)
	if err != nil {
		return 0
	}
	n := 0
	for line := range strings.Lines(string(log)) {
		if strings.Contains(line, "POST /v3/auth/tokens") && strings.Contains(line, " 201 ") {
			n++
		}
	}
	return n
}
