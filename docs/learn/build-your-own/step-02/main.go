// Command greeting-controller, step 2 of docs/learn/13-build-your-own.md:
// a main that connects to the API server and lists the Greetings, once.
// Steps 3 to 9 turn the list into a controller.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	clientset "example.com/greeting/generated/clientset/versioned"
)

func main() {
	klog.InitFlags(nil)
	kubeconfig := flag.String("kubeconfig", "", "Path to a kubeconfig; empty means in-cluster.")
	flag.Parse()

	// SIGINT or SIGTERM ends the context, and every request made with it.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *kubeconfig, os.Stdout); err != nil {
		klog.ErrorS(err, "greeting-controller stopped")
		os.Exit(1)
	}
}

// run connects to the API server and prints every Greeting to out.
func run(ctx context.Context, kubeconfig string, out io.Writer) error {
	// An empty kubeconfig path means the Pod's ServiceAccount (in-cluster).
	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return fmt.Errorf("building the client configuration: %w", err)
	}
	greetingClient, err := clientset.NewForConfig(config)
	if err != nil {
		return fmt.Errorf("building the Greeting clientset: %w", err)
	}
	// "" is every namespace. A controller never lists in a loop: step 3
	// lists once and then watches, with an informer.
	list, err := greetingClient.TutorialV1().Greetings("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing Greetings: %w", err)
	}
	for _, g := range list.Items {
		fmt.Fprintf(out, "%s/%s: %s\n", g.Namespace, g.Name, g.Spec.Message)
	}
	return nil
}
