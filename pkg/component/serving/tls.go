package serving

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"

	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	certutil "k8s.io/client-go/util/cert"
)

// FileTLS serves the certificate and key in certFile and keyFile, and
// follows them when they change (a rotated Secret, cert-manager): with
// kube-apiserver's own machinery, which watches the files and re-reads them
// every minute, and hands each new connection the latest valid pair. A
// pair caught half-written is refused and the previous one kept. Both
// programs load their serving certificate with it. onLoad, when not nil,
// is told of each certificate loaded, the first one included (the
// injector publishes its expiry).
func FileTLS(ctx context.Context, certFile, keyFile string, onLoad func(*x509.Certificate)) (*tls.Config, error) {
	content, err := dynamiccertificates.NewDynamicServingContentFromFiles("serving-cert", certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("loading the serving certificate: %w", err)
	}
	base := &tls.Config{MinVersion: tls.VersionTLS12}
	certs := dynamiccertificates.NewDynamicServingCertificateController(base, nil, content, nil, nil)
	content.AddListener(certs)
	if onLoad != nil {
		content.AddListener(loaded{content, onLoad})
	}
	if err := certs.RunOnce(); err != nil {
		return nil, fmt.Errorf("loading the serving certificate: %w", err)
	}
	if onLoad != nil {
		loaded{content, onLoad}.Enqueue()
	}
	go content.Run(ctx, 1)
	go certs.Run(1, ctx.Done())
	return &tls.Config{MinVersion: tls.VersionTLS12, GetConfigForClient: certs.GetConfigForClient}, nil
}

// loaded is a dynamiccertificates listener that hands the certificate
// content holds to notify whenever content loads one.
type loaded struct {
	content dynamiccertificates.CertKeyContentProvider
	notify  func(*x509.Certificate)
}

// Enqueue is called by content after each load.
func (l loaded) Enqueue() {
	certPEM, _ := l.content.CurrentCertKeyContent()
	if block, _ := pem.Decode(certPEM); block != nil {
		if cert, err := x509.ParseCertificate(block.Bytes); err == nil {
			l.notify(cert)
		}
	}
}

// SelfSignedTLS is a TLS configuration with a certificate made now for
// host and signed by itself: what kube-controller-manager serves when it
// is given none. No client can verify it (no CA exists to trust), so a
// client that sends a token to it sends it to whatever answers at the
// address; serve a certificate from files (FileTLS) wherever that matters.
func SelfSignedTLS(host string) (*tls.Config, error) {
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey(host, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("making a self-signed serving certificate: %w", err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("making a self-signed serving certificate: %w", err)
	}
	return &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{pair}}, nil
}
