package charts

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestTheChartsRefuseBadValues: each chart's values.schema.json makes
// helm refuse, before it renders anything, a value of the wrong type or
// outside its choices, and a key the chart does not have (a typo would
// otherwise be ignored), naming the value at fault. The values the
// project's own scripts and tests pass are accepted.
func TestTheChartsRefuseBadValues(t *testing.T) {
	helm := filepath.Join(root, "bin", "helm")
	for _, chart := range []string{"network-controller", "envoy-injector"} {
		for _, tc := range []struct {
			set  []string
			want string // in helm's error; "" for values it must accept
		}{
			{[]string{"--set", "replicas=two"}, "/replicas"},
			{[]string{"--set", "logFormat=xml"}, "/logFormat"},
			{[]string{"--set", "podDisruptionBudget.maxUnavailable=lots"}, "/podDisruptionBudget/maxUnavailable"},
			{[]string{"--set", "replica=2"}, "replica"},
			{[]string{"--set", "image.pullPolicy=Sometimes"}, "/image/pullPolicy"},
			{[]string{"--set", "networkPolicy.apiServer.ports[0]=70000"}, "/networkPolicy/apiServer/ports/0"},
			{[]string{"--set", "replicas=3", "--set", "podDisruptionBudget.maxUnavailable=50%", "--set", "image.pullPolicy=Never"}, ""},
		} {
			t.Run(chart+" "+strings.Join(tc.set, " "), func(t *testing.T) {
				args := append([]string{"template", "x", filepath.Join(root, "charts", chart)}, tc.set...)
				out, err := exec.Command(helm, args...).CombinedOutput()
				switch {
				case tc.want == "" && err != nil:
					t.Errorf("helm refused values the chart takes: %v\n%.2000s", err, out)
				case tc.want != "" && err == nil:
					t.Errorf("helm rendered the chart with %v", tc.set)
				case tc.want != "" && (!strings.Contains(string(out), "values don't meet the specifications") || !strings.Contains(string(out), tc.want)):
					t.Errorf("helm's refusal does not name %q as the schema's:\n%.2000s", tc.want, out)
				}
			})
		}
	}
	for _, tc := range []struct {
		chart string
		set   []string
	}{
		{"network-controller", []string{"--set", "webhookOnly=true", "--set", "clusterName=kubernetes", "--set", "cloud.cloud=openstack",
			"--set", "conversion.certManager.issuerRef.name=ca,conversion.certManager.issuerRef.kind=ClusterIssuer",
			"--set", "tracing.endpoint=otel-collector.monitoring:4317", "--set", "tracing.samplingRatePerMillion=10000",
			"--set", "extraArgs={--orphan-grace-period=5m}"}},
		{"envoy-injector", []string{"--set", "webhook.certManager=envoy-injector/envoy-injector", "--set", "memory.budgetMi=300"}},
	} {
		t.Run(tc.chart+" takes what the docs set", func(t *testing.T) {
			run(t, helm, append([]string{"template", "x", filepath.Join(root, "charts", tc.chart)}, tc.set...)...)
		})
	}
}
