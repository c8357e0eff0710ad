// Command greeting-controller, step 4 of docs/learn/13-build-your-own.md:
// the informer's events queue keys, and workers take them off the queue.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

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
	greetingClient, err := clientset.NewForConfig(config)
	if err != nil {
		return fmt.Errorf("building the Greeting clientset: %w", err)
	}

	// The factory makes one informer per type asked of it; every informer
	// resyncs (hands every cached object to its handlers again) every 10 minutes.
	greetingInformers := informers.NewSharedInformerFactory(greetingClient, 10*time.Minute)
	controller, err := NewController(greetingInformers.Tutorial().V1().Greetings())
	if err != nil {
		return err
	}

	// Start only after NewController asked for its informers.
	greetingInformers.Start(ctx.Done())
	defer greetingInformers.Shutdown()
	return controller.Run(ctx, workers)
}
