package main

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	cliflag "k8s.io/component-base/cli/flag"
	"sigs.k8s.io/yaml"

	"github.com/samplecrd/network-controller/pkg/component/command"
	"github.com/samplecrd/network-controller/pkg/injector"
)

// newInjectCommand is `envoy-injector inject`: the webhook's injection,
// offline, on manifests, like `istioctl kube-inject`.
func newInjectCommand() *cobra.Command {
	var file string
	var source templateSource
	fss := &cliflag.NamedFlagSets{}
	fss.FlagSet("inject").StringVarP(&file, "filename", "f", "", `Manifests to inject into: YAML or JSON, several documents and Lists; "-" is standard input. Pods and the pod templates of Deployments, StatefulSets, DaemonSets, ReplicaSets, Jobs and CronJobs that ask for the sidecar get it; everything else is written out unchanged.`)
	source.addFlags(fss.FlagSet("template"))
	cmd := &cobra.Command{
		Use:   "inject -f FILE [--template CONFIGMAP.yaml]",
		Short: "Inject the sidecar into manifests, offline",
		Long:  "Writes the manifests of a file with the sidecar the webhook would inject into each Pod and pod template that asks for it (docs/sidecar-injection.md).",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return command.UsageErrorf(cmd, "-f (--filename) is required")
			}
			fail := func(err error) error { return command.Exit(1, fmt.Errorf("envoy-injector inject: %w", err)) }
			tmpl, err := source.load()
			if err != nil {
				return fail(err)
			}
			in := cmd.InOrStdin()
			if file != "-" {
				f, err := os.Open(file)
				if err != nil {
					return fail(err)
				}
				defer f.Close()
				in = f
			}
			if _, err := injector.InjectManifests(in, cmd.OutOrStdout(), tmpl); err != nil {
				return fail(err)
			}
			return nil
		},
	}
	command.Setup(cmd, fss)
	return cmd
}

// templateSource is where the offline commands read the template: a
// ConfigMap manifest, or the cluster.
type templateSource struct {
	file, kubeconfig, namespace, name string
}

func (t *templateSource) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&t.file, "template", "", "The envoy-initializer ConfigMap as a manifest file. Empty: read it from the cluster (--kubeconfig, --configmap-namespace, --configmap-name).")
	fs.StringVar(&t.kubeconfig, "kubeconfig", "", "Path to a kubeconfig, to read the ConfigMap from the cluster when --template is empty.")
	fs.StringVar(&t.namespace, "configmap-namespace", "", "Namespace of the ConfigMap in the cluster; empty means the kubeconfig context's.")
	fs.StringVar(&t.name, "configmap-name", "envoy-initializer", "Name of the ConfigMap in the cluster.")
}

func (t *templateSource) load() (*injector.Template, error) {
	return loadTemplate(t.file, t.kubeconfig, t.namespace, t.name)
}

func loadTemplate(path, kubeconfig, namespace, name string) (*injector.Template, error) {
	cm := &corev1.ConfigMap{}
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		if err := yaml.UnmarshalStrict(data, cm); err != nil {
			return nil, fmt.Errorf("%s is not a ConfigMap: %w", path, err)
		}
		return injector.TemplateFromConfigMap(cm)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("no --template, and no cluster to read the ConfigMap from: %w", err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	if namespace == "" {
		if namespace, err = command.Namespace(kubeconfig); err != nil {
			return nil, err
		}
	}
	if cm, err = client.CoreV1().ConfigMaps(namespace).Get(context.Background(), name, metav1.GetOptions{}); err != nil {
		return nil, fmt.Errorf("reading the template: %w", err)
	}
	return injector.TemplateFromConfigMap(cm)
}
