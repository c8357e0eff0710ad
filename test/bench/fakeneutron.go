package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/util/uuid"
)

// fakeNeutron answers the part of Neutron's networking API the controller
// uses, from memory, for runs at N beyond what neutron-server makes in a
// session (a network and subnet take it about 0.2 s each): -fake-neutron,
// at 100,000 Networks. It behaves as neutron-server does where the
// controller can tell: lists filter on the exact description and page with
// limit, marker and a "next" link, sorted by ID, and on an exact id; a
// create gets an ID and echoes what was sent; an update merges; every
// change raises a revision_number, a subnet's its network's too, and an
// update's or a delete's If-Match must name it; a delete of a network
// takes its subnets; a missing resource is a 404. Everything else is left
// out: ports, pools, quotas, overlap checks.
type fakeNeutron struct {
	URL string

	mu sync.Mutex
	// resources holds networks and subnets by kind ("networks",
	// "subnets"), each by ID, as the JSON objects Neutron would return.
	resources map[string]map[string]map[string]any
}

// startFakeNeutron serves a fakeNeutron on a free loopback port until the
// process ends.
func startFakeNeutron() (*fakeNeutron, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	f := &fakeNeutron{URL: "http://" + ln.Addr().String() + "/",
		resources: map[string]map[string]map[string]any{"networks": {}, "subnets": {}}}
	go func() {
		if err := http.Serve(ln, f); err != nil && !errors.Is(err, net.ErrClosed) {
			panic(err)
		}
	}()
	return f, nil
}

func (f *fakeNeutron) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.Trim(strings.TrimPrefix(r.URL.Path, "/v2.0"), "/"), "/")
	kind := parts[0]
	if _, ok := f.resources[kind]; !ok || len(parts) > 2 {
		neutronError(w, http.StatusNotFound, "HTTPNotFound", "The resource could not be found.")
		return
	}
	id := ""
	if len(parts) == 2 {
		id = parts[1]
	}
	switch {
	case r.Method == http.MethodGet && id == "":
		f.list(w, r, kind)
	case r.Method == http.MethodGet:
		f.get(w, kind, id)
	case r.Method == http.MethodPost && id == "":
		f.create(w, r, kind)
	case r.Method == http.MethodPut && id != "":
		f.update(w, r, kind, id)
	case r.Method == http.MethodDelete && id != "":
		f.delete(w, r, kind, id)
	default:
		neutronError(w, http.StatusMethodNotAllowed, "HTTPMethodNotAllowed", r.Method+" is not allowed here")
	}
}

// singular is the key of one resource in a request or answer body.
func singular(kind string) string { return strings.TrimSuffix(kind, "s") }

// title is "network" as Neutron's error types spell it: "Network".
func title(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

func (f *fakeNeutron) list(w http.ResponseWriter, r *http.Request, kind string) {
	q := r.URL.Query()
	limit, _ := strconv.Atoi(q.Get("limit"))
	f.mu.Lock()
	candidates := f.resources[kind]
	if want := q.Get("id"); want != "" {
		// An exact ID (GetNetwork's list) is one lookup, not a scan of
		// 100,000.
		candidates = map[string]map[string]any{}
		if o, ok := f.resources[kind][want]; ok {
			candidates[want] = o
		}
	}
	var ids []string
	for id, o := range candidates {
		if d, ok := q["description"]; ok && o["description"] != d[0] {
			continue
		}
		if p := q.Get("project_id"); p != "" && o["project_id"] != p {
			continue
		}
		ids = append(ids, id)
	}
	slices.Sort(ids)
	if marker := q.Get("marker"); marker != "" {
		i, _ := slices.BinarySearch(ids, marker)
		for i < len(ids) && ids[i] <= marker {
			i++
		}
		ids = ids[i:]
	}
	full := limit > 0 && len(ids) >= limit
	if full {
		ids = ids[:limit]
	}
	page := make([]map[string]any, 0, len(ids))
	for _, id := range ids {
		page = append(page, f.resources[kind][id])
	}
	body := map[string]any{kind: page}
	if full {
		// As Neutron: a full page links to the next, which may be empty.
		next := *r.URL
		nq := next.Query()
		nq.Set("marker", ids[len(ids)-1])
		next.RawQuery = nq.Encode()
		body[kind+"_links"] = []map[string]string{{"rel": "next", "href": strings.TrimSuffix(f.URL, "/") + next.RequestURI()}}
	}
	data, err := json.Marshal(body)
	f.mu.Unlock()
	if err != nil {
		neutronError(w, http.StatusInternalServerError, "HTTPInternalServerError", err.Error())
		return
	}
	writeJSON(w, http.StatusOK, data)
}

func (f *fakeNeutron) get(w http.ResponseWriter, kind, id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	o, ok := f.find(w, kind, id)
	if !ok {
		return
	}
	answer(w, http.StatusOK, kind, o)
}

func (f *fakeNeutron) create(w http.ResponseWriter, r *http.Request, kind string) {
	var body map[string]map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body[singular(kind)] == nil {
		neutronError(w, http.StatusBadRequest, "BadRequest", fmt.Sprintf("no %s in the body: %v", singular(kind), err))
		return
	}
	o := body[singular(kind)]
	o["id"] = string(uuid.NewUUID())
	o["project_id"] = "bench"
	o["revision_number"] = 1
	f.mu.Lock()
	defer f.mu.Unlock()
	if kind == "subnets" {
		network, ok := f.resources["networks"][fmt.Sprint(o["network_id"])]
		if !ok {
			neutronError(w, http.StatusNotFound, "NetworkNotFound", fmt.Sprintf("Network %v could not be found.", o["network_id"]))
			return
		}
		network["subnets"] = append(network["subnets"].([]any), o["id"])
		revise(network)
	} else {
		o["subnets"] = []any{}
		o["status"] = "ACTIVE"
		if _, ok := o["mtu"]; !ok {
			o["mtu"] = 1442 // ML2/OVN's default with Geneve
		}
	}
	f.resources[kind][o["id"].(string)] = o
	answer(w, http.StatusCreated, kind, o)
}

func (f *fakeNeutron) update(w http.ResponseWriter, r *http.Request, kind, id string) {
	var body map[string]map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body[singular(kind)] == nil {
		neutronError(w, http.StatusBadRequest, "BadRequest", fmt.Sprintf("no %s in the body: %v", singular(kind), err))
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	o, ok := f.find(w, kind, id)
	if !ok || refusedIfMatch(w, r, o) {
		return
	}
	for k, v := range body[singular(kind)] {
		o[k] = v
	}
	revise(o)
	if network, ok := f.resources["networks"][fmt.Sprint(o["network_id"])]; ok && kind == "subnets" {
		revise(network)
	}
	answer(w, http.StatusOK, kind, o)
}

func (f *fakeNeutron) delete(w http.ResponseWriter, r *http.Request, kind, id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	o, ok := f.find(w, kind, id)
	if !ok || refusedIfMatch(w, r, o) {
		return
	}
	if kind == "networks" {
		for _, s := range o["subnets"].([]any) {
			delete(f.resources["subnets"], s.(string))
		}
	} else if network, ok := f.resources["networks"][fmt.Sprint(o["network_id"])]; ok {
		network["subnets"] = slices.DeleteFunc(network["subnets"].([]any), func(s any) bool { return s == id })
		revise(network)
	}
	delete(f.resources[kind], id)
	w.WriteHeader(http.StatusNoContent)
}

// refusedIfMatch answers 412, as neutron-server does, and reports true
// when r is sent If-Match on a revision o is no longer at.
func refusedIfMatch(w http.ResponseWriter, r *http.Request, o map[string]any) bool {
	match := r.Header.Get("If-Match")
	if match == "" || match == fmt.Sprintf("revision_number=%v", o["revision_number"]) {
		return false
	}
	neutronError(w, http.StatusPreconditionFailed, "RevisionNumberConstraintFailed",
		fmt.Sprintf("Constrained to %s, but current revision is %v", strings.TrimPrefix(match, "revision_number="), o["revision_number"]))
	return true
}

// revise raises o's revision_number, as every change of it, or of a
// subnet on a network, does in Neutron. Called with f.mu held.
func revise(o map[string]any) { o["revision_number"] = o["revision_number"].(int) + 1 }

// find returns the resource kind/id, or answers 404 as Neutron does.
// Called with f.mu held.
func (f *fakeNeutron) find(w http.ResponseWriter, kind, id string) (map[string]any, bool) {
	o, ok := f.resources[kind][id]
	if !ok {
		neutronError(w, http.StatusNotFound, title(singular(kind))+"NotFound", fmt.Sprintf("%s %s could not be found.", singular(kind), id))
	}
	return o, ok
}

// answer writes one resource as Neutron does: {"network": {...}}.
func answer(w http.ResponseWriter, code int, kind string, o map[string]any) {
	data, err := json.Marshal(map[string]any{singular(kind): o})
	if err != nil {
		neutronError(w, http.StatusInternalServerError, "HTTPInternalServerError", err.Error())
		return
	}
	writeJSON(w, code, data)
}

// neutronError writes Neutron's error body.
func neutronError(w http.ResponseWriter, code int, typ, message string) {
	data, _ := json.Marshal(map[string]any{"NeutronError": map[string]string{"type": typ, "message": message, "detail": ""}})
	writeJSON(w, code, data)
}

func writeJSON(w http.ResponseWriter, code int, data []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(data)
}
