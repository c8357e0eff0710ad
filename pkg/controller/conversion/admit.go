package conversion

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"

	v1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	v2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/generated/clientset/versioned/scheme"
)

// errNoStore is a v1 Network that carries v1.SubnetsAnnotation, met by a
// webhook that cannot read the API server: it cannot be checked, so it is
// not converted.
var errNoStore = errors.New("this webhook reads no API server, so it cannot check it against v2's schema")

// fromV1 converts, with what st reads of the API server, a v1 Network
// that carries v1.SubnetsAnnotation to v2, as
// the API server would accept it from a v2 writer, or refuses it. The API
// server validates a v1 write against v1's schema only, where the
// annotation is a string; what the annotation adds (the other subnets) is
// stored as v2 as it converts. So the converted Network is held to v2's
// schema as the API server would hold a v2 update of the stored Network
// (its CEL transition rules, the immutable fields, included), and its
// status is the stored status: a writer of spec changes no status.
//
// A Network without the annotation needs none of this: v1's schema saw
// every field it converts to.
func fromV1(ctx context.Context, st Stored, in *v1.Network) (*v2.Network, error) {
	if st == nil {
		return nil, errNoStore
	}
	stored, err := st.Network(ctx, in.Namespace, in.Name)
	if err != nil {
		return nil, err
	}
	if stored != nil && stored.UID != in.UID {
		// Deleted and made again since: this is a create.
		stored = nil
	}
	kept, err := v1.KeepStoredStatus(in, stored)
	if err != nil {
		return nil, err
	}
	out := &v2.Network{}
	if err := scheme.Scheme.Convert(kept, out, nil); err != nil {
		return nil, err
	}
	out.SetGroupVersionKind(v2.SchemeGroupVersion.WithKind("Network"))
	if err := checkV2(ctx, st, out, stored); err != nil {
		return nil, fmt.Errorf("what annotation %s adds is not a v2 Network the API server accepts: %w", v1.SubnetsAnnotation, err)
	}
	return out, nil
}

// checkV2 is the API server's validation of an update from old (nil for a
// create) to n, both v2, against the installed CRD's v2 schema (st's).
func checkV2(ctx context.Context, st Stored, n, old *v2.Network) error {
	schema, err := st.Schema(ctx)
	if err != nil {
		return err
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(n)
	if err != nil {
		return err
	}
	schema.Default(obj)
	var oldObj map[string]any
	if old != nil {
		old = old.DeepCopy()
		old.SetGroupVersionKind(v2.SchemeGroupVersion.WithKind("Network"))
		if oldObj, err = runtime.DefaultUnstructuredConverter.ToUnstructured(old); err != nil {
			return err
		}
		schema.Default(oldObj)
	}
	if errs := schema.Validate(ctx, obj, oldObj); len(errs) > 0 {
		return errs.ToAggregate()
	}
	return nil
}
