// Command etcd is etcd v3 built from its Go module, so that the local stack
// and the e2e tests need no downloaded release binary.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
