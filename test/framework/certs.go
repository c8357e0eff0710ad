package framework

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// ServingCertificate is a throw-away CA and a serving certificate it
// signed, written as PEM files: what a webhook needs to be called by the
// API server (which trusts the CA through the webhook's caBundle).
type ServingCertificate struct {
	CAPEM             []byte
	CertFile, KeyFile string
}

// NewServingCertificate writes, under dir, a certificate for the given IP
// addresses and DNS names, valid for a day, and returns it with its CA.
func NewServingCertificate(dir string, ips []net.IP, dnsNames []string) (*ServingCertificate, error) {
	caPEM, certPEM, keyPEM, err := issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: "webhook"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: ips,
		DNSNames:    dnsNames,
	})
	if err != nil {
		return nil, err
	}
	sc := &ServingCertificate{CAPEM: caPEM, CertFile: filepath.Join(dir, "tls.crt"), KeyFile: filepath.Join(dir, "tls.key")}
	return sc, writeKeyPair(sc.CertFile, certPEM, sc.KeyFile, keyPEM)
}

// ClientCertificate is a throw-away CA and a client certificate it signed,
// written as PEM files.
type ClientCertificate struct {
	CAFile, CertFile, KeyFile string
}

// NewClientCertificate writes, under dir, a client certificate for the
// user cn in the groups orgs, valid for a day, and its CA.
func NewClientCertificate(dir, cn string, orgs []string) (*ClientCertificate, error) {
	caPEM, certPEM, keyPEM, err := issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: cn, Organization: orgs},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	if err != nil {
		return nil, err
	}
	cc := &ClientCertificate{CAFile: filepath.Join(dir, cn+"-ca.crt"), CertFile: filepath.Join(dir, cn+".crt"), KeyFile: filepath.Join(dir, cn+".key")}
	if err := os.WriteFile(cc.CAFile, caPEM, 0o644); err != nil {
		return nil, err
	}
	return cc, writeKeyPair(cc.CertFile, certPEM, cc.KeyFile, keyPEM)
}

// issue makes a CA valid for a day and has it sign leaf (filled in with a
// fresh key, serial number and validity), and returns both as PEM with the
// leaf's key.
func issue(leaf *x509.Certificate) (caPEM, certPEM, keyPEM []byte, _ error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	now := time.Now()
	caTemplate := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "network-controller test CA"},
		NotBefore:             now.Add(-time.Minute),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, nil, nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, nil, nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	leaf.SerialNumber = big.NewInt(now.UnixNano())
	leaf.NotBefore, leaf.NotAfter = now.Add(-time.Minute), now.Add(24*time.Hour)
	leaf.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, leaf, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), nil
}

func writeKeyPair(certFile string, certPEM []byte, keyFile string, keyPEM []byte) error {
	if err := os.WriteFile(certFile, certPEM, 0o644); err != nil {
		return err
	}
	return os.WriteFile(keyFile, keyPEM, 0o600)
}
