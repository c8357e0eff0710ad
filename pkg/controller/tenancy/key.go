package tenancy

import (
	"fmt"

	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
)

// Key names a credential: a cloud of a Secret of a namespace. The zero
// Key is the controller's own cloud.
type Key struct {
	Namespace, Secret, Cloud string
}

// KeyOf is the credential network uses.
func KeyOf(network *samplecrdv2.Network) Key {
	ref := network.Spec.CloudCredentialsRef
	if ref == nil {
		return Key{}
	}
	return Key{Namespace: network.Namespace, Secret: ref.SecretName, Cloud: ref.CloudName}
}

// Holder is the namespace that holds the credential, "" for the
// controller's own cloud.
func (k Key) Holder() string { return k.Namespace }

func (k Key) String() string {
	if k == (Key{}) {
		return "the controller's cloud"
	}
	return fmt.Sprintf("cloud %q of Secret %s/%s", k.Cloud, k.Namespace, k.Secret)
}
