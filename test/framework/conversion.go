package framework

import (
	"context"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
)

// NetworkCRD is the name of the Network CustomResourceDefinition.
const NetworkCRD = "networks.samplecrd.k8s.io"

// UseConversionWebhook sets the Network CRD's spec.conversion, which
// artifacts/crd leaves at strategy None, to the conversion webhook at url
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
