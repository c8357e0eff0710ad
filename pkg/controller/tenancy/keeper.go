package tenancy

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/controller/neutron"
)

// Keeper keeps a copy of every credential that Networks are made with, so
// that they can always be deleted. A namespace being deleted removes its
// Secret and the Role and RoleBinding that let the controller read it, in
// no order anyone chooses; a restart, a new leader, or the registry
// letting the credential go (--max-cloud-credentials) would then find
// nothing to delete with, and the Networks would keep their finalizers
// (and the namespace its Terminating state) for ever, or lose their
// Neutron resources if someone removed the finalizers by hand. A copy is
// written before anything is made with the credential, and read only for
// a Network that is being deleted.
//
// A copy is bound to the place its credential reaches (neutron.Place):
// credentials that come to reach another place never overwrite it, so
// that a Secret pointed at another project or region cannot take from the
// Networks made with the first the one credential that can still delete
// them.
type Keeper interface {
	// Keep stores data, which reaches place, as key's credential, when it
	// is not already kept; a *neutron.CredentialsError, and nothing
	// written, when the copy kept reaches another place.
	Keep(ctx context.Context, key Key, data []byte, place neutron.Place) error
	// Kept returns key's kept credential and its place (zero for a copy
	// kept before places were); ok is false when none is.
	Kept(ctx context.Context, key Key) (data []byte, place neutron.Place, ok bool, err error)
	// Forget removes key's kept credential, if any.
	Forget(ctx context.Context, key Key) error
}

// SecretKeeper keeps each credential in a Secret of the controller's own
// namespace, named after a digest of its key: only the controller (and
// whoever administers its namespace, who administers the controller)
// reads it. It needs get, create, update and delete on Secrets of that
// namespace; never list or watch.
type SecretKeeper struct {
	Secrets   corev1client.SecretsGetter
	Namespace string
}

var _ Keeper = SecretKeeper{}

// keptPrefix begins the name of every kept Secret.
const keptPrefix = "network-controller-credentials-"

// KeptName is the name of the Secret that keeps key's credential.
func KeptName(key Key) string {
	sum := sha256.Sum256([]byte(key.Namespace + "/" + key.Secret + "/" + key.Cloud))
	return keptPrefix + hex.EncodeToString(sum[:10])
}

// placeAnnotation holds, as JSON, the place a kept copy's credential
// reaches.
const placeAnnotation = "samplecrd.k8s.io/place"

// Keep implements Keeper: one GET, and a write only when the kept copy is
// missing or differs (a password rotated in the same place).
func (k SecretKeeper) Keep(ctx context.Context, key Key, data []byte, place neutron.Place) error {
	secrets := k.Secrets.Secrets(k.Namespace)
	name := KeptName(key)
	placeJSON, err := json.Marshal(place)
	if err != nil {
		return fmt.Errorf("writing the place of %s: %w", key, err)
	}
	existing, err := secrets.Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		kept := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: k.Namespace,
				Labels: map[string]string{"app.kubernetes.io/managed-by": "network-controller"},
				Annotations: map[string]string{"samplecrd.k8s.io/credentials-of": key.Namespace + "/" + key.Secret + " cloud " + key.Cloud,
					placeAnnotation: string(placeJSON)}},
			Type: corev1.SecretTypeOpaque,
			Data: map[string][]byte{samplecrdv1.CloudsYAMLKey: data},
		}
		if _, err := secrets.Create(ctx, kept, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("keeping a copy of %s in Secret %s/%s: %w", key, k.Namespace, name, err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("reading the kept copy of %s: %w", key, err)
	}
	if kept, known := placeOf(existing); known && neutron.CheckPlace(kept, place) != nil {
		return movedError(key, kept, place)
	}
	if bytes.Equal(existing.Data[samplecrdv1.CloudsYAMLKey], data) && existing.Annotations[placeAnnotation] == string(placeJSON) {
		return nil
	}
	existing = existing.DeepCopy()
	existing.Data = map[string][]byte{samplecrdv1.CloudsYAMLKey: data}
	metav1.SetMetaDataAnnotation(&existing.ObjectMeta, placeAnnotation, string(placeJSON))
	if _, err := secrets.Update(ctx, existing, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("updating the kept copy of %s: %w", key, err)
	}
	return nil
}

// Kept implements Keeper.
func (k SecretKeeper) Kept(ctx context.Context, key Key) ([]byte, neutron.Place, bool, error) {
	s, err := k.Secrets.Secrets(k.Namespace).Get(ctx, KeptName(key), metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, neutron.Place{}, false, nil
	case err != nil:
		return nil, neutron.Place{}, false, fmt.Errorf("reading the kept copy of %s: %w", key, err)
	}
	data, ok := s.Data[samplecrdv1.CloudsYAMLKey]
	place, _ := placeOf(s)
	return data, place, ok, nil
}

// placeOf is the place a kept copy records; known is false for a copy
// kept before places were, or one whose annotation does not parse.
func placeOf(kept *corev1.Secret) (_ neutron.Place, known bool) {
	var place neutron.Place
	value, ok := kept.Annotations[placeAnnotation]
	if !ok || json.Unmarshal([]byte(value), &place) != nil {
		return neutron.Place{}, false
	}
	return place, true
}

// movedError refuses credentials of key that reach now, where the copy
// kept for deletions reaches kept: the Networks made with it are there.
func movedError(key Key, kept, now neutron.Place) error {
	return &neutron.CredentialsError{Reason: fmt.Sprintf(
		"the credentials of %s now reach %s, but the Networks made with them are in %s: put back credentials of that place; "+
			"nothing was changed, and the copy kept for their deletion still reaches it", key, now, kept)}
}

// Forget implements Keeper.
func (k SecretKeeper) Forget(ctx context.Context, key Key) error {
	err := k.Secrets.Secrets(k.Namespace).Delete(ctx, KeptName(key), metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("removing the kept copy of %s: %w", key, err)
	}
	return nil
}
