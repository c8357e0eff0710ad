// Command injector measures the envoy-injector webhook under load, against
// a real kube-apiserver: Pods are created through the API, C at a time, in
// a namespace sent to the webhook and in one that is not, and it prints
// the creation latencies (p50/p99/max) of both, and the webhook's own time
// as the API server and the webhook each measured it. The SLO it is held
// to is the API server's: a mutating webhook call should stay well under
// 1 s (and must under its timeoutSeconds).
//
//	make bench-injector                 # N=500 CONCURRENCY=1,8,32
//	go run ./test/bench/injector -n 2000 -concurrency 64
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/common/model"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/component-base/metrics/testutil"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/samplecrd/network-controller/pkg/injector"
	"github.com/samplecrd/network-controller/test/framework"
)

const (
	webhookName = "envoy.injector.samplecrd.k8s.io"
	injectedNS  = "bench-injected"
	plainNS     = "bench-plain"
)

func main() {
	n := flag.Int("n", 500, "Pods created per namespace and concurrency")
	levels := flag.String("concurrency", "1,8,32", "comma-separated numbers of creations in flight at once")
	flag.Parse()
	var concurrency []int
	for _, s := range strings.Split(*levels, ",") {
		c, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || c < 1 {
			fmt.Fprintf(os.Stderr, "bench: bad -concurrency %q\n", *levels)
			os.Exit(2)
		}
		concurrency = append(concurrency, c)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	if err := run(ctx, *n, concurrency); err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(1)
	}
}

// bench is a running stack with the webhook registered.
type bench struct {
	kube    kubernetes.Interface
	scraper *http.Client
	metrics string // the webhook's /metrics URL
}

func run(ctx context.Context, n int, concurrency []int) error {
	stack, err := framework.Start(ctx, framework.Options{})
	if err != nil {
		return err
	}
	defer stack.Stop()
	b, err := setUp(ctx, stack)
	if err != nil {
		return err
	}
	fmt.Printf("envoy-injector admission latency, %d Pods per row, %d CPUs, %s, %s\n\n", n, runtime.NumCPU(), runtime.Version(), time.Now().Format("2006-01-02"))
	fmt.Println("| in flight | create p50 / p99 / max, with the webhook | without | webhook call, mean (API server's measure) | webhook's own decision, mean |")
	fmt.Println("| ---: | --- | --- | ---: | ---: |")
	for _, c := range concurrency {
		before, err := b.webhookSeconds(ctx)
		if err != nil {
			return err
		}
		with, err := b.createPods(ctx, injectedNS, n, c)
		if err != nil {
			return err
		}
		after, err := b.webhookSeconds(ctx)
		if err != nil {
			return err
		}
		without, err := b.createPods(ctx, plainNS, n, c)
		if err != nil {
			return err
		}
		fmt.Printf("| %d | %s | %s | %s | %s |\n", c, percentiles(with), percentiles(without),
			after.apiserver.minus(before.apiserver).mean(), after.own.minus(before.own).mean())
	}
	return nil
}

// setUp starts the webhook with the design documents' template and
// registers it for injectedNS, and warms both namespaces up.
func setUp(ctx context.Context, stack *framework.Stack) (*bench, error) {
	binary := filepath.Join(stack.Dir, "envoy-injector")
	build := exec.CommandContext(ctx, "go", "build", "-o", binary, "./cmd/envoy-injector")
	build.Dir = stack.RepoRoot
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("building envoy-injector: %v\n%s", err, out)
	}
	kube := kubernetes.NewForConfigOrDie(stack.ControlPlane.AdminConfig)
	for _, ns := range []string{injectedNS, plainNS} {
		if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			return nil, err
		}
		// What kube-controller-manager would have made; the ServiceAccount
		// admission plugin wants it.
		if _, err := kube.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
			return nil, err
		}
	}
	data, err := os.ReadFile(filepath.Join(stack.RepoRoot, "artifacts", "injector", "envoy-initializer.yaml"))
	if err != nil {
		return nil, err
	}
	cm := &corev1.ConfigMap{}
	if err := yaml.UnmarshalStrict(data, cm); err != nil {
		return nil, err
	}
	if _, err := kube.CoreV1().ConfigMaps(injectedNS).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	certs, err := framework.NewServingCertificate(stack.Dir, []net.IP{net.ParseIP("127.0.0.1")}, nil)
	if err != nil {
		return nil, err
	}
	ports, err := framework.FreePorts(1)
	if err != nil {
		return nil, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", ports[0])
	proc := &framework.Process{Name: "envoy-injector", Path: binary, Dir: stack.Dir, LogPath: filepath.Join(stack.Dir, "envoy-injector.log"),
		Args: []string{"--kubeconfig=" + stack.ControlPlane.AdminKubeconfig, "--bind-address=" + addr,
			"--tls-cert-file=" + certs.CertFile, "--tls-private-key-file=" + certs.KeyFile, "--configmap-namespace=" + injectedNS}}
	if err := proc.Start(); err != nil {
		return nil, err
	}
	go func() { <-ctx.Done(); _ = proc.Stop(5 * time.Second) }()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(certs.CAPEM)
	b := &bench{kube: kube, metrics: "https://" + addr + "/metrics",
		scraper: &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}}
	if err := b.waitReady(ctx, "https://"+addr+"/readyz"); err != nil {
		return nil, err
	}
	_, err = kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "envoy-injector"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name:                    webhookName,
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://" + addr + "/mutate"), CABundle: certs.CAPEM},
			Rules:                   []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create}, Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}}}},
			AdmissionReviewVersions: []string{"v1"},
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
			ReinvocationPolicy:      ptr.To(admissionregistrationv1.IfNeededReinvocationPolicy),
			NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": injectedNS}},
			TimeoutSeconds:          ptr.To[int32](5),
		}},
	}, metav1.CreateOptions{})
	if err != nil {
		return nil, err
	}
	// Until the API server calls the webhook; then a warm-up of both paths.
	var lastErr error
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		p, err := kube.CoreV1().Pods(injectedNS).Create(ctx, benchPod(), metav1.CreateOptions{})
		lastErr = err
		return err == nil && len(p.Spec.Containers) == 2, nil
	}); err != nil {
		return nil, fmt.Errorf("the API server does not call the webhook (last error %v): %w", lastErr, err)
	}
	for _, ns := range []string{injectedNS, plainNS} {
		if _, err := b.createPods(ctx, ns, 50, 4); err != nil {
			return nil, err
		}
	}
	return b, nil
}

func (b *bench) waitReady(ctx context.Context, url string) error {
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := b.scraper.Do(req)
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		return fmt.Errorf("envoy-injector is not ready at %s: %w", url, err)
	}
	return nil
}

func benchPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "web-", Annotations: map[string]string{injector.RequestAnnotation: "true"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
	}
}

// createPods creates n Pods in ns, c at a time, and returns each
// creation's latency, sorted. The Pods are deleted again afterwards, so
// every row starts from the same store.
func (b *bench) createPods(ctx context.Context, ns string, n, c int) ([]time.Duration, error) {
	latencies := make([]time.Duration, n)
	next := make(chan int)
	errs := make(chan error, c)
	var wg sync.WaitGroup
	for range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				start := time.Now()
				p, err := b.kube.CoreV1().Pods(ns).Create(ctx, benchPod(), metav1.CreateOptions{})
				latencies[i] = time.Since(start)
				if err == nil && ns == injectedNS && len(p.Spec.Containers) != 2 {
					err = fmt.Errorf("Pod %s was not injected", p.Name)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	var err error
feed:
	for i := range n {
		select {
		case next <- i:
		case err = <-errs:
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err == nil && len(errs) > 0 {
		err = <-errs
	}
	if err != nil {
		return nil, err
	}
	if err := b.kube.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}, metav1.ListOptions{}); err != nil {
		return nil, err
	}
	sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
	return latencies, nil
}

// webhookTime is the webhook's time so far, as the API server measured
// its calls and as the webhook measured its decisions.
type webhookTime struct{ apiserver, own summary }

func (b *bench) webhookSeconds(ctx context.Context) (webhookTime, error) {
	apiserver, err := b.apiserverWebhookSeconds(ctx)
	if err != nil {
		return webhookTime{}, err
	}
	own, err := b.injectorSeconds(ctx)
	return webhookTime{apiserver, own}, err
}

// summary is a histogram's sum and count.
type summary struct{ sum, count float64 }

func (s summary) minus(o summary) summary { return summary{s.sum - o.sum, s.count - o.count} }

func (s summary) mean() string {
	if s.count == 0 {
		return "-"
	}
	return (time.Duration(s.sum / s.count * float64(time.Second))).Round(10 * time.Microsecond).String()
}

// apiserverWebhookSeconds is the API server's own measure of its calls to
// the webhook: apiserver_admission_webhook_admission_duration_seconds.
func (b *bench) apiserverWebhookSeconds(ctx context.Context) (summary, error) {
	body, err := b.kube.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return summary{}, err
	}
	return histogram(string(body), "apiserver_admission_webhook_admission_duration_seconds", map[string]string{"name": webhookName})
}

// injectorSeconds is the webhook's own measure of its decisions.
func (b *bench) injectorSeconds(ctx context.Context) (summary, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, b.metrics, nil)
	resp, err := b.scraper.Do(req)
	if err != nil {
		return summary{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return summary{}, err
	}
	return histogram(string(body), "envoy_injector_admission_duration_seconds", nil)
}

// histogram sums the _sum and _count samples of a histogram whose labels
// include labels.
func histogram(text, name string, labels map[string]string) (summary, error) {
	ms := testutil.NewMetrics()
	if err := testutil.ParseMetrics(text, &ms); err != nil {
		return summary{}, err
	}
	var s summary
	for suffix, into := range map[string]*float64{"_sum": &s.sum, "_count": &s.count} {
		for _, sample := range ms[name+suffix] {
			match := true
			for k, v := range labels {
				match = match && string(sample.Metric[model.LabelName(k)]) == v
			}
			if match {
				*into += float64(sample.Value)
			}
		}
	}
	return s, nil
}

func percentiles(sorted []time.Duration) string {
	at := func(p int) string {
		i := (len(sorted)*p + 99) / 100
		return sorted[max(0, min(i-1, len(sorted)-1))].Round(100 * time.Microsecond).String()
	}
	return at(50) + " / " + at(99) + " / " + sorted[len(sorted)-1].Round(100*time.Microsecond).String()
}
