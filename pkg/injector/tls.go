package injector

import (
	"crypto/tls"
	"fmt"
	"os"
	"sync"
	"time"
)

// CertificateFiles serves a certificate and key from files, reloading them
// when either file changes (cert-manager or a rotation script rewrites them
// in place; the webhook keeps serving without a restart).
type CertificateFiles struct {
	CertFile, KeyFile string

	mu      sync.Mutex
	modTime time.Time
	cert    *tls.Certificate
}

// GetCertificate is for tls.Config.GetCertificate.
func (c *CertificateFiles) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	latest, err := latestModTime(c.CertFile, c.KeyFile)
	if err != nil {
		return nil, err
	}
	if c.cert == nil || !latest.Equal(c.modTime) {
		cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
		if err != nil {
			if c.cert != nil {
				// A rotation caught half-written: keep serving the old pair.
				return c.cert, nil
			}
			return nil, fmt.Errorf("loading the serving certificate: %w", err)
		}
		c.cert, c.modTime = &cert, latest
	}
	return c.cert, nil
}

func latestModTime(paths ...string) (time.Time, error) {
	var latest time.Time
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return time.Time{}, err
		}
		if st.ModTime().After(latest) {
			latest = st.ModTime()
		}
	}
	return latest, nil
}
