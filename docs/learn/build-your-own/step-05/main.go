// Command greeting-controller, step 5 of docs/learn/13-build-your-own.md:
// the sync publishes each Greeting's message in a ConfigMap.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	clientset "example.com/greeting/generated/clientset/versioned"
	informers "example.com/greeting/generated/informers/externalversions"
)

func main() {
	klog.InitFlags(nil)
	kubeconfig := flag.String("kubeconfig", "", "Path to a kubeconfig; empty means in-cluster.")
	workers := flag.Int("workers", 2, "Greetings synced at once.")
	flag.Parse()

	// SIGINT or SIGTERM ends the context: the informers and workers stop.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *kubeconfig, *workers); err != nil {
		klog.ErrorS(err, "greeting-controller stopped")
		os.Exit(1)
	}
}

// run connects to the API server, starts the informers and runs the
// controller until ctx ends.
func run(ctx context.Context, kubeconfig string, workers int) error {
	// An empty kubeconfig path means the Pod's ServiceAccount (in-cluster).
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return fmt.Errorf("building the client configuration: %w", err)
	}
	kubeClient, err := kubernetes.NewForConfig(config)
	if err != nil {
		return fmt.Errorf("building the Kubernetes clientset: %w", err)
	}
	greetingClient, err := clientset.NewForConfig(config)
	if err != nil {
		return fmt.Errorf("building the Greeting clientset: %w", err)
	}

	// One factory per clientset; every informer resyncs every 10 minutes.
	kubeInformers := kubeinformers.NewSharedInformerFactory(kubeClient, 10*time.Minute)
	greetingInformers := informers.NewSharedInformerFactory(greetingClient, 10*time.Minute)
	controller, err := NewController(kubeClient, greetingClient,
		greetingInformers.Tutorial().V1().Greetings(), kubeInformers.Core().V1().ConfigMaps())
	if err != nil {
		return err
	}

	// Start only after NewController asked for its informers.
	kubeInformers.Start(ctx.Done())
	greetingInformers.Start(ctx.Done())
	defer kubeInformers.Shutdown()
	defer greetingInformers.Shutdown()
	return controller.Run(ctx, workers)
}
