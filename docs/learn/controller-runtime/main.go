package main

import (
	"flag"
	"net/http"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
)

// main is the counterpart of the controller's main and Run: the manager
// holds the cache (the informers), the client, the leader election and
// the workers, and Start runs them all until a signal.
func main() {
	endpoint := flag.String("neutron-endpoint", "http://127.0.0.1:9696", "a Neutron API without authentication (noauth), as the local stack serves it")
	flag.Parse()
	ctrl.SetLogger(zap.New())
	log := ctrl.Log.WithName("network-controller-runtime")

	scheme := runtime.NewScheme()
	must(clientgoscheme.AddToScheme(scheme))
	must(samplecrdv1.AddToScheme(scheme))
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		Scheme:           scheme,
		LeaderElection:   true,
		LeaderElectionID: "network-controller-runtime",
	})
	must(err)
	service, err := neutron.NewNoAuthServiceClient(*endpoint, http.DefaultClient)
	must(err)
	client := neutron.NewGophercloud(service, neutron.Place{})
	mark, err := neutron.NewMark("controller-runtime-example", "00000000-0000-4000-8000-000000000000")
	must(err)
	must((&NetworkReconciler{Client: mgr.GetClient(), Neutron: client, Mark: mark}).SetupWithManager(mgr))
	log.Info("starting the manager")
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		log.Error(err, "the manager stopped")
		os.Exit(1)
	}
}

func must(err error) {
	if err != nil {
		ctrl.Log.Error(err, "setting up")
		os.Exit(1)
	}
}
