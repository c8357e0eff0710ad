package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/samplecrd/network-controller/pkg/controller/conversion"
	clientset "github.com/samplecrd/network-controller/pkg/generated/clientset/versioned"
)

// v1Lists is what a v1 client's list of every Network costs, each one
// converted by the conversion webhook, beside the same list in v2, the
// stored version, which converts nothing: kubectl's (pages of 500, its
// default --chunk-size), and one page of all n (as an informer's first
// list from the watch cache, or --chunk-size=0), in which the API server
// sends every object to the webhook in one review.
func v1Lists(ctx context.Context, nc clientset.Interface, kubeconfig string, n int, add func(figure, value, note string)) error {
	start := time.Now()
	out, err := exec.CommandContext(ctx, "kubectl", "--kubeconfig", kubeconfig, "get", "networks.v1.samplecrd.k8s.io", "-A", "-o", "name").CombinedOutput()
	if err != nil {
		return fmt.Errorf("kubectl get networks.v1.samplecrd.k8s.io -A: %w\n%.2000s", err, out)
	}
	got := strings.Count(string(out), "\n")
	if got < n {
		return fmt.Errorf("kubectl get networks.v1.samplecrd.k8s.io -A listed %d Networks, want at least %d", got, n)
	}
	add("v1 list: kubectl get networks.v1.samplecrd.k8s.io -A", time.Since(start).Round(time.Millisecond).String(),
		fmt.Sprintf("%d Networks in pages of 500 (kubectl's --chunk-size), each page one review of the conversion webhook", got))

	lists := []struct {
		name, note string
		list       func() (int, error)
	}{
		{"v2 list, one page", "the stored version: no conversion", func() (int, error) {
			l, err := nc.SamplecrdV2().Networks("").List(ctx, metav1.ListOptions{})
			if err != nil {
				return 0, err
			}
			perNetwork, err := jsonBytesPerItem(l.Items)
			if err != nil {
				return 0, err
			}
			add("v2 Network as the webhook gets it", fmt.Sprintf("%d B", perNetwork),
				fmt.Sprintf("JSON, managedFields included: one review (conversion.MaxRequestBytes, %d MiB) holds about %d of them, the most a one-page v1 list converts", conversion.MaxRequestBytes>>20, conversion.MaxRequestBytes/max(perNetwork, 1)))
			return len(l.Items), nil
		}},
		{"v1 list, one page", "one review of every object", func() (int, error) {
			l, err := nc.SamplecrdV1().Networks("").List(ctx, metav1.ListOptions{})
			if err != nil {
				return 0, err
			}
			return len(l.Items), nil
		}},
	}
	for _, l := range lists {
		start := time.Now()
		count, err := l.list()
		if err != nil {
			add(l.name, "refused", strings.ReplaceAll(err.Error(), "|", "/"))
			continue
		}
		add(l.name, time.Since(start).Round(time.Millisecond).String(), fmt.Sprintf("%d Networks, %s", count, l.note))
	}
	return nil
}

// jsonBytesPerItem is the mean size of items in JSON: what each adds to
// the ConversionReview of a list that the API server sends the webhook.
func jsonBytesPerItem[T any](items []T) (int, error) {
	if len(items) == 0 {
		return 0, nil
	}
	all, err := json.Marshal(items)
	if err != nil {
		return 0, err
	}
	return len(all) / len(items), nil
}
