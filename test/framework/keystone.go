package framework

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/applicationcredentials"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/endpoints"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/projects"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/regions"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/roles"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/services"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/users"
	"sigs.k8s.io/yaml"
)

// TokenLifetime is how long Keystone's tokens live here: short, so that
// every test longer than it proves that clients authenticate again, but
// above keystoneauth's MIN_TOKEN_LIFE_SECONDS (120 s). keystoneauth
// fetches a new token whenever the one it holds expires within that, so
// under it neutron-server's keystonemiddleware authenticated anew for
// every token it validated: with one-minute tokens, 80 of the 84 tokens
// Keystone issued while the controller made 100 Networks (the
// controller's: 1), and Keystone took a core beside Neutron
// (docs/benchmarks.md, "Keystone tokens").
const TokenLifetime = 3 * time.Minute

// The identities the stack makes in Keystone.
const (
	// ControllerProject, ControllerUser: where and as whom the controller
	// works, with the role member, as a real cloud would give it.
	ControllerProject = "network-controller"
	ControllerUser    = "network-controller"
	// PasswordCloud and AppCredentialCloud name the clouds of CloudsYAML:
	// the controller's user by password, and by an application credential.
	PasswordCloud      = "network-controller"
	AppCredentialCloud = "network-controller-appcred"
	region             = "RegionOne"
)

// Keystone is a real Keystone, Debian's package: sqlite, fernet tokens that
// live TokenLifetime, served by the package's own WSGI script
// (keystone-wsgi-public) on a free port.
type Keystone struct {
	Server *Process
	// URL is the identity endpoint, e.g. http://127.0.0.1:5000/v3.
	URL string
	// ProjectID is ControllerProject's ID.
	ProjectID string
	// Password is ControllerUser's password.
	Password string
	// CloudsYAML is a clouds.yaml with PasswordCloud and AppCredentialCloud.
	CloudsYAML string

	adminPassword, neutronPassword string
	dir                            string
	// networkServiceID is the catalog's network service; roleIDs are the
	// roles' IDs by name.
	networkServiceID string
	roleIDs          map[string]string
}

// Tenant is a project of its own, with a member user and a clouds.yaml
// whose one cloud authenticates as that user: another customer of the
// cloud, whose quota and traffic do not touch the controller project's.
type Tenant struct {
	// ProjectID is the tenant's project.
	ProjectID string
	// Cloud names the cloud of CloudsYAML.
	Cloud string
	// CloudsYAML is a clouds.yaml with Cloud alone.
	CloudsYAML string
}

// startKeystone sets Keystone up under dir and starts it on bindIP.
func startKeystone(ctx context.Context, dir, bindIP string) (_ *Keystone, err error) {
	for _, bin := range []string{"keystone-manage", "keystone-wsgi-public"} {
		if _, err := exec.LookPath(bin); err != nil {
			return nil, fmt.Errorf("%s not found: run hack/install-packages.sh (make packages)", bin)
		}
	}
	ports, err := FreePorts(1)
	if err != nil {
		return nil, err
	}
	k := &Keystone{dir: dir, URL: fmt.Sprintf("http://%s:%d/v3", bindIP, ports[0]),
		adminPassword: secret(), neutronPassword: secret(), Password: secret()}
	for _, d := range []string{"fernet", "credential"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			return nil, err
		}
	}
	conf := filepath.Join(dir, "keystone.conf")
	if err := os.WriteFile(conf, []byte(k.config()), 0o600); err != nil {
		return nil, err
	}
	// Each keystone-manage step is a Python start-up: about 9 s in all.
	for _, args := range [][]string{
		{"db_sync"},
		{"fernet_setup", "--keystone-user", "root", "--keystone-group", "root"},
		{"credential_setup", "--keystone-user", "root", "--keystone-group", "root"},
		{"bootstrap", "--bootstrap-password", k.adminPassword, "--bootstrap-region-id", region,
			"--bootstrap-admin-url", k.URL, "--bootstrap-public-url", k.URL, "--bootstrap-internal-url", k.URL},
	} {
		if err := run(ctx, k.log("keystone-manage"), nil, "keystone-manage", append([]string{"--config-file", conf}, args...)...); err != nil {
			return nil, err
		}
	}
	// In SQLite's default journal, a reader blocks every writer until it
	// ends, and Keystone leaves an unread cursor behind now and then, until
	// Python collects it: a catalog write made while the tests run (a
	// tenant's region) then waits 5 s and fails with "database is locked".
	// With the write-ahead log, readers never block the writer.
	if err := run(ctx, k.log("keystone-manage"), nil, "python3", "-c",
		fmt.Sprintf("import sqlite3; sqlite3.connect(%q).execute('PRAGMA journal_mode=WAL')", k.dbPath())); err != nil {
		return nil, err
	}
	k.Server = &Process{
		Name:    "keystone",
		Path:    "keystone-wsgi-public",
		Args:    []string{"--host", bindIP, "--port", fmt.Sprint(ports[0])},
		Dir:     dir,
		LogPath: k.log("keystone"),
	}
	k.Server.Env = append(os.Environ(), "OS_KEYSTONE_CONFIG_FILES="+conf)
	defer func() {
		if err != nil {
			_ = k.Server.Stop(5 * time.Second)
		}
	}()
	if err := k.Server.Start(); err != nil {
		return nil, err
	}
	if err := waitFor(ctx, 60*time.Second, k.Server, func(ctx context.Context) error {
		return httpOK(ctx, http.DefaultClient, k.URL)
	}); err != nil {
		return nil, err
	}
	return k, nil
}

// AdminClient is an identity client of the bootstrap admin.
func (k *Keystone) AdminClient(ctx context.Context) (*gophercloud.ServiceClient, error) {
	return k.identityClient(ctx, gophercloud.AuthOptions{IdentityEndpoint: k.URL, Username: "admin", Password: k.adminPassword,
		DomainName: "Default", TenantName: "admin", AllowReauth: true})
}

// ProviderFor authenticates as the controller's user, scoped to its
// project: what another tool of the same project would see.
func (k *Keystone) ProviderFor(ctx context.Context) (*gophercloud.ProviderClient, error) {
	return openstack.AuthenticatedClient(ctx, gophercloud.AuthOptions{IdentityEndpoint: k.URL, Username: ControllerUser, Password: k.Password,
		DomainName: "Default", TenantID: k.ProjectID, AllowReauth: true})
}

// NetworkClientFor is a network client of the controller's user, scoped to
// its project (ProviderFor): Neutron as the controller's own requests see
// it.
func (k *Keystone) NetworkClientFor(ctx context.Context) (*gophercloud.ServiceClient, error) {
	provider, err := k.ProviderFor(ctx)
	if err != nil {
		return nil, fmt.Errorf("authenticating to Keystone as %s: %w", ControllerUser, err)
	}
	return openstack.NewNetworkV2(provider, gophercloud.EndpointOpts{Region: region})
}

func (k *Keystone) identityClient(ctx context.Context, opts gophercloud.AuthOptions) (*gophercloud.ServiceClient, error) {
	provider, err := openstack.AuthenticatedClient(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("authenticating to Keystone as %s: %w", opts.Username, err)
	}
	return openstack.NewIdentityV3(provider, gophercloud.EndpointOpts{Region: region})
}

// setUp makes what a cloud operator would have made: the network service
// at networkURL in the catalog; the service user neutron's
// keystonemiddleware validates tokens with; the controller's project and
// user, with the role member; an application credential of that user; and
// CloudsYAML.
func (k *Keystone) setUp(ctx context.Context, networkURL string) error {
	admin, err := k.AdminClient(ctx)
	if err != nil {
		return err
	}
	svc, err := services.Create(ctx, admin, services.CreateOpts{Type: "network", Extra: map[string]any{"name": "neutron"}}).Extract()
	if err != nil {
		return fmt.Errorf("registering the network service: %w", err)
	}
	k.networkServiceID = svc.ID
	if err := registerNetworkEndpoint(ctx, admin, svc.ID, region, networkURL); err != nil {
		return err
	}
	k.roleIDs = map[string]string{}
	pages, err := roles.List(admin, nil).AllPages(ctx)
	if err != nil {
		return err
	}
	all, err := roles.ExtractRoles(pages)
	if err != nil {
		return err
	}
	for _, r := range all {
		k.roleIDs[r.Name] = r.ID
	}
	if _, _, err := k.userInProject(ctx, admin, "service", "neutron", k.neutronPassword, k.roleIDs["admin"]); err != nil {
		return err
	}
	var userID string
	if k.ProjectID, userID, err = k.userInProject(ctx, admin, ControllerProject, ControllerUser, k.Password, k.roleIDs["member"]); err != nil {
		return err
	}
	return k.writeCloudsYAML(ctx, userID)
}

// registerNetworkEndpoint puts url in the catalog as the public endpoint
// of the network service serviceID in regionID.
func registerNetworkEndpoint(ctx context.Context, admin *gophercloud.ServiceClient, serviceID, regionID, url string) error {
	if _, err := endpoints.Create(ctx, admin, endpoints.CreateOpts{Availability: gophercloud.AvailabilityPublic, Name: "neutron",
		Region: regionID, URL: url, ServiceID: serviceID}).Extract(); err != nil {
		return fmt.Errorf("registering neutron's endpoint in region %s: %w", regionID, err)
	}
	return nil
}

// NewTenant makes the project and member user name, and a clouds.yaml for
// them. With networkURL (e.g. a FaultProxy's in front of
// Neutron.KeystoneServer), the cloud's region is a new one, name, whose
// catalog sends network requests there: the way a real cloud points its
// clients at an endpoint, so the client under test takes its normal path.
func (k *Keystone) NewTenant(ctx context.Context, name, networkURL string) (*Tenant, error) {
	admin, err := k.AdminClient(ctx)
	if err != nil {
		return nil, err
	}
	password := secret()
	projectID, _, err := k.userInProject(ctx, admin, name, name, password, k.roleIDs["member"])
	if err != nil {
		return nil, err
	}
	regionID := region
	if networkURL != "" {
		regionID = name
		if _, err := regions.Create(ctx, admin, regions.CreateOpts{ID: regionID}).Extract(); err != nil {
			return nil, fmt.Errorf("creating region %s: %w", regionID, err)
		}
		if err := registerNetworkEndpoint(ctx, admin, k.networkServiceID, regionID, networkURL); err != nil {
			return nil, err
		}
	}
	t := &Tenant{ProjectID: projectID, Cloud: name, CloudsYAML: filepath.Join(k.dir, name+"-clouds.yaml")}
	if err := writeClouds(t.CloudsYAML, map[string]any{name: k.passwordCloud(name, password, name, regionID)}); err != nil {
		return nil, err
	}
	return t, nil
}

// userInProject makes a project, a user and a role of it in the project,
// and returns the project's and the user's IDs.
func (k *Keystone) userInProject(ctx context.Context, admin *gophercloud.ServiceClient, project, user, password, roleID string) (projectID, userID string, err error) {
	p, err := projects.Create(ctx, admin, projects.CreateOpts{Name: project, DomainID: "default"}).Extract()
	if err != nil {
		return "", "", fmt.Errorf("creating project %s: %w", project, err)
	}
	userID, err = userIn(ctx, admin, p.ID, user, password, roleID)
	return p.ID, userID, err
}

// userIn makes a user with a role in the project projectID, and returns
// its ID.
func userIn(ctx context.Context, admin *gophercloud.ServiceClient, projectID, user, password, roleID string) (string, error) {
	u, err := users.Create(ctx, admin, users.CreateOpts{Name: user, DomainID: "default", Password: password, DefaultProjectID: projectID}).Extract()
	if err != nil {
		return "", fmt.Errorf("creating user %s: %w", user, err)
	}
	if err := roles.Assign(ctx, admin, roleID, roles.AssignOpts{UserID: u.ID, ProjectID: projectID}).ExtractErr(); err != nil {
		return "", fmt.Errorf("giving %s a role in project %s: %w", user, projectID, err)
	}
	return u.ID, nil
}

// writeCloudsYAML makes the controller user's application credential (as
// that user: Keystone lets users make their own) and writes CloudsYAML.
func (k *Keystone) writeCloudsYAML(ctx context.Context, userID string) error {
	provider, err := k.ProviderFor(ctx)
	if err != nil {
		return err
	}
	identity, err := openstack.NewIdentityV3(provider, gophercloud.EndpointOpts{Region: region})
	if err != nil {
		return err
	}
	cred, err := applicationcredentials.Create(ctx, identity, userID,
		applicationcredentials.CreateOpts{Name: "network-controller", Description: "the test stack's controller"}).Extract()
	if err != nil {
		return fmt.Errorf("creating the application credential: %w", err)
	}
	k.CloudsYAML = filepath.Join(k.dir, "clouds.yaml")
	return writeClouds(k.CloudsYAML, map[string]any{
		PasswordCloud: k.passwordCloud(ControllerUser, k.Password, ControllerProject, region),
		AppCredentialCloud: map[string]any{"auth_type": "v3applicationcredential", "region_name": region, "identity_api_version": 3,
			"auth": map[string]any{"auth_url": k.URL, "application_credential_id": cred.ID, "application_credential_secret": cred.Secret}},
	})
}

// ControllerCloudVia writes a clouds.yaml whose one cloud, PasswordCloud,
// is CloudsYAML's (the controller's user in its project) but in a region
// of its own, name, whose catalog sends network requests to networkURL:
// e.g. a proxy in front of Neutron.KeystoneServer that only one replica
// goes through. It returns the file's path.
func (k *Keystone) ControllerCloudVia(ctx context.Context, name, networkURL string) (string, error) {
	admin, err := k.AdminClient(ctx)
	if err != nil {
		return "", err
	}
	if _, err := regions.Create(ctx, admin, regions.CreateOpts{ID: name}).Extract(); err != nil {
		return "", fmt.Errorf("creating region %s: %w", name, err)
	}
	if err := registerNetworkEndpoint(ctx, admin, k.networkServiceID, name, networkURL); err != nil {
		return "", err
	}
	path := filepath.Join(k.dir, name+"-clouds.yaml")
	return path, writeClouds(path, map[string]any{PasswordCloud: k.passwordCloud(ControllerUser, k.Password, ControllerProject, name)})
}

// NetworkRegion makes region regionID, whose catalog sends network
// requests to networkURL.
func (k *Keystone) NetworkRegion(ctx context.Context, regionID, networkURL string) error {
	admin, err := k.AdminClient(ctx)
	if err != nil {
		return err
	}
	if _, err := regions.Create(ctx, admin, regions.CreateOpts{ID: regionID}).Extract(); err != nil {
		return fmt.Errorf("creating region %s: %w", regionID, err)
	}
	return registerNetworkEndpoint(ctx, admin, k.networkServiceID, regionID, networkURL)
}

// ControllerUserCloud writes a clouds.yaml whose one cloud, PasswordCloud,
// authenticates as a user of its own, user, in the controller's project,
// and takes endpoints from regionID: replicas of one controller that
// share a place (one Keystone, region, interface and project) but whose
// requests a test tells apart by their tokens' users. It returns the
// file's path.
func (k *Keystone) ControllerUserCloud(ctx context.Context, user, regionID string) (string, error) {
	admin, err := k.AdminClient(ctx)
	if err != nil {
		return "", err
	}
	password := secret()
	if _, err := userIn(ctx, admin, k.ProjectID, user, password, k.roleIDs["member"]); err != nil {
		return "", err
	}
	path := filepath.Join(k.dir, user+"-clouds.yaml")
	return path, writeClouds(path, map[string]any{PasswordCloud: k.passwordCloud(user, password, ControllerProject, regionID)})
}

// passwordCloud is a clouds.yaml cloud that authenticates as user with
// password, scoped to project, and takes endpoints from regionID.
// PasswordCloudsYAML is a clouds.yaml with one cloud, PasswordCloud, for
// the controller's user in its project with the given password: the right
// one (Keystone.Password) or a wrong one, as a Secret holds either.
func (k *Keystone) PasswordCloudsYAML(password string) ([]byte, error) {
	return yaml.Marshal(map[string]any{"clouds": map[string]any{
		PasswordCloud: k.passwordCloud(ControllerUser, password, ControllerProject, region)}})
}

// AdminCloud names the cloud of AdminCloudsYAML.
const AdminCloud = "cloud-admin"

// AdminCloudsYAML is a clouds.yaml with one cloud, AdminCloud: Keystone's
// bootstrap admin in the admin project, a credential that sees every
// project's resources, as an operator may (wrongly) give a controller.
func (k *Keystone) AdminCloudsYAML() ([]byte, error) {
	return yaml.Marshal(map[string]any{"clouds": map[string]any{
		AdminCloud: k.passwordCloud("admin", k.adminPassword, "admin", region)}})
}

func (k *Keystone) passwordCloud(user, password, project, regionID string) map[string]any {
	return map[string]any{"region_name": regionID, "identity_api_version": 3,
		"auth": map[string]any{"auth_url": k.URL, "username": user, "password": password,
			"project_name": project, "user_domain_name": "Default", "project_domain_name": "Default"}}
}

// writeClouds writes clouds, by name, as the clouds.yaml path.
func writeClouds(path string, clouds map[string]any) error {
	data, err := yaml.Marshal(map[string]any{"clouds": clouds})
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}

// Stop stops Keystone.
func (k *Keystone) Stop() {
	if k.Server != nil {
		_ = k.Server.Stop(10 * time.Second)
	}
}

// authtokenConfig is neutron.conf's [keystone_authtoken]: how
// keystonemiddleware validates the tokens neutron-server is sent. It
// caches a validation for 10 s rather than its default 300 s, so that a
// token revoked in Keystone (the soak's token-revoke fault) is refused
// within seconds, as a deployment without a shared cache would refuse it
// at once; a validation costs Keystone one request per token per 10 s.
func (k *Keystone) authtokenConfig() string {
	root := strings.TrimSuffix(k.URL, "/v3")
	return fmt.Sprintf(`
[keystone_authtoken]
www_authenticate_uri = %s
auth_url = %s
auth_type = password
project_domain_name = Default
user_domain_name = Default
project_name = service
username = neutron
password = %s
region_name = %s
token_cache_time = 10
`, root, root, k.neutronPassword, region)
}

func (k *Keystone) log(name string) string { return filepath.Join(k.dir, name+".log") }

func (k *Keystone) dbPath() string { return filepath.Join(k.dir, "keystone.db") }

func (k *Keystone) config() string {
	dir := k.dir
	return fmt.Sprintf(`[DEFAULT]
log_file = %s

[database]
connection = sqlite:///%s

[token]
provider = fernet
expiration = %d

[fernet_tokens]
key_repository = %s

[credential]
key_repository = %s
`, filepath.Join(dir, "keystone-server.log"), k.dbPath(), int(TokenLifetime.Seconds()),
		filepath.Join(dir, "fernet"), filepath.Join(dir, "credential"))
}

// secret is a random password.
func secret() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
