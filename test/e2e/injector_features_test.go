package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/samplecrd/network-controller/pkg/injector"
	"github.com/samplecrd/network-controller/test/framework"
)

// podTemplate is a template that sees the Pod: a label picks Envoy's
// version, and the Pod's app label and namespace go into its arguments.
const podTemplate = `
containers:
- name: {{ if .Labels.renamed }}proxy{{ else }}envoy{{ end }}
  image: {{ printf "envoyproxy/envoy:%s" (index .Labels "envoy-version" | default "v1.31.0") }}
  args: ["--service-cluster", {{ .Labels.app | default .GenerateName | quote }}, "--service-node", {{ .Namespace | quote }}]
  resources:
    requests: {cpu: 100m, memory: 64Mi}
    limits: {cpu: "1", memory: 512Mi}
`

// TestInjectionFollowsThePod creates Pods through the real API server with
// envoy-injector registered, and checks what is stored: a template that
// reads the Pod, the per-Pod annotations and their refusals, the native
// sidecar, a copy of an injected Pod, and a second invocation of the
// webhook after another webhook changed the Pod.
func TestInjectionFollowsThePod(t *testing.T) {
	ctx := framework.TestContext(t, 3*time.Minute)
	f := newInjectorFixture(ctx, t, podTemplate)
	sidecar := func(t *testing.T, p *corev1.Pod, name string) corev1.Container {
		t.Helper()
		for _, c := range slices.Concat(p.Spec.InitContainers, p.Spec.Containers) {
			if c.Name == name {
				return c
			}
		}
		t.Fatalf("Pod %s has no container %s: %v %v", p.Name, name, p.Spec.InitContainers, p.Spec.Containers)
		return corev1.Container{}
	}
	create := func(t *testing.T, p *corev1.Pod) *corev1.Pod {
		t.Helper()
		got, err := f.create(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}

	var shop *corev1.Pod
	t.Run("the template sees the Pod's labels and namespace", func(t *testing.T) {
		p := f.pod(nil)
		p.Labels = map[string]string{"app": "shop", "envoy-version": "v1.32.1"}
		shop = create(t, p)
		c := sidecar(t, shop, "envoy")
		if c.Image != "envoyproxy/envoy:v1.32.1" || strings.Join(c.Args, " ") != "--service-cluster shop --service-node "+f.ns {
			t.Errorf("image %s, args %q", c.Image, c.Args)
		}
	})

	t.Run("a Pod sets its sidecar's image, resources and arguments", func(t *testing.T) {
		p := create(t, f.pod(map[string]string{
			injector.ImageAnnotation: "envoyproxy/envoy:v1.30.4", injector.CPURequestAnnotation: "250m",
			injector.MemoryLimitAnnotation: "1Gi", injector.ExtraArgsAnnotation: `["--log-level", "debug"]`,
		}))
		c := sidecar(t, p, "envoy")
		cpu, mem := c.Resources.Requests[corev1.ResourceCPU], c.Resources.Limits[corev1.ResourceMemory]
		if c.Image != "envoyproxy/envoy:v1.30.4" || cpu.Cmp(resource.MustParse("250m")) != 0 || mem.Cmp(resource.MustParse("1Gi")) != 0 {
			t.Errorf("image %s, cpu request %s, memory limit %s", c.Image, cpu.String(), mem.String())
		}
		if n := len(c.Args); n < 2 || c.Args[n-2] != "--log-level" || c.Args[n-1] != "debug" {
			t.Errorf("args %q: want the template's, then --log-level debug", c.Args)
		}
	})

	t.Run("a bad annotation refuses the Pod with a message that names it", func(t *testing.T) {
		for _, tc := range []struct{ key, value, says string }{
			{injector.ImageAnnotation, "Envoy:Latest", "not an image reference"},
			{injector.CPULimitAnnotation, "lots", "not a quantity"},
			{injector.CPURequestAnnotation, "2", "cpu request 2 would pass its limit 1"},
			{injector.ExtraArgsAnnotation, "--log-level debug", "want a JSON list of strings"},
			{injector.NativeSidecarAnnotation, "yes", `want "true" or "false"`},
			{injector.AnnotationPrefix + "cpu-requets", "1", "unknown annotation"},
		} {
			_, err := f.create(ctx, f.pod(map[string]string{tc.key: tc.value}))
			if err == nil || !strings.Contains(err.Error(), tc.key) || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("%s=%q: error %v, want a refusal naming the annotation and saying %q", tc.key, tc.value, err, tc.says)
			}
		}
	})

	t.Run("a native sidecar is the first init container with restartPolicy Always", func(t *testing.T) {
		p := f.pod(map[string]string{injector.NativeSidecarAnnotation: "true"})
		p.Spec.InitContainers = []corev1.Container{{Name: "migrate", Image: "migrate:1"}}
		p = create(t, p)
		if len(p.Spec.InitContainers) != 2 || p.Spec.InitContainers[0].Name != "envoy" || len(p.Spec.Containers) != 1 {
			t.Fatalf("init containers %v, containers %v", p.Spec.InitContainers, p.Spec.Containers)
		}
		if rp := p.Spec.InitContainers[0].RestartPolicy; rp == nil || *rp != corev1.ContainerRestartPolicyAlways {
			t.Errorf("restartPolicy %v, want Always", rp)
		}
	})

	t.Run("a copy of an injected Pod is not injected again after the template changed", func(t *testing.T) {
		// The template now names the sidecar "proxy" for Pods labelled
		// renamed: a name check alone would add a second sidecar.
		before := f.admissions(ctx, t, map[string]string{"result": injector.ResultUnchanged})
		copied := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "copy-", Annotations: shop.Annotations, Labels: map[string]string{"renamed": "yes"}},
			Spec:       *shop.Spec.DeepCopy(),
		}
		copied = create(t, copied)
		var names []string
		for _, c := range copied.Spec.Containers {
			names = append(names, c.Name)
		}
		if strings.Join(names, ",") != "web,envoy" {
			t.Errorf("containers %v: want the copied web and envoy, and no proxy", names)
		}
		if d := f.admissions(ctx, t, map[string]string{"result": injector.ResultUnchanged}) - before; d != 1 {
			t.Errorf("%v admissions left unchanged, want 1", d)
		}
	})

	t.Run("a second invocation after another webhook changed the Pod changes nothing", func(t *testing.T) {
		f.startLabeller(ctx, t)
		var p *corev1.Pod
		framework.Eventually(ctx, t, 30*time.Second, func(ctx context.Context) (bool, string, error) {
			var err error
			if p, err = f.create(ctx, f.pod(nil)); err != nil {
				return false, err.Error(), nil
			}
			return p.Labels["relabelled"] == "yes", fmt.Sprintf("labels %v", p.Labels), nil
		})
		before := f.admissions(ctx, t, map[string]string{"result": injector.ResultUnchanged})
		p = create(t, f.pod(nil))
		if d := f.admissions(ctx, t, map[string]string{"result": injector.ResultUnchanged}) - before; d != 1 {
			t.Errorf("the webhook was called again %v times after the labeller, want 1", d)
		}
		var names []string
		for _, c := range p.Spec.Containers {
			names = append(names, c.Name)
		}
		if strings.Join(names, ",") != "web,envoy" || p.Labels["relabelled"] != "yes" || len(p.Spec.Volumes) > 1 {
			t.Errorf("containers %v, labels %v, volumes %v: want one envoy and the label", names, p.Labels, p.Spec.Volumes)
		}
	})
}

// TestInjectionIsExplained: an injected Pod carries the status annotation,
// put there by the webhook's own answer; a Pod on the host's network that
// asks is admitted as it is; and why is a label of the admissions metric.
// The webhook writes nothing else anywhere (TestAForgedReviewWritesNothing).
func TestInjectionIsExplained(t *testing.T) {
	ctx := framework.TestContext(t, 2*time.Minute)
	f := newInjectorFixture(ctx, t, podTemplate)
	asks := f.pod(nil)
	asks.GenerateName, asks.Name = "", "explained"
	injected, err := f.create(ctx, asks)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := injector.ReadStatus(injected.Annotations); !ok {
		t.Errorf("the injected Pod has no %s: %v", injector.StatusAnnotation, injected.Annotations)
	}
	onHost := f.pod(nil)
	onHost.GenerateName, onHost.Name = "", "on-the-host"
	onHost.Spec.HostNetwork = true
	skipped, err := f.create(ctx, onHost)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := injector.ReadStatus(skipped.Annotations); ok || len(skipped.Spec.Containers) != 1 {
		t.Errorf("the Pod on the host's network got containers %v", skipped.Spec.Containers)
	}
	if n := f.admissions(ctx, t, map[string]string{"result": injector.ResultSkipped, "reason": injector.ReasonHostNetwork}); n < 1 {
		t.Errorf("envoy_injector_admissions_total{result=skipped,reason=HostNetwork} = %v", n)
	}
}
