package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/extensions/subnetpools"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	clientset "github.com/samplecrd/network-controller/pkg/generated/clientset/versioned"
	"github.com/samplecrd/network-controller/test/framework"
)

const (
	cluster = "soak"
	// slots is how many Networks may exist at once; slot i owns the
	// range 10.150.i.0/24, so Networks never overlap, and lives in
	// namespaces[i%2].
	slots = 40
	// leaseDuration is the replicas' --leader-elect-lease-duration.
	leaseDuration = 6 * time.Second
	// orphanGrace is the controllers' --orphan-grace-period: a resource
	// left without its Network (a create that completed after its Network
	// went) is collected only after two lists this far apart, so a leak is
	// a leak only once that has had time to happen.
	orphanGrace = 2 * time.Second
	// neutronResync is the controllers' --neutron-resync-period.
	neutronResync = 20 * time.Second
)

// poolName is the workload's subnet pool, in the controllers' project:
// 10.151.0.0/16, a /24 by default.
const poolName = "soak-pool"

// adoptee is a network and subnet made by hand for a Network to adopt,
// as they were made: releasing them (the adopted default, Orphan) must
// give them back exactly their own names and descriptions.
type adoptee struct {
	networkID, subnetID string
	name, description   string
}

// replicasRegion is the one Keystone region both replicas reach Neutron
// through.
const replicasRegion = "soak"

// namespaces are the workload's: one controller manages both.
var namespaces = [2]string{"soak", "soak-b"}

type soak struct {
	stack       *framework.Stack
	kube        kubernetes.Interface
	nc          clientset.Interface
	controllers []*framework.Process
	proxies     []*chaosProxy
	// router is the replicas' one network endpoint, which hands each
	// replica's requests to its proxy.
	router *replicaRouter
	// apiProxies are each replica's own way to the API server, which a
	// partition cuts for that replica alone.
	apiProxies []*framework.TCPProxy
	hist       *history
	// workload and faultRNG are two streams of the seed: each operation
	// draws four numbers and each fault its own, so how many operations
	// fit between two faults (the wall clock's business) changes neither
	// the faults nor the operations' draws.
	workload, faultRNG *rand.Rand
	ops, faults        map[string]int
	// restarts counts replicas that exited by themselves and were started again.
	restarts int
	// foreign holds what Neutron answered for each resource seeded that
	// is not ours, by its path: it must answer the same bytes at the end.
	foreign map[string]json.RawMessage
	// adoptees are the networks made by hand for Networks to adopt.
	adoptees []adoptee
}

// setUp builds the controller, seeds foreign resources in the controllers'
// project, and starts two replicas, each through its own chaos proxy to
// Neutron and its own TCP proxy to the API server.
func (s *soak) setUp(ctx context.Context, seed uint64) error {
	binary := filepath.Join(s.stack.Dir, "network-controller")
	build := exec.CommandContext(ctx, "go", "build", "-o", binary, ".")
	build.Dir = s.stack.RepoRoot
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("building the controller: %v\n%s", err, out)
	}
	for _, ns := range namespaces {
		if _, err := s.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	if err := s.seedForeign(ctx); err != nil {
		return err
	}
	if err := s.makePool(ctx); err != nil {
		return err
	}
	for i := range 2 {
		proxy, err := startChaosProxy(i, s.stack.Neutron.KeystoneEndpoint, s.hist, rand.New(rand.NewPCG(seed, seed^uint64(0xc4a05+i))))
		if err != nil {
			return err
		}
		s.proxies = append(s.proxies, proxy)
	}
	// The replicas share one place, as a Deployment's do: one region,
	// whose network endpoint routes each replica's requests to its own
	// proxy by its token's user.
	admin, err := s.stack.Keystone.AdminClient(ctx)
	if err != nil {
		return err
	}
	if s.router, err = startReplicaRouter(s.proxies, admin); err != nil {
		return err
	}
	if err := s.stack.Keystone.NetworkRegion(ctx, replicasRegion, s.router.URL); err != nil {
		return err
	}
	for i := range 2 {
		kubeconfig := filepath.Join(s.stack.Dir, fmt.Sprintf("soak-%d.kubeconfig", i))
		api, err := framework.PartitionableKubeconfig(s.stack.ControlPlane.AdminConfig, kubeconfig)
		if err != nil {
			return err
		}
		s.apiProxies = append(s.apiProxies, api)
		cloudsYAML, err := s.stack.Keystone.ControllerUserCloud(ctx, replicaHostname(i), replicasRegion)
		if err != nil {
			return err
		}
		c := replica(i, binary, kubeconfig, cloudsYAML, s.stack.Dir)
		if err := c.Start(); err != nil {
			return err
		}
		s.controllers = append(s.controllers, c)
	}
	return nil
}

// replica is controller replica i. It runs in a UTS namespace of its own
// with hostname replicaHostname(i), as a Pod has its own, so that the
// Lease's holder identity (hostname_uuid) says which replica leads.
func replica(i int, binary, kubeconfig, cloudsYAML, dir string) *framework.Process {
	args := []string{"--kubeconfig=" + kubeconfig, "--namespace=", "--cluster-name=" + cluster,
		"--os-cloud=" + framework.PasswordCloud, "--leader-elect-resource-namespace=default",
		"--leader-elect-lease-duration=" + leaseDuration.String(), "--leader-elect-renew-deadline=4s", "--leader-elect-retry-period=1s",
		"--health-probe-bind-address=0", "--metrics-bind-address=0", "--max-retry-delay=10s", "--neutron-timeout=10s",
		"--neutron-resync-period=" + neutronResync.String(), "--orphan-grace-period=" + orphanGrace.String()}
	return &framework.Process{
		Name:    fmt.Sprintf("controller-%d", i),
		Path:    "unshare",
		Args:    append([]string{"--uts", "--", "sh", "-c", `hostname "$0" && exec "$@"`, replicaHostname(i), binary}, args...),
		Env:     append(os.Environ(), "OS_CLIENT_CONFIG_FILE="+cloudsYAML),
		Dir:     dir,
		LogPath: filepath.Join(dir, fmt.Sprintf("controller-%d.log", i)),
	}
}

// seedForeign makes resources in the controllers' project that are not
// theirs: another tool's network, another cluster's with a Network's
// name, and a hand-made network with a subnet; and keeps what Neutron
// answers for each.
func (s *soak) seedForeign(ctx context.Context) error {
	s.foreign = map[string]json.RawMessage{}
	client := s.stack.Neutron.Client
	var handMade string
	for _, o := range []networks.CreateOpts{
		{Name: "k8s-clusterapi-cluster-default-foo", ProjectID: s.stack.Keystone.ProjectID},
		{Name: namespaces[0] + "/n-2/00000000-0000-0000-0000-000000000001", Description: "managed-by=network-controller,cluster=other", ProjectID: s.stack.Keystone.ProjectID},
		{Name: "hand-made", ProjectID: s.stack.Keystone.ProjectID},
	} {
		n, err := networks.Create(ctx, client, o).Extract()
		if err != nil {
			return fmt.Errorf("seeding a foreign network: %w", err)
		}
		s.foreign[client.ServiceURL("networks", n.ID)] = nil
		handMade = n.ID
	}
	sn, err := subnets.Create(ctx, client, subnets.CreateOpts{NetworkID: handMade, CIDR: "10.150.0.0/24", IPVersion: gophercloud.IPv4, ProjectID: s.stack.Keystone.ProjectID}).Extract()
	if err != nil {
		return fmt.Errorf("seeding a foreign subnet: %w", err)
	}
	s.foreign[client.ServiceURL("subnets", sn.ID)] = nil
	for url := range s.foreign {
		raw, err := s.readRaw(ctx, url)
		if err != nil {
			return err
		}
		s.foreign[url] = raw
	}
	return nil
}

// readRaw is Neutron's answer to a GET of url, as bytes.
func (s *soak) readRaw(ctx context.Context, url string) (json.RawMessage, error) {
	var raw json.RawMessage
	if _, err := s.stack.Neutron.Client.Get(ctx, url, &raw, nil); err != nil {
		return nil, fmt.Errorf("reading %s: %w", url, err)
	}
	return raw, nil
}

// supervise starts again every replica that has exited by itself.
func (s *soak) supervise() error {
	for _, c := range s.controllers {
		if !c.Exited() {
			continue
		}
		_ = c.Stop(0) // reaps what is left of its process group
		if err := c.Start(); err != nil {
			return err
		}
		s.restarts++
	}
	return nil
}

// watch samples the Lease every 200 ms and the Networks' status IDs every
// second into the history, until ctx ends. Failed reads (the API server
// restarting) are skipped: a gap in the samples only makes the checks
// know less.
func (s *soak) watch(ctx context.Context) {
	leaseTick, idTick := time.NewTicker(200*time.Millisecond), time.NewTicker(time.Second)
	defer leaseTick.Stop()
	defer idTick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-leaseTick.C:
			s.sampleLease(ctx)
		case <-idTick.C:
			s.sampleIDs(ctx)
		}
	}
}

func (s *soak) sampleLease(ctx context.Context) {
	sent := time.Now()
	lease, err := s.kube.CoordinationV1().Leases("default").Get(ctx, "network-controller", metav1.GetOptions{})
	if err != nil {
		return
	}
	identity := ""
	if lease.Spec.HolderIdentity != nil {
		identity = *lease.Spec.HolderIdentity
	}
	s.hist.recordLease(leaseSample{sent: sent, answered: time.Now(), holder: replicaOf(identity), identity: identity})
}

func (s *soak) sampleIDs(ctx context.Context) {
	list, err := s.nc.SamplecrdV1().Networks("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	now := time.Now()
	for _, n := range list.Items {
		s.hist.recordIDs(n.UID, idSighting{at: now, name: n.Namespace + "/" + n.Name, generation: n.Generation,
			network: n.Status.NetworkID, subnet: n.Status.SubnetID})
	}
}

// leader is the replica the latest Lease sample names, -1 for none.
func (s *soak) leader() int {
	s.hist.mu.Lock()
	defer s.hist.mu.Unlock()
	if n := len(s.hist.samples); n > 0 {
		return s.hist.samples[n-1].holder
	}
	return -1
}

// leaderOr is the replica that leads, or replica pick when the Lease
// names none of ours: the one a fault aimed at the leader falls on.
func (s *soak) leaderOr(pick int) int {
	if i := s.leader(); i >= 0 && i < len(s.controllers) {
		return i
	}
	return pick
}

func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// makePool makes the workload's subnet pool in the controllers' project,
// and the TenantPolicy that grants it, and adoption, to the workload's
// namespaces.
func (s *soak) makePool(ctx context.Context) error {
	_, err := subnetpools.Create(ctx, s.stack.Neutron.Client, subnetpools.CreateOpts{Name: poolName, Prefixes: []string{"10.151.0.0/16"},
		DefaultPrefixLen: 24, ProjectID: s.stack.Keystone.ProjectID}).Extract()
	if err != nil {
		return fmt.Errorf("making the subnet pool: %w", err)
	}
	_, err = s.nc.SamplecrdV1().TenantPolicies().Create(ctx, &samplecrdv1.TenantPolicy{ObjectMeta: metav1.ObjectMeta{Name: "soak"},
		Spec: samplecrdv1.TenantPolicySpec{
			NamespaceSelector: metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
				Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpIn, Values: namespaces[:]}}},
			SubnetPools: []string{poolName}, Adoption: true,
		}}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("granting the pool and adoption: %w", err)
	}
	return nil
}
