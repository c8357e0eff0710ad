// Command pause is the local node's sandbox image (containerd's
// sandbox_image): no registry is reachable here, so the upstream pause
// image cannot be pulled. Like it, it sleeps as the Pod's PID 1, reaps
// orphaned children, and exits on SIGTERM or SIGINT. The e2e tests also use
// it as a stand-in for the Envoy sidecar's image.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for sig := range signals {
		if sig != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
