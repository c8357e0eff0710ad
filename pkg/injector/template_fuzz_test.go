package injector

import (
	"slices"
	"testing"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
)

// hostileTemplate places Pod metadata in every kind of spot: a string made
// of parts, a flow sequence, a block mapping's value, and a name.
const hostileTemplate = `
containers:
- name: envoy
  image: {{ printf "envoy:%s" (index .Annotations "version") }}
  args: [{{ .Labels.app }}, {{ index .Annotations "note" }}]
  env:
  - name: NODE
    value: {{ .Namespace }}
`

// FuzzRender: whatever a Pod's labels, annotations and namespace hold, the
// rendered sidecar has exactly the template's shape (one container, the
// fields it names, no others), and each value lands whole where the
// template put it. A value must never add a field (securityContext), a
// container or a volume, nor make the rendering fail.
//
//	go test ./pkg/injector -run '^$' -fuzz '^FuzzRender$' -fuzztime 30s
func FuzzRender(f *testing.F) {
	tmpl, err := ParseTemplate(hostileTemplate)
	if err != nil {
		f.Fatal(err)
	}
	f.Add("v1.31.0", "checkout", "a note", "shop")
	f.Add("v1\n  securityContext: {privileged: true}", "x]\n- name: evil\n  image: evil", `", "--admin`, "ns\n  - name: EVIL")
	f.Add("{{ .Name }}", "- a", "key: value", "'\"\\\t")
	f.Add("\u0085\u2028\ufeff\x7f", "\x00", "\U0001F600", "#comment")
	f.Fuzz(func(t *testing.T, version, app, note, namespace string) {
		for _, s := range []string{version, app, note, namespace} {
			if !utf8.ValidString(s) {
				t.Skip("the API server holds only valid UTF-8")
			}
		}
		got, err := tmpl.Render(PodData{Namespace: namespace, Labels: map[string]string{"app": app},
			Annotations: map[string]string{"version": version, "note": note}})
		if err != nil {
			t.Fatalf("rendering failed: %v", err)
		}
		want := corev1.Container{Name: "envoy", Image: "envoy:" + version, Args: []string{app, note},
			Env: []corev1.EnvVar{{Name: "NODE", Value: namespace}}}
		if len(got.Containers) != 1 || len(got.Volumes) != 0 || got.NativeSidecar {
			t.Fatalf("the sidecar changed shape: %+v", got)
		}
		c := got.Containers[0]
		if c.Name != want.Name || c.Image != want.Image || !slices.Equal(c.Args, want.Args) ||
			!slices.Equal(c.Env, want.Env) || c.SecurityContext != nil || len(c.VolumeMounts) != 0 || len(c.Command) != 0 || len(c.Ports) != 0 {
			t.Fatalf("rendered %+v, want %+v", c, want)
		}
	})
}
