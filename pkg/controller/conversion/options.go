package conversion

import (
	"context"
	"errors"
	"net"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"

	"github.com/samplecrd/network-controller/pkg/component/serving"
)

// Options are the webhook's flags: the controller's (every replica serves
// it) and `network-controller conversion-webhook`'s alike.
type Options struct {
	// BindAddress, when set, serves the webhook there, over HTTPS with
	// the certificate of CertFile and KeyFile.
	BindAddress       string
	CertFile, KeyFile string
}

// AddFlags adds the webhook's flags to fs; served says who serves it.
func (o *Options) AddFlags(fs *pflag.FlagSet, served string) {
	fs.StringVar(&o.BindAddress, "conversion-bind-address", o.BindAddress, "Address of the Network CRD's conversion webhook (HTTPS, POST /convert), which the API server calls to serve Networks stored as samplecrd.k8s.io/v2 as v1 and the other way round. "+served)
	fs.StringVar(&o.CertFile, "conversion-tls-cert-file", o.CertFile, "Serving certificate (PEM) of the conversion webhook, signed by the CA of the CRD's caBundle; reloaded when it changes. Required with --conversion-bind-address.")
	fs.StringVar(&o.KeyFile, "conversion-tls-key-file", o.KeyFile, "Private key (PEM) of --conversion-tls-cert-file, reloaded when it changes.")
}

// Validate says what is missing: the certificate of an address, or the
// address of a certificate.
func (o *Options) Validate() error {
	if o.BindAddress != "" && (o.CertFile == "" || o.KeyFile == "") {
		return errors.New("--conversion-bind-address needs --conversion-tls-cert-file and --conversion-tls-key-file: the API server calls a conversion webhook over HTTPS only, verified with the CRD's caBundle")
	}
	if o.BindAddress == "" && (o.CertFile != "" || o.KeyFile != "") {
		return errors.New("--conversion-tls-cert-file and --conversion-tls-key-file serve the conversion webhook, which --conversion-bind-address turns on: give it too")
	}
	return nil
}

// Serve serves the webhook at BindAddress until ctx ends, and nothing when
// that is empty. Its certificate is CertFile's, followed as its Secret is
// renewed (cert-manager, the chart's own), as the injector's is. It reads
// the API server of cfg to check a v1 write against v2's schema
// (APIServer). It returns the address it listens on, nil when it serves
// none.
func (o *Options) Serve(ctx context.Context, cfg *rest.Config) (net.Addr, error) {
	if o.BindAddress == "" {
		return nil, nil
	}
	tlsConfig, err := serving.FileTLS(ctx, o.CertFile, o.KeyFile, nil)
	if err != nil {
		return nil, err
	}
	stored, err := NewAPIServer(cfg)
	if err != nil {
		return nil, err
	}
	return Serve(ctx, o.BindAddress, tlsConfig, stored)
}
