package framework

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// ControlPlane is a real etcd and kube-apiserver on loopback ports, with
// RBAC on and every CRD of artifacts/crd installed.
type ControlPlane struct {
	Etcd      *Process
	APIServer *Process

	// EtcdURL is etcd's client URL, for etcdctl.
	EtcdURL string
	// AdminConfig authenticates as a member of system:masters.
	AdminConfig *rest.Config
	// AdminKubeconfig is AdminConfig written as a kubeconfig file.
	AdminKubeconfig string
	// CAFile holds the certificate that clients of the API server trust.
	CAFile string
	// SAKeyFile is the key that signs ServiceAccount tokens.
	SAKeyFile string
	// Tokens are the static tokens of the node's components, by user.
	Tokens map[string]string
	// KubeletClient is the API server's client certificate to the
	// kubelet (logs, exec, port-forward), with the CA the kubelet trusts
	// it by; nil without a node.
	KubeletClient *ClientCertificate
	// ClusterUID is the UID of the kube-system namespace: the cluster's
	// identity in the controller's ownership mark.
	ClusterUID types.UID

	dir string
}

// controlPlaneOptions say where the API server listens and whom it knows.
type controlPlaneOptions struct {
	// bindIP is the one address the API server listens on and advertises.
	bindIP string
	// serviceCIDR is the Service ClusterIP range; its first address is the
	// kubernetes Service's.
	serviceCIDR string
	// users maps the node's components' user names to their groups; each
	// gets a static token (ControlPlane.Tokens). With users, the Node
	// authorizer and NodeRestriction are on, as in a real cluster.
	users map[string][]string
}

// loopbackControlPlane is the control plane without a node: loopback only.
var loopbackControlPlane = controlPlaneOptions{bindIP: "127.0.0.1", serviceCIDR: "10.0.0.0/24"}

// startControlPlane starts etcd and kube-apiserver under dir with the
// binaries of binDir (built by hack/build-controlplane.sh) and installs the
// CRDs found in crdDir.
func startControlPlane(ctx context.Context, dir, binDir, crdDir string, opts controlPlaneOptions) (*ControlPlane, error) {
	for _, b := range []string{"etcd", "kube-apiserver"} {
		if _, err := os.Stat(filepath.Join(binDir, b)); err != nil {
			return nil, fmt.Errorf("%s missing in %s: run hack/build-controlplane.sh (make controlplane): %w", b, binDir, err)
		}
	}
	ports, err := FreePorts(3)
	if err != nil {
		return nil, err
	}
	etcdPort, peerPort, apiPort := ports[0], ports[1], ports[2]
	cp := &ControlPlane{dir: dir, EtcdURL: fmt.Sprintf("http://127.0.0.1:%d", etcdPort)}
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", peerPort)

	cp.Etcd = &Process{
		Name: "etcd",
		Path: filepath.Join(binDir, "etcd"),
		Args: []string{
			"--name=default",
			"--data-dir=" + filepath.Join(dir, "etcd"),
			"--listen-client-urls=" + cp.EtcdURL,
			"--advertise-client-urls=" + cp.EtcdURL,
			"--listen-peer-urls=" + peerURL,
			"--initial-advertise-peer-urls=" + peerURL,
			"--initial-cluster=default=" + peerURL,
			// A throw-away store: durability costs time and buys nothing.
			"--unsafe-no-fsync",
		},
		Dir:     dir,
		LogPath: filepath.Join(dir, "etcd.log"),
	}
	if err := cp.Etcd.Start(); err != nil {
		return nil, err
	}
	if err := waitFor(ctx, 30*time.Second, cp.Etcd, func(ctx context.Context) error {
		return httpOK(ctx, http.DefaultClient, cp.EtcdURL+"/health")
	}); err != nil {
		cp.Stop()
		return nil, err
	}

	apiDir := filepath.Join(dir, "apiserver")
	if err := os.MkdirAll(apiDir, 0o700); err != nil {
		return nil, err
	}
	saKey := filepath.Join(apiDir, "sa.key")
	if err := writeRSAKey(saKey); err != nil {
		return nil, err
	}
	cp.SAKeyFile = saKey
	token, err := randomToken()
	if err != nil {
		return nil, err
	}
	tokens := filepath.Join(apiDir, "tokens.csv")
	tokensCSV := token + `,admin,admin,"system:masters"` + "\n"
	cp.Tokens = map[string]string{}
	for user, groups := range opts.users {
		t, err := randomToken()
		if err != nil {
			return nil, err
		}
		cp.Tokens[user] = t
		tokensCSV += fmt.Sprintf("%s,%s,%s", t, user, user)
		if len(groups) > 0 {
			tokensCSV += fmt.Sprintf(",%q", strings.Join(groups, ","))
		}
		tokensCSV += "\n"
	}
	if err := os.WriteFile(tokens, []byte(tokensCSV), 0o600); err != nil {
		return nil, err
	}
	authz := []string{"--authorization-mode=RBAC"}
	if len(opts.users) > 0 {
		// The API server proxies kubectl logs and exec to the kubelet as
		// a user the kubelet's webhook authorizer lets through, as
		// kubeadm's apiserver-kubelet-client does.
		if cp.KubeletClient, err = NewClientCertificate(apiDir, "kube-apiserver-kubelet-client", []string{"system:masters"}); err != nil {
			return nil, err
		}
		authz = []string{"--authorization-mode=Node,RBAC", "--enable-admission-plugins=NodeRestriction",
			// The API server dials the kubelet by its InternalIP (the
			// bridge), never by a host name that would need DNS.
			"--kubelet-preferred-address-types=InternalIP",
			"--kubelet-client-certificate=" + cp.KubeletClient.CertFile,
			"--kubelet-client-key=" + cp.KubeletClient.KeyFile,
			// Webhooks and aggregated APIs are dialled at their Pod IPs.
			"--enable-aggregator-routing=true"}
	}
	certDir := filepath.Join(apiDir, "certs")
	cp.APIServer = &Process{
		Name: "kube-apiserver",
		Path: filepath.Join(binDir, "kube-apiserver"),
		Args: []string{
			"--etcd-servers=" + cp.EtcdURL,
			"--bind-address=" + opts.bindIP,
			fmt.Sprintf("--secure-port=%d", apiPort),
			"--cert-dir=" + certDir,
			"--service-account-issuer=https://kubernetes.default.svc",
			"--service-account-key-file=" + saKey,
			"--service-account-signing-key-file=" + saKey,
			"--token-auth-file=" + tokens,
			"--service-cluster-ip-range=" + opts.serviceCIDR,
		},
		Dir:     dir,
		LogPath: filepath.Join(dir, "kube-apiserver.log"),
	}
	cp.APIServer.Args = append(cp.APIServer.Args, authz...)
	if !net.ParseIP(opts.bindIP).IsLoopback() {
		// Pods reach the API server through the kubernetes Service, whose
		// endpoint is the advertised address. The endpoint reconciler
		// refuses a loopback one, so a control plane without a node keeps
		// the server's default.
		cp.APIServer.Args = append(cp.APIServer.Args, "--advertise-address="+opts.bindIP)
	}
	// The API server writes its self-signed serving certificate before it
	// listens; that certificate is also the CA clients trust. A restart
	// finds it in --cert-dir and serves it again.
	cp.CAFile = filepath.Join(certDir, "apiserver.crt")
	cp.AdminConfig = &rest.Config{
		Host:            fmt.Sprintf("https://%s:%d", opts.bindIP, apiPort),
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAFile: cp.CAFile},
		// Tests and benchmarks measure the server, not client throttling.
		QPS:   1000,
		Burst: 2000,
	}
	if err := cp.StartAPIServer(ctx); err != nil {
		cp.Stop()
		return nil, err
	}
	cp.AdminKubeconfig = filepath.Join(dir, "admin.kubeconfig")
	if err := WriteKubeconfig(cp.AdminConfig, "admin", cp.AdminKubeconfig); err != nil {
		cp.Stop()
		return nil, err
	}
	if err := InstallCRDs(ctx, cp.AdminConfig, crdDir); err != nil {
		cp.Stop()
		return nil, err
	}
	if cp.ClusterUID, err = clusterUID(ctx, cp.AdminConfig); err != nil {
		cp.Stop()
		return nil, err
	}
	return cp, nil
}

// clusterUID waits for the API server to make the kube-system namespace
// (its bootstrap controller does, just after it is ready) and returns its UID.
func clusterUID(ctx context.Context, config *rest.Config) (types.UID, error) {
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return "", err
	}
	var uid types.UID
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		ns, err := client.CoreV1().Namespaces().Get(ctx, metav1.NamespaceSystem, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		uid = ns.UID
		return true, nil
	})
	if err != nil {
		return "", fmt.Errorf("waiting for the kube-system namespace: %w", err)
	}
	return uid, nil
}

// StartAPIServer starts kube-apiserver, at first or again after
// APIServer.Stop (an outage, an upgrade), with the same port, certificate
// and tokens, and waits until it is ready.
func (cp *ControlPlane) StartAPIServer(ctx context.Context) error {
	if err := cp.APIServer.Start(); err != nil {
		return err
	}
	return waitFor(ctx, 60*time.Second, cp.APIServer, func(ctx context.Context) error {
		if _, err := os.Stat(cp.CAFile); err != nil {
			return err
		}
		client, err := rest.HTTPClientFor(cp.AdminConfig)
		if err != nil {
			return err
		}
		return httpOK(ctx, client, cp.AdminConfig.Host+"/readyz")
	})
}

// Stop stops kube-apiserver, then etcd.
func (cp *ControlPlane) Stop() {
	if cp.APIServer != nil {
		_ = cp.APIServer.Stop(10 * time.Second)
	}
	if cp.Etcd != nil {
		_ = cp.Etcd.Stop(10 * time.Second)
	}
}

// InstallCRDs creates (or updates) every CustomResourceDefinition in the
// YAML files of dir and waits until the API server serves them.
func InstallCRDs(ctx context.Context, config *rest.Config, dir string) error {
	client, err := apiextensionsclient.NewForConfig(config)
	if err != nil {
		return err
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("no CRDs in %s", dir)
	}
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, crd); err != nil {
			return fmt.Errorf("decoding %s: %w", f, err)
		}
		crds := client.ApiextensionsV1().CustomResourceDefinitions()
		existing, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("creating CRD %s: %w", crd.Name, err)
			}
		case err != nil:
			return err
		default:
			crd.ResourceVersion = existing.ResourceVersion
			if _, err := crds.Update(ctx, crd, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("updating CRD %s: %w", crd.Name, err)
			}
		}
		if err := waitFor(ctx, 30*time.Second, nil, func(ctx context.Context) error {
			got, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			for _, c := range got.Status.Conditions {
				if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
					return nil
				}
			}
			return fmt.Errorf("CRD %s not established yet", crd.Name)
		}); err != nil {
			return err
		}
	}
	return nil
}

// ServiceAccountConfig returns a client configuration that authenticates as
// the ServiceAccount namespace/name, creating the ServiceAccount when it does
// not exist, with a token from the TokenRequest API: exactly what a Pod
// running as that ServiceAccount would hold.
func (cp *ControlPlane) ServiceAccountConfig(ctx context.Context, namespace, name string) (*rest.Config, error) {
	client, err := kubernetes.NewForConfig(cp.AdminConfig)
	if err != nil {
		return nil, err
	}
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("creating namespace %s: %w", namespace, err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	if _, err := client.CoreV1().ServiceAccounts(namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("creating service account %s/%s: %w", namespace, name, err)
	}
	tr, err := client.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)},
	}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("requesting a token for %s/%s: %w", namespace, name, err)
	}
	config := rest.AnonymousClientConfig(cp.AdminConfig)
	config.BearerToken = tr.Status.Token
	config.QPS, config.Burst = cp.AdminConfig.QPS, cp.AdminConfig.Burst
	return config, nil
}

// WriteKubeconfig writes config, which must authenticate with a bearer
// token, as a kubeconfig file whose user and context are called user.
func WriteKubeconfig(config *rest.Config, user, path string) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["local"] = &clientcmdapi.Cluster{Server: config.Host, CertificateAuthority: config.CAFile, CertificateAuthorityData: config.CAData}
	kc.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: config.BearerToken}
	kc.Contexts[user] = &clientcmdapi.Context{Cluster: "local", AuthInfo: user, Namespace: "default"}
	kc.CurrentContext = user
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		return fmt.Errorf("writing kubeconfig %s: %w", path, err)
	}
	return nil
}

func writeRSAKey(path string) error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	data := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	return os.WriteFile(path, data, 0o600)
}

func randomToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

func httpOK(ctx context.Context, client *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return nil
}
