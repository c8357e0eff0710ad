package framework

import (
	"fmt"
	"net"
)

// FreePorts returns n distinct free loopback TCP ports. They are free when
// this returns; stacks started side by side (a second CI run, the local
// stack and a test) therefore do not clash on fixed ports.
func FreePorts(n int) ([]int, error) {
	// Hold every listener until all are chosen so the kernel cannot hand
	// out the same port twice.
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
