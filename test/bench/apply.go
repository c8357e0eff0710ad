package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	clientset "github.com/samplecrd/network-controller/pkg/generated/clientset/versioned"
)

// appliedAndReady applies count Networks of apiVersion version ("v1" or
// "v2") to namespace with one `kubectl apply -f`, as a user would, and
// returns how long until a watch saw each Ready, and how long kubectl
// took to send them (it sends them one at a time: a read, then a
// create). Each is made of benchSpec's one subnet: a v1 Network's cidr
// and gateway. It deletes them again (untimed) before it returns.
func appliedAndReady(ctx context.Context, nc clientset.Interface, kubeconfig, dir, version, namespace string, count int, waits *settled) (ready, sent time.Duration, err error) {
	var docs strings.Builder
	for i := range count {
		subnet := benchSpec(i, false).Subnets[0]
		fmt.Fprintf(&docs, "---\napiVersion: samplecrd.k8s.io/%s\nkind: Network\nmetadata:\n  name: net-%05d\n  namespace: %s\nspec:\n", version, i, namespace)
		if version == "v1" {
			fmt.Fprintf(&docs, "  cidr: %s\n  gateway: %s\n", subnet.CIDR, subnet.Gateway)
		} else {
			fmt.Fprintf(&docs, "  subnets:\n  - cidr: %s\n    gateway: %s\n", subnet.CIDR, subnet.Gateway)
		}
	}
	file := filepath.Join(dir, "apply-"+version+".yaml")
	if err := os.WriteFile(file, []byte(docs.String()), 0o600); err != nil {
		return 0, 0, err
	}
	if err := waits.wait(ctx); err != nil {
		return 0, 0, err
	}
	w, err := watchNetworks(ctx, nc, namespace)
	if err != nil {
		return 0, 0, err
	}
	defer w.Stop()
	start := time.Now()
	if out, err := exec.CommandContext(ctx, "kubectl", "--kubeconfig", kubeconfig, "apply", "-f", file).CombinedOutput(); err != nil {
		return 0, 0, fmt.Errorf("kubectl apply of %d %s Networks: %w\n%.2000s", count, version, err, out)
	}
	sent = time.Since(start)
	if _, err := untilReady(ctx, w, count); err != nil {
		return 0, 0, err
	}
	ready = time.Since(start)
	if _, err := deleteAndWait(ctx, nc, namespace, count, waits); err != nil {
		return 0, 0, err
	}
	return ready, sent, nil
}

// applyPhase measures count v1 Networks applied at once against count v2
// Networks applied the same way in the same sitting, v2 first and last
// (bracketed, as the plain loops bracket the controller), and adds the
// rows.
func applyPhase(ctx context.Context, nc clientset.Interface, kubeconfig, dir string, count int, waits *settled, add func(figure, value, note string)) error {
	var v2Rates []float64
	var v1Rate float64
	var v1Sent, v2Sent time.Duration
	for _, version := range []string{"v2", "v1", "v2"} {
		// Namespace bench, emptied by the delete before: the only one the
		// bench's controller serves (--namespace).
		ready, sent, err := appliedAndReady(ctx, nc, kubeconfig, dir, version, "bench", count, waits)
		if err != nil {
			return err
		}
		rate := float64(count) / ready.Seconds()
		fmt.Fprintf(os.Stderr, "bench: %d %s Networks applied at once: Ready in %s (%.2f/s), kubectl done in %s\n", count, version, ready.Round(time.Millisecond), rate, sent.Round(time.Millisecond))
		if version == "v1" {
			v1Rate, v1Sent = rate, sent
		} else {
			v2Rates, v2Sent = append(v2Rates, rate), sent
		}
	}
	v2Rate := (v2Rates[0] + v2Rates[1]) / 2
	add(fmt.Sprintf("%d Networks in one kubectl apply: Ready/s, v1 / v2", count), fmt.Sprintf("%.2f / %.2f (%.0f%%)", v1Rate, v2Rate, 100*v1Rate/v2Rate),
		fmt.Sprintf("v2 applied before and after v1 (%.2f, %.2f); kubectl itself took %s (v1) and %s (v2) to send them, one at a time", v2Rates[0], v2Rates[1], v1Sent.Round(time.Millisecond), v2Sent.Round(time.Millisecond)))
	return nil
}
