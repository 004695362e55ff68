package kube

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Options are the settings' kubernetes block.
type Options struct {
	// Kubeconfig is a kubeconfig file (its current context is used); ""
	// means the pod's in-cluster service account.
	Kubeconfig string
	// Logger receives the API server's warnings; nil: slog.Default().
	Logger *slog.Logger
}

// slogWarnings passes the API server's warning headers to slog (client-go
// would print them with klog, outside the executor's JSON logs).
type slogWarnings struct{ log *slog.Logger }

func (w slogWarnings) HandleWarningHeader(code int, agent, text string) {
	if code == 299 && text != "" {
		w.log.Warn("kubernetes API warning", slog.String("text", text))
	}
}

// Client reads Secrets. It is safe for concurrent use.
type Client struct {
	cs  kubernetes.Interface
	how string
	api string
}

// New makes a client: in-cluster when opts.Kubeconfig is empty, from the
// kubeconfig otherwise. Nothing is sent to the API server yet.
func New(opts Options) (*Client, error) {
	var cfg *rest.Config
	var how string
	if opts.Kubeconfig == "" {
		c, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("kubernetes: no in-cluster service account (%w); outside a pod, set the kubeconfig", err)
		}
		cfg, how = c, "in-cluster service account"
	} else {
		c, ctxName, err := restConfigFromKubeconfig(opts.Kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("kubernetes: kubeconfig %s: %w", opts.Kubeconfig, err)
		}
		cfg, how = c, "kubeconfig "+opts.Kubeconfig+" (context "+ctxName+")"
	}
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = "mcp-executor"
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	cfg.WarningHandler = slogWarnings{log: log}
	if cfg.Timeout == 0 {
		cfg.Timeout = 30 * time.Second
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client for %s: %w", cfg.Host, err)
	}
	return &Client{cs: cs, how: how, api: cfg.Host}, nil
}

// Auth says which credentials the client uses (no secret).
func (c *Client) Auth() string { return c.how }

// Server is the API server's address.
func (c *Client) Server() string { return c.api }

// ErrForbidden is matched (errors.Is) when the API server refuses the get.
var ErrForbidden = errors.New("forbidden")

// SecretValue returns data[key] of the Secret namespace/name, read with a
// single get. A missing Secret or key gives an error matching
// fs.ErrNotExist; a refused get one matching ErrForbidden, naming the
// Secret, the credentials and the Role the user needs.
func (c *Client) SecretValue(ctx context.Context, namespace, name, key string) ([]byte, error) {
	s, err := c.get(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	v, ok := s.Data[key]
	if !ok {
		return nil, fmt.Errorf("%s has no key %q: %w", c.where(namespace, name), key, fs.ErrNotExist)
	}
	return v, nil
}

// SecretExists reports whether the Secret namespace/name is there (one get).
func (c *Client) SecretExists(ctx context.Context, namespace, name string) (bool, error) {
	_, err := c.get(ctx, namespace, name)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

func (c *Client) where(namespace, name string) string {
	return fmt.Sprintf("kubernetes %s: Secret %s/%s", c.api, namespace, name)
}

func (c *Client) get(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	s, err := c.cs.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
	where := c.where(namespace, name)
	switch {
	case apierrors.IsNotFound(err):
		return nil, fmt.Errorf("%s: not found: %w", where, fs.ErrNotExist)
	case apierrors.IsForbidden(err):
		return nil, fmt.Errorf("%s: get refused for %s: the executor needs a Role granting get on resourceNames [%s] in namespace %s, bound to its service account: %w",
			where, c.how, name, namespace, ErrForbidden)
	case apierrors.IsUnauthorized(err):
		return nil, fmt.Errorf("%s: the API server does not accept the credentials of %s (token expired or wrong)", where, c.how)
	case err != nil:
		return nil, fmt.Errorf("%s: get: %w", where, err)
	}
	return s, nil
}
