package framework

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/controller/conversion"
	clientset "github.com/samplecrd/network-controller/pkg/generated/clientset/versioned"
)

// NetworkCRD is the name of the Network CustomResourceDefinition.
const NetworkCRD = "networks.samplecrd.k8s.io"

// UseConversionWebhook sets the Network CRD's spec.conversion, which
// artifacts/crd points at the in-cluster Service (which a cluster of the
// tests has no Pod behind), to the conversion webhook at url
// (https://HOST:PORT/convert), trusted through the CA caPEM: what the
// controller's --conversion-bind-address serves, and hack/local-run.sh
// patches for `make run`. The one place the tests turn the webhook on.
// The API server applies the change to its handlers shortly after: read
// a v2 object through v1 until it converts before relying on it.
func UseConversionWebhook(ctx context.Context, config *rest.Config, url string, caPEM []byte) error {
	client, err := apiextensionsclient.NewForConfig(config)
	if err != nil {
		return err
	}
	crds := client.ApiextensionsV1().CustomResourceDefinitions()
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		crd, err := crds.Get(ctx, NetworkCRD, metav1.GetOptions{})
		if err != nil {
			return err
		}
		crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{
			Strategy: apiextensionsv1.WebhookConverter,
			Webhook: &apiextensionsv1.WebhookConversion{
				ClientConfig:             &apiextensionsv1.WebhookClientConfig{URL: ptr.To(url), CABundle: caPEM},
				ConversionReviewVersions: []string{"v1"},
			},
		}
		if _, err := crds.Update(ctx, crd, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("setting the conversion webhook of CRD %s: %w", NetworkCRD, err)
		}
		return nil
	})
}

// ConversionWebhook is pkg/controller/conversion's handler served by the
// test process itself on 127.0.0.1, for every control plane of a stack
// (Options.ConversionWebhook). The e2e tests start and stop their own
// controllers, each for one test, so no controller lives as long as the
// stack: the webhook that the CRD points at must outlive them all, or a
// v1 read between two tests would fail. The handler is the one the
// controller's --conversion-bind-address serves, so the suite converts
// exactly as a cluster does.
type ConversionWebhook struct {
	// URL is what the CRD calls: https://127.0.0.1:PORT/convert.
	URL string
	// CAPEM is the CA the API server trusts the webhook's certificate by.
	CAPEM []byte

	stop context.CancelFunc
}

// ServeConversionWebhook makes a serving certificate for 127.0.0.1 under
// dir and serves the conversion webhook with it on a free loopback port
// until Stop, for the cluster of config: what a v1 write carries is
// checked against that cluster's stored Networks and CRD, as a
// controller's webhook checks it against its own cluster's.
func ServeConversionWebhook(ctx context.Context, dir string, config *rest.Config) (*ConversionWebhook, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	cert, err := NewServingCertificate(dir, []net.IP{net.ParseIP("127.0.0.1")}, nil)
	if err != nil {
		return nil, fmt.Errorf("making the conversion webhook's certificate: %w", err)
	}
	pair, err := tls.LoadX509KeyPair(cert.CertFile, cert.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("loading the conversion webhook's certificate: %w", err)
	}
	// The webhook serves until Stop, not until ctx (often a start-up
	// deadline) ends.
	stored, err := conversion.NewAPIServer(config)
	if err != nil {
		return nil, err
	}
	serveCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	addr, err := conversion.Serve(serveCtx, "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}, stored)
	if err != nil {
		stop()
		return nil, err
	}
	return &ConversionWebhook{URL: "https://" + addr.String() + conversion.Path, CAPEM: cert.CAPEM, stop: stop}, nil
}

// Stop stops serving.
func (w *ConversionWebhook) Stop() { w.stop() }

// Use points cp's Network CRD at the webhook and returns once the API
// server converts through it: a dual-stack v2 Network, made for the
// purpose in kube-system and deleted after, reads through v1 with its
// first subnet at the top (without conversion it would read with none).
func (w *ConversionWebhook) Use(ctx context.Context, cp *ControlPlane) error {
	if err := UseConversionWebhook(ctx, cp.AdminConfig, w.URL, w.CAPEM); err != nil {
		return err
	}
	nc, err := clientset.NewForConfig(cp.AdminConfig)
	if err != nil {
		return err
	}
	const ns, name = metav1.NamespaceSystem, "conversion-probe"
	probe := &samplecrdv2.Network{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       samplecrdv2.NetworkSpec{Subnets: []samplecrdv2.SubnetSpec{{CIDR: "10.255.255.0/24"}, {CIDR: "fd00:ffff::/64"}}},
	}
	if _, err := nc.SamplecrdV2().Networks(ns).Create(ctx, probe, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating the conversion probe: %w", err)
	}
	var last string
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		n, err := nc.SamplecrdV1().Networks(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		last = fmt.Sprintf("read through v1 with spec.cidr %q", n.Spec.CIDR)
		return n.Spec.CIDR == probe.Spec.Subnets[0].CIDR, nil
	})
	if err != nil {
		return fmt.Errorf("the API server does not convert through %s: %s: %w", w.URL, last, err)
	}
	if err := nc.SamplecrdV2().Networks(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		return fmt.Errorf("deleting the conversion probe: %w", err)
	}
	return nil
}

// ForgetConversionWebhook points the Network CRD of config back at the
// in-cluster Service that artifacts/crd names, as a cluster admin's
// `kubectl apply` of it expects to find it: a client-side apply merges its
// Service into the url UseConversionWebhook set, and the API server refuses
// a webhook with both. Until Use again, v1 requests are refused.
func ForgetConversionWebhook(ctx context.Context, config *rest.Config) error {
	client, err := apiextensionsclient.NewForConfig(config)
	if err != nil {
		return err
	}
	patch := []byte(`{"spec":{"conversion":{"webhook":{"clientConfig":{"url":null,"caBundle":null,"service":{"namespace":"network-controller-system","name":"network-controller-conversion","path":"/convert"}}}}}}`)
	if _, err := client.ApiextensionsV1().CustomResourceDefinitions().Patch(ctx, NetworkCRD, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("pointing CRD %s back at its Service: %w", NetworkCRD, err)
	}
	return nil
}
