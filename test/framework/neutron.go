package framework

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gophercloud/gophercloud/v2"

	"github.com/samplecrd/network-controller/pkg/controller/neutron"
)

// Neutron is a real neutron-server with the ML2/OVN driver: OVN's
// Northbound and Southbound databases and ovn-northd between them, MariaDB,
// and neutron-server itself,
// running with auth_strategy = noauth and unlimited quotas. Its packages are
// installed by hack/install-packages.sh.
type Neutron struct {
	NB, SB, MariaDB, Server *Process
	// Northd is ovn-northd, which translates what neutron-server writes to
	// the Northbound database into the Southbound one's logical flows.
	Northd *Process
	// KeystoneServer, with Options.Keystone, is a second neutron-server on
	// the same database and OVN, with auth_strategy = keystone: the one in
	// Keystone's catalog, which the controller reaches through clouds.yaml
	// as in a cloud. Server (noauth) stays the tests' view as an operator,
	// and what fault proxies stand in front of.
	KeystoneServer *Process
	// KeystoneEndpoint is KeystoneServer's root URL.
	KeystoneEndpoint string

	// Endpoint is neutron-server's root URL, e.g. http://127.0.0.1:9696/.
	Endpoint string
	// NBConnection is the OVN Northbound database, for ovn-nbctl --db.
	NBConnection string
	// SBConnection is the OVN Southbound database, which a chassis's
	// ovn-controller reads (chassis.go).
	SBConnection string
	// Client is a network service client for Endpoint.
	Client *gophercloud.ServiceClient

	dir    string
	cred   *syscall.Credential
	bindIP string
	dbPort int
}

// The packages' own paths on Debian 12.
const (
	ovnNBSchema  = "/usr/share/ovn/ovn-nb.ovsschema"
	ovnSBSchema  = "/usr/share/ovn/ovn-sb.ovsschema"
	neutronPaste = "/etc/neutron/api-paste.ini"
)

// startNeutron starts Neutron under dir; neutron-server listens on bindIP
// (the node's bridge address when Pods must reach it, else loopback).
func startNeutron(ctx context.Context, dir, bindIP string) (_ *Neutron, err error) {
	for _, bin := range []string{"ovsdb-server", "ovsdb-tool", "ovn-northd", "ovn-appctl", "ovn-nbctl", "ovn-sbctl", "mariadbd", "mariadb-install-db", "mariadb", "neutron-server", "neutron-db-manage"} {
		if _, err := exec.LookPath(bin); err != nil {
			return nil, fmt.Errorf("%s not found: run hack/install-packages.sh (make packages)", bin)
		}
	}
	ports, err := FreePorts(4)
	if err != nil {
		return nil, err
	}
	nbPort, sbPort, dbPort, apiPort := ports[0], ports[1], ports[2], ports[3]
	n := &Neutron{
		dir:          dir,
		cred:         unprivileged(),
		Endpoint:     fmt.Sprintf("http://%s:%d/", bindIP, apiPort),
		NBConnection: fmt.Sprintf("tcp:127.0.0.1:%d", nbPort),
	}
	defer func() {
		if err != nil {
			n.Stop()
		}
	}()
	for _, d := range []string{"ovn", "mysql", "neutron", "neutron/lock"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return nil, err
		}
	}
	if err := n.chownTree(dir); err != nil {
		return nil, err
	}

	// OVN: one ovsdb-server per database, each initialised with its global
	// row (without NB_Global Neutron's driver fails with StopIteration).
	sbConnection := fmt.Sprintf("tcp:127.0.0.1:%d", sbPort)
	n.SBConnection = sbConnection
	n.NB, err = n.startOVSDB(ctx, "nb", ovnNBSchema, nbPort)
	if err != nil {
		return nil, err
	}
	n.SB, err = n.startOVSDB(ctx, "sb", ovnSBSchema, sbPort)
	if err != nil {
		return nil, err
	}
	if err := run(ctx, n.log("ovn-init"), n.cred, "ovn-nbctl", "--db="+n.NBConnection, "--wait=none", "init"); err != nil {
		return nil, err
	}
	if err := run(ctx, n.log("ovn-init"), n.cred, "ovn-sbctl", "--db="+sbConnection, "init"); err != nil {
		return nil, err
	}
	if n.Northd, err = n.startNorthd(ctx, sbConnection); err != nil {
		return nil, err
	}

	// MariaDB: SQLite cannot run Neutron's migrations, nor bear concurrent writes.
	dataDir := filepath.Join(dir, "mysql", "data")
	if err := run(ctx, n.log("mariadb"), n.cred, "mariadb-install-db", "--no-defaults",
		"--datadir="+dataDir, "--auth-root-authentication-method=normal", "--skip-test-db"); err != nil {
		return nil, err
	}
	socket := filepath.Join(dir, "mysql", "mysqld.sock")
	n.MariaDB = &Process{
		Name: "mariadb",
		Path: "mariadbd",
		Args: []string{
			"--no-defaults",
			"--datadir=" + dataDir,
			"--bind-address=127.0.0.1",
			"--port=" + strconv.Itoa(dbPort),
			"--socket=" + socket,
			"--pid-file=" + filepath.Join(dir, "mysql", "mysqld.pid"),
			"--tmpdir=" + filepath.Join(dir, "mysql"),
			"--skip-grant-tables",
			"--skip-log-bin",
			// A throw-away database: durability costs time and buys nothing.
			"--innodb-flush-log-at-trx-commit=0",
			"--innodb-doublewrite=0",
			"--innodb-buffer-pool-size=64M",
		},
		Dir:        dir,
		LogPath:    n.log("mariadb"),
		Credential: n.cred,
	}
	if err := n.MariaDB.Start(); err != nil {
		return nil, err
	}
	if err := waitFor(ctx, 60*time.Second, n.MariaDB, func(ctx context.Context) error {
		return run(ctx, "", nil, "mariadb", "--no-defaults", "--protocol=tcp", "-h127.0.0.1", "-P"+strconv.Itoa(dbPort), "-uroot",
			"-e", "CREATE DATABASE IF NOT EXISTS neutron")
	}); err != nil {
		return nil, err
	}

	// neutron-server.
	confDir := filepath.Join(dir, "neutron")
	neutronConf := filepath.Join(confDir, "neutron.conf")
	ml2Conf := filepath.Join(confDir, "ml2_ovn.ini")
	// The package's api-paste.ini is readable by root and group neutron
	// only; the daemons read a copy.
	paste, err := os.ReadFile(neutronPaste)
	if err != nil {
		return nil, fmt.Errorf("reading neutron's paste config (run the stack as root): %w", err)
	}
	if err := os.WriteFile(filepath.Join(confDir, "api-paste.ini"), paste, 0o644); err != nil {
		return nil, err
	}
	n.bindIP, n.dbPort = bindIP, dbPort
	if err := os.WriteFile(neutronConf, []byte(neutronConfig(bindIP, apiPort, dbPort, confDir, "noauth", "neutron-server.log")), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(ml2Conf, []byte(ml2OVNConfig(n.NBConnection, sbConnection)), 0o644); err != nil {
		return nil, err
	}
	if err := run(ctx, n.log("neutron-db-manage"), n.cred, "neutron-db-manage",
		"--config-file", neutronConf, "--config-file", ml2Conf, "upgrade", "heads"); err != nil {
		return nil, err
	}
	n.Server = &Process{
		Name:       "neutron-server",
		Path:       "neutron-server",
		Args:       []string{"--config-file", neutronConf, "--config-file", ml2Conf},
		Dir:        confDir,
		LogPath:    n.log("neutron-server.out"),
		Credential: n.cred,
	}
	n.Client, err = neutron.NewNoAuthServiceClient(n.Endpoint, &http.Client{Timeout: 30 * time.Second})
	if err != nil {
		return nil, err
	}
	if err := n.StartServer(ctx); err != nil {
		return nil, err
	}
	return n, nil
}

// StartServer starts neutron-server (again) and waits until it answers.
func (n *Neutron) StartServer(ctx context.Context) error {
	if err := n.Server.Start(); err != nil {
		return err
	}
	return waitFor(ctx, 90*time.Second, n.Server, func(ctx context.Context) error {
		return httpOK(ctx, http.DefaultClient, n.Endpoint+"v2.0/networks?limit=1")
	})
}

// StopServer stops neutron-server alone, as an outage would; the databases
// keep running.
func (n *Neutron) StopServer() error {
	return n.Server.Stop(10 * time.Second)
}

// ServerLog returns the tail of neutron-server's own log file.
func (n *Neutron) ServerLog() string {
	p := &Process{LogPath: filepath.Join(n.dir, "neutron", "neutron-server.log")}
	return p.Tail(8000)
}

// startKeystoneServer starts KeystoneServer, which validates the tokens it
// is sent with k.
func (n *Neutron) startKeystoneServer(ctx context.Context, k *Keystone) error {
	ports, err := FreePorts(1)
	if err != nil {
		return err
	}
	confDir := filepath.Join(n.dir, "neutron")
	conf := filepath.Join(confDir, "neutron-keystone.conf")
	config := neutronConfig(n.bindIP, ports[0], n.dbPort, confDir, "keystone", "neutron-server-keystone.log") + k.authtokenConfig()
	if err := os.WriteFile(conf, []byte(config), 0o644); err != nil {
		return err
	}
	n.KeystoneEndpoint = fmt.Sprintf("http://%s:%d/", n.bindIP, ports[0])
	n.KeystoneServer = &Process{
		Name:       "neutron-server-keystone",
		Path:       "neutron-server",
		Args:       []string{"--config-file", conf, "--config-file", filepath.Join(confDir, "ml2_ovn.ini")},
		Dir:        confDir,
		LogPath:    n.log("neutron-server-keystone.out"),
		Credential: n.cred,
	}
	return n.StartKeystoneServer(ctx)
}

// StartKeystoneServer starts KeystoneServer, at first or again after
// StopKeystoneServer, and waits until it answers.
func (n *Neutron) StartKeystoneServer(ctx context.Context) error {
	if err := n.KeystoneServer.Start(); err != nil {
		return err
	}
	// Up once it refuses a request without a token.
	return waitFor(ctx, 90*time.Second, n.KeystoneServer, func(ctx context.Context) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, n.KeystoneEndpoint+"v2.0/networks?limit=1", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			return fmt.Errorf("GET without a token: %s, want 401", resp.Status)
		}
		return nil
	})
}

// StopKeystoneServer stops KeystoneServer alone, as an outage would.
func (n *Neutron) StopKeystoneServer() error {
	return n.KeystoneServer.Stop(10 * time.Second)
}

// Stop stops neutron-server, MariaDB, ovn-northd and both OVN databases.
func (n *Neutron) Stop() {
	for _, p := range []*Process{n.KeystoneServer, n.Server, n.MariaDB, n.Northd, n.SB, n.NB} {
		if p != nil {
			_ = p.Stop(10 * time.Second)
		}
	}
}

// NBCtl runs ovn-nbctl against the Northbound database and returns its output.
func (n *Neutron) NBCtl(ctx context.Context, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, "ovn-nbctl", append([]string{"--db=" + n.NBConnection, "--timeout=10"}, args...)...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("ovn-nbctl %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

func (n *Neutron) startOVSDB(ctx context.Context, name, schema string, port int) (*Process, error) {
	db := filepath.Join(n.dir, "ovn", name+".db")
	if err := run(ctx, n.log("ovn-init"), n.cred, "ovsdb-tool", "create", db, schema); err != nil {
		return nil, err
	}
	p := &Process{
		Name: "ovsdb-server-" + name,
		Path: "ovsdb-server",
		Args: []string{
			db,
			fmt.Sprintf("--remote=ptcp:%d:127.0.0.1", port),
			"--unixctl=" + filepath.Join(n.dir, "ovn", name+".ctl"),
			"--pidfile=" + filepath.Join(n.dir, "ovn", name+".pid"),
			"--log-file=" + filepath.Join(n.dir, "ovn", name+".log"),
		},
		Dir:        n.dir,
		LogPath:    n.log("ovsdb-server-" + name),
		Credential: n.cred,
	}
	if err := p.Start(); err != nil {
		return nil, err
	}
	return p, waitFor(ctx, 30*time.Second, p, func(ctx context.Context) error {
		c, err := (&net.Dialer{}).DialContext(ctx, "tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
		}
		return err
	})
}

// startNorthd starts ovn-northd between the Northbound database and sb,
// and waits until it is the active one (it takes a lock in the Southbound
// database first).
func (n *Neutron) startNorthd(ctx context.Context, sb string) (*Process, error) {
	ctl := filepath.Join(n.dir, "ovn", "northd.ctl")
	p := &Process{
		Name: "ovn-northd",
		Path: "ovn-northd",
		Args: []string{
			"--ovnnb-db=" + n.NBConnection,
			"--ovnsb-db=" + sb,
			"--unixctl=" + ctl,
			"--pidfile=" + filepath.Join(n.dir, "ovn", "northd.pid"),
			"--log-file=" + filepath.Join(n.dir, "ovn", "northd.log"),
		},
		Dir:        n.dir,
		LogPath:    n.log("ovn-northd"),
		Credential: n.cred,
	}
	if err := p.Start(); err != nil {
		return nil, err
	}
	return p, waitFor(ctx, 30*time.Second, p, func(ctx context.Context) error {
		out, err := exec.CommandContext(ctx, "ovn-appctl", "-t", ctl, "status").CombinedOutput()
		if err == nil && !strings.Contains(string(out), "active") {
			err = fmt.Errorf("ovn-northd says %q", strings.TrimSpace(string(out)))
		}
		return err
	})
}

func (n *Neutron) log(name string) string { return filepath.Join(n.dir, name+".log") }

// chownTree hands the tree to the user the daemons run as.
func (n *Neutron) chownTree(root string) error {
	if n.cred == nil {
		return nil
	}
	return filepath.Walk(root, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, int(n.cred.Uid), int(n.cred.Gid))
	})
}

// unprivileged is the credential the Neutron daemons run with: nobody when
// the stack is started by root (MariaDB refuses to run as root), else the
// current user.
func unprivileged() *syscall.Credential {
	if os.Getuid() != 0 {
		return nil
	}
	return &syscall.Credential{Uid: 65534, Gid: 65534}
}

func neutronConfig(bindIP string, apiPort, dbPort int, dir, authStrategy, logName string) string {
	return fmt.Sprintf(`[DEFAULT]
bind_host = %s
bind_port = %d
auth_strategy = %s
core_plugin = ml2
# Without the OVN router plugin POST /networks hangs.
service_plugins = ovn-router
# No RabbitMQ: nothing here listens for RPC.
transport_url = fake://
# 0 API workers hangs with OVN.
api_workers = 1
rpc_workers = 0
rpc_state_report_workers = 0
api_paste_config = %s
state_path = %s
log_file = %s
notify_nova_on_port_status_changes = false
notify_nova_on_port_data_changes = false

[database]
connection = mysql+pymysql://root@127.0.0.1:%d/neutron

[oslo_concurrency]
lock_path = %s

[quotas]
# The default quota is 100 networks per project.
quota_network = -1
quota_subnet = -1
quota_port = -1
`, bindIP, apiPort, authStrategy, filepath.Join(dir, "api-paste.ini"), dir, filepath.Join(dir, logName), dbPort, filepath.Join(dir, "lock"))
}

func ml2OVNConfig(nb, sb string) string {
	return fmt.Sprintf(`[ml2]
type_drivers = geneve,flat
tenant_network_types = geneve
mechanism_drivers = ovn
extension_drivers = port_security
overlay_ip_version = 4

[ml2_type_geneve]
vni_ranges = 1:65536
max_header_size = 38

[ovn]
ovn_nb_connection = %s
ovn_sb_connection = %s
ovn_metadata_enabled = false
`, nb, sb)
}

// FullServerLog returns neutron-server's whole log file, e.g. to count the
// requests it served.
func (n *Neutron) FullServerLog() string {
	data, _ := os.ReadFile(filepath.Join(n.dir, "neutron", "neutron-server.log"))
	return string(data)
}
