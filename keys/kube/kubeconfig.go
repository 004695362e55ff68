package kube

import (
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// restConfigFromKubeconfig turns the current context of a kubeconfig file into a rest.Config, with
// client-go's own loader: server, CA, TLS server name, and the user's token, token file, client
// certificate, exec or auth-provider plugin; relative paths are read from the file's folder. It returns
// the name of the context used.
func restConfigFromKubeconfig(path string) (*rest.Config, string, error) {
	raw, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return nil, "", fmt.Errorf("reading the kubeconfig: %w", err)
	}
	if err := clientcmd.ResolveLocalPaths(raw); err != nil {
		return nil, "", fmt.Errorf("reading the kubeconfig: %w", err)
	}
	if raw.CurrentContext == "" || raw.Contexts[raw.CurrentContext] == nil {
		return nil, "", fmt.Errorf("no current context (current-context %q)", raw.CurrentContext)
	}
	rc, err := clientcmd.NewDefaultClientConfig(*raw, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, "", fmt.Errorf("context %q: %w", raw.CurrentContext, err)
	}
	return rc, raw.CurrentContext, nil
}
