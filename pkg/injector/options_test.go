package injector

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// inject is InjectJSON on a typed Pod: the Pod itself when there is
// nothing to do, else the merged one.
func inject(pod *corev1.Pod, tmpl *Template) (*corev1.Pod, error) {
	raw, err := json.Marshal(pod)
	if err != nil {
		return nil, err
	}
	merged, err := InjectJSON(raw, pod, tmpl)
	if err != nil || merged == nil {
		return pod, err
	}
	out := &corev1.Pod{}
	return out, json.Unmarshal(merged, out)
}

// sidecarOf returns the Pod's container of that name, from either list.
func sidecarOf(t *testing.T, p *corev1.Pod, name string) corev1.Container {
	t.Helper()
	c := findContainer(p, name)
	if c == nil {
		t.Fatalf("the Pod has no container %q: %v %v", name, containerNames(p.Spec.Containers), containerNames(p.Spec.InitContainers))
	}
	return *c
}

// TestInjectionOptions specifies what the template language, the per-Pod
// annotations and the status annotation do, one behaviour per case.
func TestInjectionOptions(t *testing.T) {
	labelled := func(labels, annotations map[string]string) *corev1.Pod {
		p := pod([]string{"app"}, nil, annotations)
		p.Labels = labels
		return p
	}
	metadataTemplate := `
containers:
- name: envoy
  image: {{ printf "envoy:%s" (.Labels.version | default "v1") }}
  args: ["--service-cluster", {{ .Namespace | quote }}, "--service-node", {{ index .Annotations "note" | quote }}]
`
	tests := []struct {
		name     string
		template string // empty: the design documents'
		pod      *corev1.Pod
		// check looks at the injected Pod; unchanged means injection must
		// return the Pod itself; refused is a part of the error.
		check     func(t *testing.T, got *corev1.Pod)
		unchanged bool
		refused   string
	}{
		{name: "a template sees the Pod's labels, namespace and annotations",
			template: metadataTemplate,
			pod:      labelled(map[string]string{"version": "v2"}, map[string]string{"note": `a "quoted" value`}),
			check: func(t *testing.T, got *corev1.Pod) {
				c := sidecarOf(t, got, "envoy")
				if c.Image != "envoy:v2" || strings.Join(c.Args, "|") != `--service-cluster|default|--service-node|a "quoted" value` {
					t.Errorf("image %q args %q", c.Image, c.Args)
				}
			}},
		{name: "default fills in what the Pod does not say",
			template: metadataTemplate, pod: labelled(nil, nil),
			check: func(t *testing.T, got *corev1.Pod) {
				if c := sidecarOf(t, got, "envoy"); c.Image != "envoy:v1" {
					t.Errorf("image %q, want the default envoy:v1", c.Image)
				}
			}},
		{name: "a template that fails to render for this Pod refuses it with the reason",
			template: "{{ if .Labels.broken }}{{ .Nope }}{{ end }}\ncontainers: [{name: envoy, image: envoy}]",
			pod:      labelled(map[string]string{"broken": "yes"}, nil), refused: "can't evaluate field Nope"},
		{name: "a template that renders too much refuses the Pod instead of exhausting the webhook",
			template: "{{ range .Annotations }}{{ range $.Annotations }}{{ range $.Annotations }}{{ . }}{{ end }}{{ end }}{{ end }}\ncontainers: [{name: envoy, image: envoy}]",
			pod: labelled(nil, map[string]string{"a": strings.Repeat("x", 10000), "b": "1", "c": "2", "d": "3", "e": "4", "f": "5",
				"g": "6", "h": "7", "i": "8", "j": "9", "k": "10"}), refused: "passes 1048576 bytes"},
		{name: "the image, resources and extra args are overridden per Pod",
			pod: pod([]string{"app"}, nil, map[string]string{
				ImageAnnotation: "envoyproxy/envoy:v1.31.0", CPURequestAnnotation: "250m", MemoryLimitAnnotation: "1Gi",
				ExtraArgsAnnotation: `["--log-level", "debug info"]`}),
			check: func(t *testing.T, got *corev1.Pod) {
				c := sidecarOf(t, got, "envoy")
				if c.Image != "envoyproxy/envoy:v1.31.0" {
					t.Errorf("image %q", c.Image)
				}
				if cpu := c.Resources.Requests[corev1.ResourceCPU]; cpu.Cmp(resource.MustParse("250m")) != 0 {
					t.Errorf("cpu request %s", cpu.String())
				}
				if mem := c.Resources.Limits[corev1.ResourceMemory]; mem.Cmp(resource.MustParse("1Gi")) != 0 {
					t.Errorf("memory limit %s", mem.String())
				}
				if n := len(c.Args); n != 5 || c.Args[3] != "--log-level" || c.Args[4] != "debug info" {
					t.Errorf("args %q: want the template's three, then the Pod's two", c.Args)
				}
			}},
		{name: "a bad image is refused naming the annotation",
			pod: pod([]string{"app"}, nil, map[string]string{ImageAnnotation: "Envoy:latest"}), refused: "annotation " + ImageAnnotation},
		{name: "a bad quantity is refused naming the annotation",
			pod: pod([]string{"app"}, nil, map[string]string{CPULimitAnnotation: "lots"}), refused: "annotation " + CPULimitAnnotation},
		{name: "a zero quantity is refused",
			pod: pod([]string{"app"}, nil, map[string]string{MemoryRequestAnnotation: "0"}), refused: "want a positive quantity"},
		{name: "extra args that are not a JSON list of strings are refused",
			pod: pod([]string{"app"}, nil, map[string]string{ExtraArgsAnnotation: "--log-level debug"}), refused: "annotation " + ExtraArgsAnnotation},
		{name: "a request above the template's limit is refused",
			template: "containers: [{name: envoy, image: envoy, resources: {limits: {cpu: 500m}}}]",
			pod:      pod([]string{"app"}, nil, map[string]string{CPURequestAnnotation: "2"}), refused: "cpu request 2 would pass its limit 500m"},
		{name: "a misspelt annotation under our prefix is refused, not ignored",
			pod: pod([]string{"app"}, nil, map[string]string{AnnotationPrefix + "cpu-requets": "1"}), refused: "unknown annotation " + AnnotationPrefix + "cpu-requets"},
		{name: "a native sidecar is the first init container, restartPolicy Always",
			template: "nativeSidecar: true\ncontainers: [{name: envoy, image: envoy}]",
			pod: func() *corev1.Pod {
				p := pod([]string{"app"}, nil, nil)
				p.Spec.InitContainers = []corev1.Container{{Name: "migrate", Image: "app"}}
				return p
			}(),
			check: func(t *testing.T, got *corev1.Pod) {
				if names := containerNames(got.Spec.InitContainers); strings.Join(names, ",") != "envoy,migrate" {
					t.Errorf("init containers %v, want envoy first", names)
				}
				if c := got.Spec.InitContainers[0]; c.RestartPolicy == nil || *c.RestartPolicy != corev1.ContainerRestartPolicyAlways {
					t.Errorf("restartPolicy %v, want Always", c.RestartPolicy)
				}
				if names := containerNames(got.Spec.Containers); strings.Join(names, ",") != "app" {
					t.Errorf("containers %v, want only the Pod's own", names)
				}
				if s, _ := ReadStatus(got.Annotations); strings.Join(s.InitContainers, ",") != "envoy" || len(s.Containers) != 0 {
					t.Errorf("status %+v", s)
				}
			}},
		{name: "a Pod makes its sidecar native with an annotation",
			pod: pod([]string{"app"}, nil, map[string]string{NativeSidecarAnnotation: "true"}),
			check: func(t *testing.T, got *corev1.Pod) {
				if len(got.Spec.InitContainers) != 1 || got.Spec.InitContainers[0].Name != "envoy" || len(got.Spec.Containers) != 1 {
					t.Errorf("init containers %v, containers %v: want envoy as an init container", containerNames(got.Spec.InitContainers), containerNames(got.Spec.Containers))
				}
			}},
		{name: "a Pod makes a native template's sidecar a plain container with an annotation",
			template: "nativeSidecar: true\ncontainers: [{name: envoy, image: envoy}]",
			pod:      pod([]string{"app"}, nil, map[string]string{NativeSidecarAnnotation: "false"}),
			check: func(t *testing.T, got *corev1.Pod) {
				if len(got.Spec.InitContainers) != 0 || len(got.Spec.Containers) != 2 {
					t.Errorf("init containers %v, containers %v: want envoy as a container", containerNames(got.Spec.InitContainers), containerNames(got.Spec.Containers))
				}
			}},
		{name: "a native-sidecar value other than true or false is refused",
			pod: pod([]string{"app"}, nil, map[string]string{NativeSidecarAnnotation: "yes"}), refused: "annotation " + NativeSidecarAnnotation},
		{name: "a Pod with an envoy of its own is left alone, native template or not",
			template: "nativeSidecar: true\ncontainers: [{name: envoy, image: envoy}]",
			pod:      pod([]string{"app", "envoy"}, nil, nil), unchanged: true},
		{name: "an injected Pod stays as it is when the template changed since, even its names",
			template: "containers: [{name: proxy, image: envoy:new}]",
			pod:      injected(t, pod([]string{"app"}, nil, nil)), unchanged: true},
		{name: "a copy that kept the status annotation but not the sidecar is injected afresh",
			pod: pod([]string{"app"}, nil, map[string]string{StatusAnnotation: `{"template":"0","containers":["envoy"]}`}),
			check: func(t *testing.T, got *corev1.Pod) {
				sidecarOf(t, got, "envoy")
				if s, _ := ReadStatus(got.Annotations); s.Template != mustTemplate(t).Hash {
					t.Errorf("status %+v, want this template's hash", s)
				}
			}},
		{name: "an unreadable status annotation is replaced",
			pod:   pod([]string{"app"}, nil, map[string]string{StatusAnnotation: "envoy"}),
			check: func(t *testing.T, got *corev1.Pod) { sidecarOf(t, got, "envoy") }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			source := designTemplate
			if tc.template != "" {
				source = tc.template
			}
			tmpl, err := ParseTemplate(source)
			if err != nil {
				t.Fatalf("ParseTemplate: %v", err)
			}
			got, err := inject(tc.pod, tmpl)
			switch {
			case tc.refused != "":
				if err == nil || !strings.Contains(err.Error(), tc.refused) {
					t.Fatalf("error %v, want one saying %q", err, tc.refused)
				}
				return
			case err != nil:
				t.Fatal(err)
			case tc.unchanged:
				if got != tc.pod {
					t.Errorf("the Pod was changed: %v", got.Spec)
				}
				return
			}
			tc.check(t, got)
			again, err := inject(got, tmpl)
			if err != nil || again != got {
				t.Errorf("injecting the result again changed it (err %v)", err)
			}
		})
	}
}

// TestParseTemplateRefusesWhatCannotWork specifies the errors a ConfigMap
// edit gets at once, before any Pod.
func TestParseTemplateRefusesWhatCannotWork(t *testing.T) {
	for source, want := range map[string]string{
		"containers: [{name: envoy, image: {{ .Labels.app }]":    "not a valid Go template",
		"containers: [{name: envoy, image: {{ .Nope }}}]":        "can't evaluate field Nope",
		"containers: [{name: envoy, image: {{ env \"HOME\" }}}]": `function "env" not defined`,
		"containers: [{name: envoy, image: ''}]":                 "needs a name and an image",
		"volumes: []":                                            "the template has no containers",
		"containers: [{name: envoy, image: e, volumeMount: []}]": `unknown field "volumeMount"`,
	} {
		_, err := ParseTemplate(source)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseTemplate(%q) = %v, want an error saying %q", source, err, want)
		}
	}
	a, _ := ParseTemplate(designTemplate)
	b, _ := ParseTemplate(designTemplate + "\n")
	if a.Hash == b.Hash || len(a.Hash) != 16 {
		t.Errorf("hashes %q and %q: want 16 hex digits that tell templates apart", a.Hash, b.Hash)
	}
}

// TestTemplatesAreCheckedWhenRead: what could loop without bound is
// refused when the template is read; numbers go through int, bounded.
func TestTemplatesAreCheckedWhenRead(t *testing.T) {
	const sidecar = "\ncontainers: [{name: envoy, image: envoy, ports: [{containerPort: %s}]}]"
	tests := []struct {
		name      string
		template  string
		pod       PodData
		wantPort  int32
		wantError string
	}{
		{name: "a range over a number is refused", template: "{{ range 1000000000 }}{{ end }}" + fmt.Sprintf(sidecar, "80"),
			wantError: "a range over a number"},
		{name: "so is a range over int's result", template: `{{ range int "5" }}{{ end }}` + fmt.Sprintf(sidecar, "80"),
			wantError: "a range over a number"},
		{name: "a number from an annotation goes through int", template: fmt.Sprintf(sidecar, `{{ index .Annotations "port" | default "80" | int }}`),
			pod: PodData{Annotations: map[string]string{"port": "8080"}}, wantPort: 8080},
		{name: "without int it is a string, which a port is not", template: fmt.Sprintf(sidecar, `{{ index .Annotations "port" | default "80" }}`),
			wantError: "cannot unmarshal string"},
		{name: "int refuses what is not a small integer", template: fmt.Sprintf(sidecar, `{{ index .Annotations "port" | default "80" | int }}`),
			pod: PodData{Annotations: map[string]string{"port": "80\n  hostPort: 1"}}, wantError: "is not an integer"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tmpl, err := ParseTemplate(tc.template)
			var s *Sidecar
			if err == nil {
				s, err = tmpl.Render(tc.pod)
			}
			switch {
			case tc.wantError != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantError) {
					t.Fatalf("error %v, want one saying %q", err, tc.wantError)
				}
			case err != nil:
				t.Fatal(err)
			case s.Containers[0].Ports[0].ContainerPort != tc.wantPort:
				t.Errorf("ports %+v, want %d", s.Containers[0].Ports, tc.wantPort)
			}
		})
	}
}
