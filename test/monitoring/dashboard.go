// Package monitoring checks artifacts/prometheus against the code: the
// dashboard parses and asks only for metrics the programs export. The
// alert rules have their own specification, rules_test.yaml, which
// `make monitoring` runs with promtool; e2enode checks both against a live
// Prometheus, with the helpers of this file.
package monitoring

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// clientGoPrefixes are the metrics of client-go's providers, which
// component-base registers (workqueue_*, rest_client_*, leader_election_*).
var clientGoPrefixes = []string{"workqueue_", "rest_client_", "leader_election_"}

// Dashboard is the part of a Grafana dashboard this test reads.
type Dashboard struct {
	Title  string `json:"title"`
	UID    string `json:"uid"`
	Panels []struct {
		Title   string `json:"title"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
}

// metricName finds metric names in PromQL: ours and client-go's.
var metricName = regexp.MustCompile(`\b(network_controller|envoy_injector|workqueue|rest_client|leader_election)_[a-z_]+`)

// Queried returns the metric names a dashboard's queries use, without
// the suffixes of a histogram's series.
func Queried(t testing.TB, d Dashboard) []string {
	t.Helper()
	var out []string
	for _, p := range d.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, target := range p.Targets {
			names := metricName.FindAllString(target.Expr, -1)
			if len(names) == 0 {
				t.Errorf("panel %q: %q names no metric of the programs", p.Title, target.Expr)
			}
			for _, n := range names {
				for _, suffix := range []string{"_bucket", "_sum", "_count"} {
					n = strings.TrimSuffix(n, suffix)
				}
				if !slices.Contains(out, n) {
					out = append(out, n)
				}
			}
		}
	}
	return out
}
