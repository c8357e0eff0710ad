// Command etcdctl is etcd's own client, built from its Go module, for
// looking at what the API server stores (docs/api-organisation.md).
package main

import (
	"go.etcd.io/etcd/etcdctl/v3/ctlv3"
)

func main() {
	ctlv3.MustStart()
}
