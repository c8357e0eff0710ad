package tenancy

// Share is key's share of the list rate of the project its credential
// reaches (inventory.Options.Share): the number of namespaces whose
// credentials reach that project, times the number of key's namespace's
// credentials that do. The project is compared by ID alone, not by the
// whole place: another spelling of Keystone's URL, or another interface
// or region of the catalog, reaches the same project, and must not buy a
// pace of its own. Each credential spaces its lists that many times
// wider, so the place is listed no more often than by one credential,
// each namespace of it gets an equal part of that, and a namespace that
// names more credentials splits its own part, never another's. The own
// project, and a credential not built, have a share of 1: the own
// credential is one, whichever project it reaches.
func (r *Registry) Share(key Key) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.tenants[key]
	if !ok || !t.built {
		return 1
	}
	namespaces, own := map[string]bool{}, 0
	for k, other := range r.tenants {
		if !other.built || other.place.ProjectID != t.place.ProjectID {
			continue
		}
		namespaces[k.Namespace] = true
		if k.Namespace == key.Namespace {
			own++
		}
	}
	return len(namespaces) * own
}
