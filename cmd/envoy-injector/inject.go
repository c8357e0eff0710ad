package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/samplecrd/network-controller/pkg/incluster"
	"github.com/samplecrd/network-controller/pkg/injector"
)

// inject is `envoy-injector inject`: the webhook's injection, offline, on
// manifests, like `istioctl kube-inject`.
func inject(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("envoy-injector inject", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.StringP("filename", "f", "", `Manifests to inject into: YAML or JSON, several documents and Lists; "-" is standard input. Pods and the pod templates of Deployments, StatefulSets, DaemonSets, ReplicaSets, Jobs and CronJobs that ask for the sidecar get it; everything else is written out unchanged.`)
	var source templateSource
	source.addFlags(fs)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: envoy-injector inject -f FILE [--template CONFIGMAP.yaml]\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *file == "" {
		fmt.Fprintln(stderr, "envoy-injector inject: -f (--filename) is required")
		return 2
	}
	tmpl, err := source.load()
	if err != nil {
		fmt.Fprintf(stderr, "envoy-injector inject: %v\n", err)
		return 1
	}
	in := io.Reader(os.Stdin)
	if *file != "-" {
		f, err := os.Open(*file)
		if err != nil {
			fmt.Fprintf(stderr, "envoy-injector inject: %v\n", err)
			return 1
		}
		defer f.Close()
		in = f
	}
	if _, err := injector.InjectManifests(in, stdout, tmpl); err != nil {
		fmt.Fprintf(stderr, "envoy-injector inject: %v\n", err)
		return 1
	}
	return 0
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
		if namespace, err = incluster.Namespace(kubeconfig); err != nil {
			return nil, err
		}
	}
	if cm, err = client.CoreV1().ConfigMaps(namespace).Get(context.Background(), name, metav1.GetOptions{}); err != nil {
		return nil, fmt.Errorf("reading the template: %w", err)
	}
	return injector.TemplateFromConfigMap(cm)
}
