package command

import (
	"encoding/json"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
	apimachineryversion "k8s.io/apimachinery/pkg/version"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/component-base/version"
	"sigs.k8s.io/yaml"
)

// NewVersionCommand is `<program> version [-o json|yaml]`: the version
// and the commit the binary was built from (Version), and the Go it was
// built with.
func NewVersionCommand() *cobra.Command {
	var output string
	fss := &cliflag.NamedFlagSets{}
	fss.FlagSet("version").StringVarP(&output, "output", "o", "", "Output format: empty for one line, json or yaml for every field of k8s.io/apimachinery's version.Info.")
	cmd := &cobra.Command{
		Use:   "version [-o json|yaml]",
		Short: "Print the version this binary was built from",
		Long:  "Prints the version (git describe, stamped by `make build`; else the Go module's version), the commit (git rev-parse HEAD; else vcs.revision, +dirty for uncommitted changes) this binary was built from, and the Go it was built with.",
		RunE: func(cmd *cobra.Command, _ []string) error {
			out, err := formatVersion(cmd.Root().Name(), Version(), output)
			if err != nil {
				return UsageErrorf(cmd, "%w", err)
			}
			_, err = fmt.Fprint(cmd.OutOrStdout(), out)
			return err
		},
	}
	Setup(cmd, fss)
	return cmd
}

// formatVersion is info as `version -o output` prints it: one line that
// starts with name, JSON or YAML.
func formatVersion(name string, info apimachineryversion.Info, output string) (string, error) {
	switch output {
	case "":
		return name + " " + versionLine(info) + "\n", nil
	case "json":
		data, err := json.MarshalIndent(info, "", "  ")
		if err != nil {
			return "", fmt.Errorf("encoding the version: %w", err)
		}
		return string(data) + "\n", nil
	case "yaml":
		data, err := yaml.Marshal(info)
		if err != nil {
			return "", fmt.Errorf("encoding the version: %w", err)
		}
		return string(data), nil
	}
	return "", fmt.Errorf("--output %q: want json or yaml, or nothing for one line", output)
}

// versionLine is info in one line, what --version prints after the
// program's name: e.g. "v0.0.0-fb04114-dirty fb04114…+dirty go1.27.3".
func versionLine(info apimachineryversion.Info) string {
	commit := info.GitCommit
	if info.GitTreeState == "dirty" && !strings.HasSuffix(commit, "+dirty") {
		commit += "+dirty"
	}
	return fmt.Sprintf("%s %s %s", info.GitVersion, commit, info.GoVersion)
}

// Version is what the binary was built from: component-base's version
// (k8s.io/component-base/version), whose variables `make build` stamps
// with -ldflags -X (gitVersion, gitCommit, gitTreeState, buildDate),
// completed from the Go toolchain's build info for what a plain `go
// build` or `go run` left unstamped.
func Version() apimachineryversion.Info {
	bi, _ := debug.ReadBuildInfo() // nil when the binary has none
	return completeVersion(version.Get(), bi)
}

// What component-base's version variables hold when no -ldflags -X set
// them: `git archive` placeholders, and the epoch.
const (
	unstampedMarker = "$Format:"
	unstampedDate   = "1970-01-01T00:00:00Z"
)

// completeVersion is info with each field that was not stamped taken from
// bi (nil: none): the module's version, vcs.revision, vcs.modified, or
// "unknown" (an empty date) when bi lacks it too.
func completeVersion(info apimachineryversion.Info, bi *debug.BuildInfo) apimachineryversion.Info {
	module, revision, state := "unknown", "unknown", ""
	if bi != nil {
		if bi.Main.Version != "" {
			module = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				revision = s.Value
			case "vcs.modified":
				state = map[string]string{"true": "dirty", "false": "clean"}[s.Value]
			}
		}
	}
	if strings.Contains(info.GitVersion, unstampedMarker) {
		info.GitVersion = module
	}
	if strings.Contains(info.GitCommit, unstampedMarker) || info.GitCommit == "" {
		info.GitCommit = revision
	}
	if info.GitTreeState == "" {
		info.GitTreeState = state
	}
	if info.BuildDate == unstampedDate {
		info.BuildDate = ""
	}
	return info
}
