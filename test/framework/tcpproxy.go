package framework

import (
	"fmt"
	"net"
	"net/url"
	"sync"

	"k8s.io/client-go/rest"
)

// TCPProxy forwards TCP connections to a server and can cut them off
// without closing them: a network partition between one client and the
// server, as a firewall that drops packets makes it. TLS passes through
// untouched, so it stands in front of kube-apiserver for one replica while
// the others reach it directly.
type TCPProxy struct {
	// Addr is host:port to dial in place of the server's.
	Addr string

	target string
	ln     net.Listener

	mu     sync.Mutex
	healed chan struct{} // closed while bytes flow
	conns  []net.Conn
}

// StartTCPProxy starts a proxy to target (host:port) on a free loopback
// port, until Close.
func StartTCPProxy(target string) (*TCPProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &TCPProxy{Addr: ln.Addr().String(), target: target, ln: ln, healed: make(chan struct{})}
	close(p.healed)
	go p.accept()
	return p, nil
}

// Partition stops every byte in both directions, on open connections and
// new ones, until Heal. Nothing is closed or refused: the client sees a
// server that stopped answering, and learns it only from its timeouts.
func (p *TCPProxy) Partition() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.healed:
		p.healed = make(chan struct{})
	default: // already partitioned
	}
}

// Heal lets the bytes held since Partition, and all later ones, through.
func (p *TCPProxy) Heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.healed:
	default:
		close(p.healed)
	}
}

// Close stops the proxy and closes its connections.
func (p *TCPProxy) Close() error {
	err := p.ln.Close()
	p.Heal()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		_ = c.Close()
	}
	return err
}

func (p *TCPProxy) accept() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.serve(client)
	}
}

func (p *TCPProxy) serve(client net.Conn) {
	p.wait()
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		_ = client.Close()
		return
	}
	p.mu.Lock()
	p.conns = append(p.conns, client, server)
	p.mu.Unlock()
	go p.pipe(server, client)
	p.pipe(client, server)
}

// pipe copies from src to dst, holding each chunk while partitioned.
func (p *TCPProxy) pipe(dst, src net.Conn) {
	defer func() { _ = dst.Close(); _ = src.Close() }()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.wait()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return // EOF or a closed connection: the other side is told by the deferred closes
		}
	}
}

// wait returns once bytes may flow.
func (p *TCPProxy) wait() {
	p.mu.Lock()
	healed := p.healed
	p.mu.Unlock()
	<-healed
}

// PartitionableKubeconfig starts a TCPProxy in front of config's API
// server and writes to path a kubeconfig (user "admin") that reaches it
// through the proxy: one client's own way to the API server, which a test
// can cut (Partition) while every other client still gets through.
func PartitionableKubeconfig(config *rest.Config, path string) (*TCPProxy, error) {
	server, err := url.Parse(config.Host)
	if err != nil {
		return nil, fmt.Errorf("parsing the API server's address: %w", err)
	}
	proxy, err := StartTCPProxy(server.Host)
	if err != nil {
		return nil, err
	}
	proxied := rest.CopyConfig(config)
	proxied.Host = "https://" + proxy.Addr
	if err := WriteKubeconfig(proxied, "admin", path); err != nil {
		_ = proxy.Close()
		return nil, err
	}
	return proxy, nil
}
