package main

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/utils/ptr"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	clientset "github.com/samplecrd/network-controller/pkg/generated/clientset/versioned"
)

// inParallel calls do(i) for every i in [0, count), workers at a time, and
// returns how long that took and the first error.
func inParallel(count, workers int, do func(i int) error) (time.Duration, error) {
	next := make(chan int)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	start := time.Now()
	for range workers {
		wg.Go(func() {
			for i := range next {
				if err := do(i); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
				}
			}
		})
	}
	for i := range count {
		next <- i
	}
	close(next)
	wg.Wait()
	return time.Since(start), firstErr
}

// benchSpec is the spec of the i-th Network, one subnet as a v1 Network
// has: the seed's cidr and gateway, and with rich every subnet option as
// well. The bench writes and watches v2, the storage version, so that no
// conversion is on the path it times.
func benchSpec(i int, rich bool) samplecrdv2.NetworkSpec {
	prefix := fmt.Sprintf("10.%d.%d.", i/256, i%256)
	subnet := samplecrdv2.SubnetSpec{CIDR: prefix + "0/24", Gateway: prefix + "1"}
	if i >= 1<<16 {
		// 10/8 holds 65,536 /24s; the next 65,536 are /26s of 100.64/10.
		j := i - 1<<16
		base := fmt.Sprintf("100.%d.%d.", 64+j>>10, (j>>2)&255)
		subnet = samplecrdv2.SubnetSpec{CIDR: fmt.Sprintf("%s%d/26", base, (j&3)*64), Gateway: fmt.Sprintf("%s%d", base, (j&3)*64+1)}
		return samplecrdv2.NetworkSpec{Subnets: []samplecrdv2.SubnetSpec{subnet}}
	}
	spec := samplecrdv2.NetworkSpec{}
	if rich {
		subnet.DNSNameservers = []string{prefix + "53", prefix + "54"}
		subnet.HostRoutes = []samplecrdv2.HostRoute{{Destination: "172.16.0.0/16", NextHop: prefix + "254"}, {Destination: "172.17.0.0/16", NextHop: prefix + "254"}}
		subnet.AllocationPools = []samplecrdv2.AllocationPool{{Start: prefix + "100", End: prefix + "199"}}
		spec.MTU = ptr.To[int32](1400)
	}
	spec.Subnets = []samplecrdv2.SubnetSpec{subnet}
	return spec
}

// createAndWait creates n Networks at once in namespace bench and returns
// when the watch has seen each Ready, with the times of both.
func createAndWait(ctx context.Context, nc clientset.Interface, n int, rich bool, waits *settled) (readyAt, createdAt map[string]time.Time, elapsed time.Duration, err error) {
	const namespace = "bench"
	client := nc.SamplecrdV2().Networks(namespace)
	if err := waits.wait(ctx); err != nil {
		return nil, nil, 0, err
	}
	w, err := watchNetworks(ctx, nc, namespace)
	if err != nil {
		return nil, nil, 0, err
	}
	defer w.Stop()
	createdAt = map[string]time.Time{}
	var mu sync.Mutex
	start := time.Now()
	go func() {
		_, _ = inParallel(n, 16, func(i int) error {
			name := fmt.Sprintf("net-%05d", i)
			t := time.Now()
			_, err := client.Create(ctx, &samplecrdv2.Network{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: benchSpec(i, rich)}, metav1.CreateOptions{})
			if err != nil {
				fmt.Fprintf(os.Stderr, "bench: creating %s: %v\n", name, err)
			}
			mu.Lock()
			createdAt[name] = t
			mu.Unlock()
			return err
		})
	}()
	readyAt, err = untilReady(ctx, w, n)
	if err != nil {
		return nil, nil, 0, err
	}
	elapsed = time.Since(start)
	mu.Lock()
	defer mu.Unlock()
	return readyAt, createdAt, elapsed, nil
}

// untilReady returns once the watch w has seen n Networks Ready, with when
// it saw each so.
func untilReady(ctx context.Context, w watch.Interface, n int) (map[string]time.Time, error) {
	readyAt := map[string]time.Time{}
	deadline := time.After(time.Hour)
	for len(readyAt) < n {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return nil, fmt.Errorf("the watch of Networks ended for good (resourceVersion too old?)")
			}
			now := time.Now()
			if ev.Type != watch.Added && ev.Type != watch.Modified {
				continue
			}
			net := ev.Object.(*samplecrdv2.Network)
			if c := meta.FindStatusCondition(net.Status.Conditions, samplecrdv1.ConditionReady); c != nil && c.Status == metav1.ConditionTrue {
				if _, seen := readyAt[net.Name]; !seen {
					readyAt[net.Name] = now
				}
			}
		case <-deadline:
			return nil, fmt.Errorf("only %d of %d Networks Ready after an hour", len(readyAt), n)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return readyAt, nil
}

// watchNetworks watches the Networks of namespace from now on.
// kube-apiserver ends a watch after --min-request-timeout (30 to 60
// minutes), less than a run of 10,000 on the real stack takes: a
// RetryWatcher watches again from the last resourceVersion it saw.
func watchNetworks(ctx context.Context, nc clientset.Interface, namespace string) (watch.Interface, error) {
	client := nc.SamplecrdV2().Networks(namespace)
	list, err := client.List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	return watchtools.NewRetryWatcherWithContext(ctx, list.ResourceVersion, &cache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) { return client.Watch(ctx, o) },
	})
}

// deleteAndWait deletes the n Networks of namespace at once (16
// deletes in flight, as createAndWait creates them) and returns how long
// until the watch has seen each gone: the controller deleted its Neutron
// resources and released its finalizer.
func deleteAndWait(ctx context.Context, nc clientset.Interface, namespace string, n int, waits *settled) (time.Duration, error) {
	client := nc.SamplecrdV2().Networks(namespace)
	if err := waits.wait(ctx); err != nil {
		return 0, err
	}
	w, err := watchNetworks(ctx, nc, namespace)
	if err != nil {
		return 0, err
	}
	defer w.Stop()
	start := time.Now()
	go func() {
		_, _ = inParallel(n, 16, func(i int) error {
			name := fmt.Sprintf("net-%05d", i)
			err := client.Delete(ctx, name, metav1.DeleteOptions{})
			if err != nil {
				fmt.Fprintf(os.Stderr, "bench: deleting %s: %v\n", name, err)
			}
			return err
		})
	}()
	gone := map[string]bool{}
	deadline := time.After(time.Hour)
	for len(gone) < n {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return 0, fmt.Errorf("the watch of Networks ended for good (resourceVersion too old?)")
			}
			if ev.Type == watch.Deleted {
				gone[ev.Object.(*samplecrdv2.Network).Name] = true
			}
		case <-deadline:
			return 0, fmt.Errorf("only %d of %d Networks gone after an hour", len(gone), n)
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	return time.Since(start), nil
}
