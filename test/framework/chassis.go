package framework

import (
	"context"
	"fmt"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// Chassis is an OVN hypervisor on this machine: Open vSwitch (its own
// ovsdb-server and ovs-vswitchd) and ovn-controller, which binds the
// logical ports the Southbound database assigns to it. There is no kernel
// datapath here (no modules), so its integration bridge uses OVS's
// userspace one (datapath_type netdev), whose internal ports are tap
// devices: a port plugged into a network namespace is a host on a Neutron
// network, with OVN's real pipeline (switching, ARP, the logical router)
// between it and the rest. Packages: openvswitch-switch and ovn-host.
// Every path is under dir, so a chassis shares nothing with the system's
// /var/run/openvswitch or another chassis.
type Chassis struct {
	// Name is the chassis's system-id and hostname in the Southbound
	// database.
	Name string
	// Bridge is its integration bridge. A userspace bridge is a tap
	// device of that name in the host's namespace, so each chassis has
	// its own name rather than OVN's default br-int.
	Bridge                 string
	DB, Switch, Controller *Process

	dir string
	env []string
}

// StartChassis starts a chassis named name under dir, joined to the
// stack's OVN, and waits until the Southbound database lists it.
func (n *Neutron) StartChassis(ctx context.Context, dir, name string) (*Chassis, error) {
	for _, bin := range []string{"ovsdb-server", "ovs-vswitchd", "ovs-vsctl", "ovn-controller", "ip"} {
		if _, err := exec.LookPath(bin); err != nil {
			return nil, fmt.Errorf("%s not found (hack/install-packages.sh installs openvswitch-switch and ovn-host): %w", bin, err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	sum := crc32.ChecksumIEEE([]byte(name))
	c := &Chassis{Name: name, Bridge: fmt.Sprintf("br-%08x", sum), dir: dir}
	// The Southbound database holds one chassis per tunnel endpoint: each
	// chassis has an address of its own in 127/8, so that one a crashed
	// test left behind does not keep the next from registering.
	encapIP := fmt.Sprintf("127.%d.%d.%d", 1+sum%250, (sum>>8)&0xff, 1+(sum>>16)%250)
	// OVS and OVN take their run, db, log and config directories from the
	// environment; unset, they would use /var/run/openvswitch.
	for _, v := range []string{"OVS_RUNDIR", "OVS_DBDIR", "OVS_LOGDIR", "OVS_SYSCONFDIR", "OVN_RUNDIR"} {
		c.env = append(c.env, v+"="+dir)
	}
	c.env = append(os.Environ(), c.env...)
	db := filepath.Join(dir, "conf.db")
	if err := c.run(ctx, "ovsdb-tool", "create", db, "/usr/share/openvswitch/vswitch.ovsschema"); err != nil {
		return nil, err
	}
	var err error
	if c.DB, err = c.start("ovsdb-server", db, "--remote=punix:"+c.socket(), "--unixctl="+filepath.Join(dir, "ovsdb.ctl")); err != nil {
		return nil, err
	}
	if err := waitFor(ctx, 30*time.Second, c.DB, func(ctx context.Context) error { return c.vsctl(ctx, "--no-wait", "init") }); err != nil {
		return nil, c.stopOnError(err)
	}
	if c.Switch, err = c.start("ovs-vswitchd", "unix:"+c.socket(), "--unixctl="+filepath.Join(dir, "vswitchd.ctl")); err != nil {
		return nil, c.stopOnError(err)
	}
	if err := c.vsctl(ctx, "set", "open", ".", "external_ids:system-id="+name, "external_ids:hostname="+name,
		"external_ids:ovn-remote="+n.SBConnection, "external_ids:ovn-encap-type=geneve", "external_ids:ovn-encap-ip="+encapIP,
		"external_ids:ovn-bridge="+c.Bridge, "external_ids:ovn-bridge-datapath-type=netdev"); err != nil {
		return nil, c.stopOnError(err)
	}
	if c.Controller, err = c.start("ovn-controller", "unix:"+c.socket()); err != nil {
		return nil, c.stopOnError(err)
	}
	err = waitFor(ctx, 30*time.Second, c.Controller, func(ctx context.Context) error {
		out, err := exec.CommandContext(ctx, "ovn-sbctl", "--db="+n.SBConnection, "--bare", "--columns=name", "find", "Chassis", "name="+name).CombinedOutput()
		if err == nil && strings.TrimSpace(string(out)) != name {
			err = fmt.Errorf("chassis %s is not in the Southbound database yet", name)
		}
		if err == nil {
			// ovn-controller makes the integration bridge itself.
			err = c.vsctl(ctx, "br-exists", c.Bridge)
		}
		return err
	})
	return c, c.stopOnError(err)
}

// Plug makes a host on the logical port portID: an internal port of the
// integration bridge whose iface-id is portID, moved into network
// namespace netns with the port's MAC and address (CIDR form) and a
// default route through gateway. ovn-controller then binds the port here.
func (c *Chassis) Plug(ctx context.Context, netns, portID, mac, address, gateway string) error {
	dev := tapName(portID)
	if err := c.vsctl(ctx, "add-port", c.Bridge, dev, "--", "set", "Interface", dev, "type=internal", "external_ids:iface-id="+portID); err != nil {
		return err
	}
	// The userspace datapath makes the tap device after the database
	// says the port is there.
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		return c.run(ctx, "ip", "link", "show", "dev", dev) == nil, nil
	})
	if err != nil {
		return fmt.Errorf("ovs-vswitchd made no device %s: %w (log: %s)", dev, err, c.Switch.Tail(2000))
	}
	steps := [][]string{
		{"ip", "netns", "add", netns},
		{"ip", "link", "set", dev, "netns", netns},
		{"ip", "-n", netns, "link", "set", dev, "address", mac},
		{"ip", "-n", netns, "addr", "add", address, "dev", dev},
		{"ip", "-n", netns, "link", "set", dev, "up"},
		{"ip", "-n", netns, "link", "set", "lo", "up"},
		{"ip", "-n", netns, "route", "add", "default", "via", gateway},
	}
	for _, s := range steps {
		if err := c.run(ctx, s[0], s[1:]...); err != nil {
			return err
		}
	}
	return nil
}

// tapName is the device of portID's host: "tap" and the start of the ID,
// as Nova names them, within Linux's 15 characters.
func tapName(portID string) string { return "tap" + portID[:11] }

// Unplug removes what Plug made.
func (c *Chassis) Unplug(ctx context.Context, netns, portID string) {
	_ = c.vsctl(ctx, "--if-exists", "del-port", c.Bridge, tapName(portID))
	_ = c.run(ctx, "ip", "netns", "del", netns)
}

// Stop stops ovn-controller, which takes its chassis out of the
// Southbound database as it exits, then deletes the bridge, whose tap
// device would outlive ovs-vswitchd, then stops ovs-vswitchd and
// ovsdb-server.
func (c *Chassis) Stop() {
	if c.Controller != nil {
		_ = c.run(context.Background(), "ovn-appctl", "-t", "ovn-controller", "exit")
		_ = c.Controller.Stop(10 * time.Second)
	}
	if c.Switch != nil {
		_ = c.vsctl(context.Background(), "--if-exists", "del-br", c.Bridge)
	}
	for _, p := range []*Process{c.Switch, c.DB} {
		if p != nil {
			_ = p.Stop(10 * time.Second)
		}
	}
}

func (c *Chassis) stopOnError(err error) error {
	if err != nil {
		c.Stop()
	}
	return err
}

func (c *Chassis) socket() string { return filepath.Join(c.dir, "db.sock") }

func (c *Chassis) log(name string) string { return filepath.Join(c.dir, name+".log") }

// start starts one of the chassis's daemons in the foreground.
func (c *Chassis) start(bin string, args ...string) (*Process, error) {
	p := &Process{Name: bin, Path: bin, Dir: c.dir, Env: c.env, LogPath: c.log(bin),
		Args: append(args, "--pidfile="+filepath.Join(c.dir, bin+".pid"), "--log-file="+c.log(bin+"-own"))}
	return p, p.Start()
}

func (c *Chassis) vsctl(ctx context.Context, args ...string) error {
	return c.run(ctx, "ovs-vsctl", append([]string{"--db=unix:" + c.socket(), "--timeout=10"}, args...)...)
}

func (c *Chassis) run(ctx context.Context, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = c.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, out)
	}
	return nil
}

// Ping sends one ICMP echo request from network namespace netns to
// address and waits up to a second for the reply: nil when it came. The
// machine has no ping binary; python3 (Neutron's) sends it on a raw socket.
func (c *Chassis) Ping(ctx context.Context, netns, address string) error {
	return c.run(ctx, "ip", "netns", "exec", netns, "python3", "-c", pingScript, address)
}

// pingScript sends an ICMP echo request to argv[1] and exits 0 on its
// reply, 1 on none within a second.
const pingScript = `
import socket, struct, sys
def csum(b):
    s = sum(struct.unpack('!%dH' % (len(b) // 2), b))
    s = (s >> 16) + (s & 0xffff)
    s += s >> 16
    return ~s & 0xffff
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
s.settimeout(1)
body = struct.pack('!HH', 0x4e43, 1) + b'network-controller'
s.sendto(struct.pack('!BBH', 8, 0, csum(struct.pack('!BBH', 8, 0, 0) + body)) + body, (sys.argv[1], 0))
try:
    while True:
        data, (src, _) = s.recvfrom(2048)
        ihl = (data[0] & 0x0f) * 4
        if src == sys.argv[1] and data[ihl] == 0 and data[ihl + 4:ihl + 6] == b'\x4e\x43':
            sys.exit(0)
except socket.timeout:
    sys.exit('no echo reply from ' + sys.argv[1] + ' within 1s')
`

// FlushNeighbours forgets what netns has learned of its neighbours' MAC
// addresses, as a host does when an address moves to a new interface
// (which would otherwise answer only once the old entry has gone stale).
func (c *Chassis) FlushNeighbours(ctx context.Context, netns string) error {
	return c.run(ctx, "ip", "-n", netns, "neigh", "flush", "all")
}

// Neighbour is the MAC address network namespace netns has learned for
// address ("" when none).
func (c *Chassis) Neighbour(ctx context.Context, netns, address string) (string, error) {
	out, err := exec.CommandContext(ctx, "ip", "-n", netns, "neigh", "show", address).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("ip neigh: %w: %s", err, out)
	}
	fields := strings.Fields(string(out))
	for i, f := range fields {
		if f == "lladdr" && i+1 < len(fields) {
			return fields[i+1], nil
		}
	}
	return "", nil
}
