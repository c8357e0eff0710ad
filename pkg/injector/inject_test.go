package injector

import (
	"encoding/json"
	"strings"
	"testing"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/diff"
)

// designTemplate is the template of the design documents.
const designTemplate = `
containers:
  - name: envoy
    image: lyft/envoy:845747513e12e1f2e6c8dfc3b4fe29df4bd05cf3
    command: ["/usr/local/bin/envoy"]
    args: ["--concurrency 4", "--config-path /etc/envoy/envoy.json", "--mode serve"]
    ports:
      - containerPort: 80
        protocol: TCP
    volumeMounts:
      - name: envoy-conf
        mountPath: /etc/envoy
volumes:
  - name: envoy-conf
    configMap:
      name: envoy
`

func mustTemplate(t *testing.T) *Template {
	t.Helper()
	tmpl, err := ParseTemplate(designTemplate)
	if err != nil {
		t.Fatal(err)
	}
	return tmpl
}

// pod builds a Pod that asks for the sidecar, with the given containers
// (by name, image "app") and volumes (by name, emptyDir).
func pod(containers []string, volumes []string, annotations map[string]string) *corev1.Pod {
	p := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", Annotations: map[string]string{RequestAnnotation: "true"}},
	}
	for k, v := range annotations {
		p.Annotations[k] = v
	}
	for _, c := range containers {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: c, Image: "app"})
	}
	for _, v := range volumes {
		p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: v, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	}
	return p
}

// injected is p with the design template's container and volume appended
// and the marker set: what a correct merge produces.
func injected(t *testing.T, p *corev1.Pod) *corev1.Pod {
	out := p.DeepCopy()
	tmpl := mustTemplate(t)
	sidecar, err := tmpl.Render(PodData{})
	if err != nil {
		t.Fatal(err)
	}
	out.Annotations[StatusAnnotation] = `{"template":"` + tmpl.Hash + `","containers":["envoy"],"volumes":["envoy-conf"]}`
	out.Spec.Containers = append(out.Spec.Containers, sidecar.Containers...)
	out.Spec.Volumes = append(out.Spec.Volumes, sidecar.Volumes...)
	return out
}

func TestReview(t *testing.T) {
	tests := []struct {
		name     string
		pod      *corev1.Pod
		template string
		// want is the Pod after admission; nil means unchanged.
		want func(t *testing.T, original *corev1.Pod) *corev1.Pod
		// denied is a part of the denial message; empty means allowed.
		denied string
	}{
		{name: "a Pod with one container gets the sidecar and its volume",
			pod: pod([]string{"app"}, nil, nil), want: injected},
		{name: "a Pod's own containers and volumes are kept, the sidecar's added after them",
			pod: pod([]string{"app", "worker"}, []string{"data", "cache"}, nil), want: injected},
		{name: "a Pod that does not ask is left alone",
			pod: func() *corev1.Pod {
				p := pod([]string{"app"}, nil, nil)
				delete(p.Annotations, RequestAnnotation)
				return p
			}()},
		{name: "a Pod that asks with another value than true is left alone",
			pod: pod([]string{"app"}, nil, map[string]string{RequestAnnotation: "yes"})},
		{name: "a Pod that opts out with \"false\" is left alone",
			pod: pod([]string{"app"}, nil, map[string]string{RequestAnnotation: "false"})},
		{name: "a Pod on the host's network is left alone, even when it asks",
			pod: func() *corev1.Pod {
				p := pod([]string{"app"}, nil, nil)
				p.Spec.HostNetwork = true
				return p
			}()},
		{name: "a Pod injected already (re-invocation) is left alone",
			pod: injected(t, pod([]string{"app"}, nil, nil))},
		{name: "a Pod with an envoy container of its own is left alone",
			pod: pod([]string{"app", "envoy"}, nil, nil)},
		{name: "a volume name clash is refused, not overwritten",
			pod: pod([]string{"app"}, []string{"envoy-conf"}, nil), denied: `already has a volume named "envoy-conf"`},
		{name: "a malformed template refuses the Pods that ask",
			pod: pod([]string{"app"}, nil, nil), template: "containers: [{name: envoy, image: x, volumeMount: []}]",
			denied: `unknown field "volumeMount"`},
		{name: "a template without containers refuses the Pods that ask",
			pod: pod([]string{"app"}, nil, nil), template: "volumes: []", denied: "the template has no containers"},
		{name: "a malformed template does not concern Pods that do not ask",
			pod:      func() *corev1.Pod { p := pod([]string{"app"}, nil, nil); p.Annotations = nil; return p }(),
			template: "not: [a template"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			raw, err := json.Marshal(tc.pod)
			if err != nil {
				t.Fatal(err)
			}
			wh := &Webhook{Template: func() (*Template, error) {
				if tc.template != "" {
					return ParseTemplate(tc.template)
				}
				return ParseTemplate(designTemplate)
			}}
			resp := wh.Review(podCreate(raw))

			if tc.denied != "" {
				if resp.Allowed || resp.Result == nil || !strings.Contains(resp.Result.Message, tc.denied) {
					t.Fatalf("response %+v; want a denial saying %q", resp, tc.denied)
				}
				return
			}
			if !resp.Allowed {
				t.Fatalf("denied: %s", resp.Result.Message)
			}
			want := tc.pod
			if tc.want != nil {
				want = tc.want(t, tc.pod)
			}
			got := applyPatch(t, raw, resp)
			if !equality.Semantic.DeepEqual(got, want) {
				t.Errorf("the patched Pod differs from the expected one (-want +got):\n%s", diff.Diff(want, got))
			}
			if tc.want == nil && len(resp.Patch) > 0 {
				t.Errorf("a patch for a Pod that must be left alone: %s", resp.Patch)
			}
		})
	}
}

func podCreate(raw []byte) *admissionv1.AdmissionRequest {
	return &admissionv1.AdmissionRequest{
		Kind:      metav1.GroupVersionKind{Version: "v1", Kind: "Pod"},
		Operation: admissionv1.Create,
		Object:    runtime.RawExtension{Raw: raw},
	}
}

// applyPatch applies the response's JSON patch to the raw Pod, as the API
// server does, and decodes the result.
func applyPatch(t *testing.T, raw []byte, resp *admissionv1.AdmissionResponse) *corev1.Pod {
	t.Helper()
	out := raw
	if len(resp.Patch) > 0 {
		if resp.PatchType == nil || *resp.PatchType != admissionv1.PatchTypeJSONPatch {
			t.Fatalf("patch type %v, want JSONPatch", resp.PatchType)
		}
		patch, err := jsonpatch.DecodePatch(resp.Patch)
		if err != nil {
			t.Fatalf("the patch does not decode: %v\n%s", err, resp.Patch)
		}
		if out, err = patch.Apply(raw); err != nil {
			t.Fatalf("the patch does not apply: %v\n%s", err, resp.Patch)
		}
	}
	p := &corev1.Pod{}
	if err := json.Unmarshal(out, p); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestParseTemplateOfTheDesignDocuments(t *testing.T) {
	s, err := mustTemplate(t).Render(PodData{Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Containers) != 1 || s.Containers[0].Name != "envoy" || len(s.Volumes) != 1 || s.Volumes[0].ConfigMap.Name != "envoy" {
		t.Errorf("parsed %+v", s)
	}
}

// FuzzReview feeds the webhook arbitrary Pod bodies: it must never panic,
// every patch it allows must apply cleanly to the body it was given and
// yield a Pod with the sidecar, and that Pod admitted again (reinvocation)
// must get no second patch.
func FuzzReview(f *testing.F) {
	for _, p := range []*corev1.Pod{
		pod([]string{"app"}, nil, nil),
		pod([]string{"app", "worker"}, []string{"data"}, nil),
		pod([]string{"envoy"}, nil, nil),
	} {
		raw, _ := json.Marshal(p)
		f.Add(raw)
	}
	f.Add([]byte(`{"metadata":{"annotations":{"initializer.kubernetes.io/envoy":"true"}}}`))
	f.Add([]byte(`{"metadata":{"annotations":{"initializer.kubernetes.io/envoy":"true"}},"spec":{"volumes":null}}`))
	f.Add([]byte(`{"metadata":{"annotations":{"initializer.kubernetes.io/envoy":"true","sidecar.samplecrd.k8s.io/cpu-request":"1","sidecar.samplecrd.k8s.io/extra-args":"[\"-v\"]"}},"spec":{"initContainers":[{"name":"i"}]}}`))
	f.Add([]byte(`{"metadata":{"annotations":{"initializer.kubernetes.io/envoy":"true","sidecar.samplecrd.k8s.io/status":"{\"containers\":[\"envoy\"]}"}}}`))
	tmpl, err := ParseTemplate(designTemplate)
	if err != nil {
		f.Fatal(err)
	}
	wh := &Webhook{Template: func() (*Template, error) { return tmpl, nil }}
	f.Fuzz(func(t *testing.T, raw []byte) {
		resp := wh.Review(podCreate(raw))
		if !resp.Allowed || len(resp.Patch) == 0 {
			return
		}
		got := applyPatch(t, raw, resp)
		found := false
		for _, c := range got.Spec.Containers {
			found = found || c.Name == "envoy"
		}
		if status, ok := ReadStatus(got.Annotations); !found || !ok || strings.Join(status.Containers, ",") != "envoy" {
			t.Errorf("a patch was returned but the patched Pod has no sidecar: %s", resp.Patch)
		}
		patched, err := json.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		if again := wh.Review(podCreate(patched)); !again.Allowed || len(again.Patch) > 0 {
			t.Errorf("the injected Pod, admitted again, got another patch: %s", again.Patch)
		}
	})
}

// TestWants: a Pod asks by label or by the design documents' annotation,
// with "true" and nothing else; a Pod on the host's network never gets it.
func TestWants(t *testing.T) {
	for _, tc := range []struct {
		name        string
		labels      map[string]string
		annotations map[string]string
		hostNetwork bool
		want        bool
	}{
		{name: "nothing asked"},
		{name: "the label", labels: map[string]string{RequestLabel: "true"}, want: true},
		{name: "the annotation", annotations: map[string]string{RequestAnnotation: "true"}, want: true},
		{name: "the label, false", labels: map[string]string{RequestLabel: "false"}},
		{name: "the annotation, yes", annotations: map[string]string{RequestAnnotation: "yes"}},
		{name: "the label on the host's network", labels: map[string]string{RequestLabel: "true"}, hostNetwork: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: tc.labels, Annotations: tc.annotations},
				Spec: corev1.PodSpec{HostNetwork: tc.hostNetwork}}
			if got := Wants(p); got != tc.want {
				t.Errorf("Wants = %v, want %v", got, tc.want)
			}
		})
	}
}
