package approvalkube

import (
	"fmt"
	"log/slog"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/seed-6e06167c/mcp-executor/sidecar/settings"
)

// FromSettings makes the channel the settings ask for: nil (and no error) when they have no
// approvals.kubernetes block. The client is the settings' kubernetes.kubeconfig when set, else the
// pod's in-cluster service account. The engine passes the channel in approval.Options.Channels:
//
//	ch, err := approvalkube.FromSettings(s, logger)
//	...
//	if ch != nil {
//		channels = append(channels, ch)
//	}
func FromSettings(s *settings.Settings, logger *slog.Logger) (*Channel, error) {
	k := s.Approvals.Kubernetes
	if k == nil {
		return nil, nil
	}
	var cfg *rest.Config
	if s.Kubernetes != nil && s.Kubernetes.Kubeconfig != "" {
		c, err := clientcmd.BuildConfigFromFlags("", s.Kubernetes.Kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("approvalkube: kubeconfig %s (settings kubernetes.kubeconfig): %w", s.Kubernetes.Kubeconfig, err)
		}
		cfg = c
	}
	return New(Options{Namespace: k.Namespace, Config: cfg, Executor: s.Name, Logger: logger})
}
