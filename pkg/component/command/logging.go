// Both programs' logs, configured as every Kubernetes component does,
// through component-base/logs: -v, --vmodule and
// --logging-format=text|json; klog's own deprecated flags are not offered.

package command

import (
	"github.com/spf13/pflag"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/component-base/featuregate"
	"k8s.io/component-base/logs"
	logsapi "k8s.io/component-base/logs/api/v1"
	_ "k8s.io/component-base/logs/json/register" // --logging-format=json
)

// LogOptions are the logging flags of one program.
type LogOptions struct {
	config *logsapi.LoggingConfiguration
	// features are the logging features at their defaults (JSON is beta,
	// on); the gate is not offered as a flag.
	features featuregate.MutableVersionedFeatureGate
}

// AddLogFlags adds the logging flags to fs.
func AddLogFlags(fs *pflag.FlagSet) *LogOptions {
	o := &LogOptions{config: logsapi.NewLoggingConfiguration(), features: featuregate.NewFeatureGate()}
	utilruntime.Must(logsapi.AddFeatureGates(o.features))
	logsapi.AddFlags(o.config, fs)
	return o
}

// Apply configures the logs from the parsed flags; Flush writes what is
// buffered, before the program exits.
func (o *LogOptions) Apply() error {
	logs.InitLogs()
	return logsapi.ValidateAndApply(o.config, o.features)
}

// FlushLogs writes what the logs buffer.
func FlushLogs() { logs.FlushLogs() }
