package kube

import (
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/tools/clientcmd/api/latest"
)

// restConfigFromKubeconfig turns the current context of a kubeconfig file
// into a rest.Config: server, CA, TLS server name, and the user's token,
// token file, client certificate, basic auth, exec or auth-provider plugin.
//
// (client-go's tools/clientcmd does this too, but pulls in the module
// github.com/spf13/pflag, which is not among the project's modules; this
// reads the same file format through clientcmd/api/latest.)
func restConfigFromKubeconfig(path string) (*rest.Config, string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, "", err
	}
	obj, err := runtime.Decode(latest.Codec, data)
	if err != nil {
		return nil, "", fmt.Errorf("not a kubeconfig: %w", err)
	}
	cfg, ok := obj.(*clientcmdapi.Config)
	if !ok {
		return nil, "", fmt.Errorf("not a kubeconfig")
	}
	ctxName := cfg.CurrentContext
	kctx := cfg.Contexts[ctxName]
	if kctx == nil {
		return nil, "", fmt.Errorf("no current context (current-context %q)", ctxName)
	}
	cluster := cfg.Clusters[kctx.Cluster]
	if cluster == nil || cluster.Server == "" {
		return nil, "", fmt.Errorf("context %q: no cluster %q with a server", ctxName, kctx.Cluster)
	}
	user := cfg.AuthInfos[kctx.AuthInfo]
	if user == nil {
		user = &clientcmdapi.AuthInfo{}
	}
	dir := filepath.Dir(path)
	rel := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	rc := &rest.Config{
		Host:            cluster.Server,
		BearerToken:     user.Token,
		BearerTokenFile: rel(user.TokenFile),
		Username:        user.Username,
		Password:        user.Password,
		Impersonate: rest.ImpersonationConfig{
			UserName: user.Impersonate, UID: user.ImpersonateUID, Groups: user.ImpersonateGroups, Extra: user.ImpersonateUserExtra,
		},
		AuthProvider: user.AuthProvider,
		ExecProvider: user.Exec,
		TLSClientConfig: rest.TLSClientConfig{
			Insecure:   cluster.InsecureSkipTLSVerify,
			ServerName: cluster.TLSServerName,
			CAFile:     rel(cluster.CertificateAuthority),
			CAData:     cluster.CertificateAuthorityData,
			CertFile:   rel(user.ClientCertificate),
			CertData:   user.ClientCertificateData,
			KeyFile:    rel(user.ClientKey),
			KeyData:    user.ClientKeyData,
		},
	}
	return rc, ctxName, nil
}
