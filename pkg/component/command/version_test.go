package command

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"strings"
	"testing"

	apimachineryversion "k8s.io/apimachinery/pkg/version"
	"sigs.k8s.io/yaml"
)

// stamped is a version as `make build` stamps it.
var stamped = apimachineryversion.Info{
	GitVersion:   "v0.0.0-fb04114-dirty",
	GitCommit:    "fb04114c790444b61f3b1877f27d7275058277be",
	GitTreeState: "dirty",
	BuildDate:    "2026-11-29T07:35:28Z",
	GoVersion:    "go1.27.3",
	Compiler:     "gc",
	Platform:     "linux/amd64",
}

// TestFormatVersion: the shapes of `version -o`: one line that starts
// with the program's name, or every field in JSON or YAML.
func TestFormatVersion(t *testing.T) {
	for _, tc := range []struct {
		output string
		// want is the output, or decode reads it back into an Info.
		want    string
		decode  func([]byte, any) error
		wantErr bool
	}{
		{output: "", want: "tool v0.0.0-fb04114-dirty fb04114c790444b61f3b1877f27d7275058277be+dirty go1.27.3\n"},
		{output: "json", decode: json.Unmarshal},
		{output: "yaml", decode: func(data []byte, v any) error { return yaml.UnmarshalStrict(data, v) }},
		{output: "xml", wantErr: true},
	} {
		t.Run(tc.output, func(t *testing.T) {
			out, err := formatVersion("tool", stamped, tc.output)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want one: %t", err, tc.wantErr)
			}
			if tc.decode == nil {
				if out != tc.want {
					t.Errorf("output %q, want %q", out, tc.want)
				}
				return
			}
			var got apimachineryversion.Info
			if err := tc.decode([]byte(out), &got); err != nil {
				t.Fatalf("%v:\n%s", err, out)
			}
			if got != stamped {
				t.Errorf("read back %+v, want %+v", got, stamped)
			}
			for _, field := range []string{"gitVersion", "gitCommit", "goVersion"} {
				if !strings.Contains(out, field) {
					t.Errorf("output lacks %s:\n%s", field, out)
				}
			}
		})
	}
}

// TestCompleteVersion: what -ldflags -X stamped is kept; what it did not
// is the build info's, or unknown.
func TestCompleteVersion(t *testing.T) {
	unstamped := apimachineryversion.Info{GitVersion: "v0.0.0-master+$Format:%H$", GitCommit: "$Format:%H$", BuildDate: "1970-01-01T00:00:00Z", GoVersion: "go1.27.3"}
	withVCS := &debug.BuildInfo{
		Main:     debug.Module{Path: "github.com/samplecrd/network-controller", Version: "v0.0.0-20261129073528-fb04114c7904+dirty"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "fb04114c790444b61f3b1877f27d7275058277be"}, {Key: "vcs.modified", Value: "true"}},
	}
	for _, tc := range []struct {
		name string
		info apimachineryversion.Info
		bi   *debug.BuildInfo
		want apimachineryversion.Info
	}{
		{name: "stamped", info: stamped, bi: withVCS, want: stamped},
		{name: "from the build info", info: unstamped, bi: withVCS, want: apimachineryversion.Info{
			GitVersion: "v0.0.0-20261129073528-fb04114c7904+dirty", GitCommit: "fb04114c790444b61f3b1877f27d7275058277be", GitTreeState: "dirty", GoVersion: "go1.27.3"}},
		{name: "a build without VCS", info: unstamped, bi: &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, want: apimachineryversion.Info{
			GitVersion: "(devel)", GitCommit: "unknown", GoVersion: "go1.27.3"}},
		{name: "no build info", info: unstamped, want: apimachineryversion.Info{GitVersion: "unknown", GitCommit: "unknown", GoVersion: "go1.27.3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := completeVersion(tc.info, tc.bi); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestStampedVersion builds a program with the -ldflags -X of `make build`
// and finds what they stamp in its --version and version -o json.
func TestStampedVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	bin := filepath.Join(t.TempDir(), "versioned")
	const pkg = "k8s.io/component-base/version"
	ldflags := "-X " + pkg + ".gitVersion=v1.2.3-4-gabcdef0 -X " + pkg + ".gitCommit=abcdef0123456789 -X " + pkg + ".gitTreeState=clean"
	if out, err := exec.Command("go", "build", "-ldflags", ldflags, "-o", bin, "./testdata/versioned").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{args: []string{"--version"}, want: []string{"versioned v1.2.3-4-gabcdef0 abcdef0123456789 go"}},
		{args: []string{"version", "-o", "json"}, want: []string{`"gitVersion": "v1.2.3-4-gabcdef0"`, `"gitCommit": "abcdef0123456789"`, `"gitTreeState": "clean"`}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			out, err := exec.Command(bin, tc.args...).Output()
			if err != nil {
				t.Fatalf("%v", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}
