package injector

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/diff"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite the golden files of TestGolden from what the code does now")

// TestGolden runs each case of testdata/golden through both ways in:
// offline (InjectManifests, what `envoy-injector inject` runs) and the
// webhook (Review, on each Pod or pod template of the input as the API
// server would send it). Both must give the case's output.yaml, or, for a
// refused case, the message in error.txt. A case's template.yaml is its
// ConfigMap; without one it is artifacts/injector/envoy-initializer.yaml.
//
// After a deliberate change: go test ./pkg/injector -run TestGolden -update
func TestGolden(t *testing.T) {
	cases, err := os.ReadDir(filepath.Join("testdata", "golden"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		dir := filepath.Join("testdata", "golden", c.Name())
		t.Run(c.Name(), func(t *testing.T) {
			tmpl := goldenTemplate(t, dir)
			input := readFile(t, filepath.Join(dir, "input.yaml"))
			var offline bytes.Buffer
			_, offlineErr := InjectManifests(bytes.NewReader(input), &offline, tmpl)
			denials := reviewAll(t, input, tmpl)

			if offlineErr != nil || len(denials) > 0 {
				checkRefusal(t, dir, offlineErr, denials)
				return
			}
			compareGolden(t, filepath.Join(dir, "output.yaml"), offline.Bytes())

			t.Run("the webhook gives the same Pods", func(t *testing.T) {
				want := podLikesOf(t, offline.Bytes())
				got := webhookPods(t, input, tmpl)
				if len(got) != len(want) {
					t.Fatalf("%d Pods through the webhook, %d in the output", len(got), len(want))
				}
				for i := range want {
					if !equality.Semantic.DeepEqual(got[i].Annotations, want[i].Annotations) || !equality.Semantic.DeepEqual(got[i].Spec, want[i].Spec) {
						t.Errorf("Pod %d differs between the webhook and the output (-output +webhook):\n%s", i, diff.Diff(want[i], got[i]))
					}
				}
			})
			t.Run("injecting twice is injecting once", func(t *testing.T) {
				var again bytes.Buffer
				n, err := InjectManifests(bytes.NewReader(offline.Bytes()), &again, tmpl)
				if err != nil || n != 0 || !bytes.Equal(again.Bytes(), offline.Bytes()) {
					t.Errorf("a second pass injected %d (err %v):\n%s", n, err, cmp.Diff(offline.String(), again.String()))
				}
				for i, p := range podLikesOf(t, offline.Bytes()) {
					if resp := reviewPod(t, p, tmpl); !resp.Allowed || len(resp.Patch) > 0 {
						t.Errorf("the webhook changed output Pod %d again: %s", i, resp.Patch)
					}
				}
			})
		})
	}
}

// checkRefusal compares a refused case with its error.txt: the webhook's
// denial and the offline error carry the same message.
func checkRefusal(t *testing.T, dir string, offlineErr error, denials []string) {
	t.Helper()
	if offlineErr == nil || len(denials) == 0 {
		t.Fatalf("refused one way only: offline %v, webhook %q", offlineErr, denials)
	}
	message := strings.TrimPrefix(denials[0], "envoy sidecar injection: ")
	compareGolden(t, filepath.Join(dir, "error.txt"), []byte(message+"\n"))
	if !strings.HasSuffix(offlineErr.Error(), message) {
		t.Errorf("offline error %q does not end in the webhook's %q", offlineErr, message)
	}
}

// compareGolden fails when got is not the golden file's content, or
// rewrites the file with -update.
func compareGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s is stale (-golden +got); if the change is meant, run go test ./pkg/injector -run TestGolden -update:\n%s", path, cmp.Diff(string(want), string(got)))
	}
}

func goldenTemplate(t *testing.T, dir string) *Template {
	t.Helper()
	path := filepath.Join(dir, "template.yaml")
	if _, err := os.Stat(path); os.IsNotExist(err) {
		path = filepath.Join("..", "..", "artifacts", "injector", "envoy-initializer.yaml")
	}
	cm := &corev1.ConfigMap{}
	if err := yaml.UnmarshalStrict(readFile(t, path), cm); err != nil {
		t.Fatal(err)
	}
	tmpl, err := TemplateFromConfigMap(cm)
	if err != nil {
		t.Fatal(err)
	}
	return tmpl
}

// webhookPods admits every Pod of the input through the webhook and
// returns them as the API server would store them.
func webhookPods(t *testing.T, input []byte, tmpl *Template) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range podLikesOf(t, input) {
		raw, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, applyPatch(t, raw, reviewPod(t, p, tmpl)))
	}
	return out
}

// reviewAll returns the webhook's denials of the input's Pods.
func reviewAll(t *testing.T, input []byte, tmpl *Template) []string {
	var denials []string
	for _, p := range podLikesOf(t, input) {
		if resp := reviewPod(t, p, tmpl); !resp.Allowed {
			denials = append(denials, resp.Result.Message)
		}
	}
	return denials
}

func reviewPod(t *testing.T, p *corev1.Pod, tmpl *Template) *admissionv1.AdmissionResponse {
	t.Helper()
	raw, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	req := podCreate(raw)
	req.Namespace = p.Namespace
	return (&Webhook{Template: func() (*Template, error) { return tmpl, nil }}).Review(req)
}

// podLikesOf returns the Pods of a manifest file, and a Pod for each pod
// template of a workload, in its workload's namespace: what the API server
// would send the webhook.
func podLikesOf(t *testing.T, data []byte) []*corev1.Pod {
	t.Helper()
	var pods []*corev1.Pod
	collect := func(podObj map[string]any, namespace string) error {
		p := &corev1.Pod{}
		raw, err := json.Marshal(podObj)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(raw, p); err != nil {
			return err
		}
		if p.Namespace == "" {
			p.Namespace = namespace
		}
		pods = append(pods, p)
		return nil
	}
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		obj := map[string]any{}
		if err := decoder.Decode(&obj); err != nil {
			break
		}
		if err := forEachPod(obj, collect); err != nil {
			t.Fatal(err)
		}
	}
	return pods
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
