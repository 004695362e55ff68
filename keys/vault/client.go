package vault

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/hashicorp/vault/api"
)

// Client is a logged-in (on first use) connection to Vault. It is safe for
// concurrent use. Close stops its renewal loop.
type Client struct {
	address string
	auth    authMethod
	api     *api.Client // carries the token
	lc      *api.Client // logs in; never carries a token
	log     *slog.Logger

	loginMu sync.Mutex // one login at a time

	mu        sync.Mutex
	loggedIn  bool
	expiresAt time.Time     // zero: the token does not expire
	refreshAt time.Time     // zero: nothing to do
	leaseTTL  time.Duration // the lifetime asked for when renewing
	renewable bool
	logins    int
	renewals  int
	lastErr   error

	startLoop sync.Once
	life      context.Context // ends at Close; bounds the renewal loop's calls
	endLife   context.CancelFunc
	wake      chan struct{}
	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

// New makes a client from opts. Nothing is sent to Vault until the first
// call (or Login).
func New(opts Options) (*Client, error) {
	m, err := newAuthMethod(opts.Auth)
	if err != nil {
		return nil, err
	}
	mk := func() (*api.Client, error) {
		cfg := api.DefaultConfig() // reads VAULT_ADDR, VAULT_CACERT, ...
		if cfg.Error != nil {
			return nil, fmt.Errorf("vault settings from the environment: %w", cfg.Error)
		}
		if opts.Address != "" {
			cfg.Address = opts.Address
		}
		if opts.CAFile != "" {
			if err := cfg.ConfigureTLS(&api.TLSConfig{CACert: opts.CAFile}); err != nil {
				return nil, fmt.Errorf("vault CA file %s: %w", opts.CAFile, err)
			}
		}
		c, err := api.NewClient(cfg)
		if err != nil {
			return nil, fmt.Errorf("vault client for %s: %w", cfg.Address, err)
		}
		c.ClearToken() // NewClient takes VAULT_TOKEN; only token auth may use it
		if opts.Namespace != "" {
			c.SetNamespace(opts.Namespace)
		}
		return c, nil
	}
	tc, err := mk()
	if err != nil {
		return nil, err
	}
	lc, err := mk()
	if err != nil {
		return nil, err
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	life, endLife := context.WithCancel(context.Background())
	return &Client{
		life:    life,
		endLife: endLife,
		address: tc.Address(),
		auth:    m,
		api:     tc,
		lc:      lc,
		log:     log.With(slog.String("vault", tc.Address()), slog.String("auth", m.name())),
		wake:    make(chan struct{}, 1),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}, nil
}

// Address is the Vault server's address.
func (c *Client) Address() string { return c.address }

// AuthMethod names how the client logs in, with its public parameters.
func (c *Client) AuthMethod() string { return c.auth.describe() }

// Close stops the renewal loop. The token is left to expire (it is not
// revoked: another executor may share a static token).
func (c *Client) Close() {
	c.closeOnce.Do(func() {
		close(c.stop)
		c.endLife()
		c.startLoop.Do(func() { close(c.done) }) // loop never started
		<-c.done
	})
}

// Login logs in now if the client has not yet.
func (c *Client) Login(ctx context.Context) error {
	c.mu.Lock()
	in := c.loggedIn
	c.mu.Unlock()
	if in {
		return nil
	}
	return c.relogin(ctx, "")
}

// relogin logs in again unless another caller already replaced stale (the
// token that failed; "" when there was none).
func (c *Client) relogin(ctx context.Context, stale string) error {
	c.loginMu.Lock()
	defer c.loginMu.Unlock()
	c.mu.Lock()
	replaced := c.loggedIn && c.api.Token() != stale
	c.mu.Unlock()
	if replaced {
		return nil
	}
	g, err := c.auth.login(ctx, c.lc, c.api)
	if err != nil {
		err = c.fail("logging in", c.loginPath(), err)
		c.mu.Lock()
		c.lastErr = err
		c.mu.Unlock()
		return err
	}
	c.api.SetToken(g.token)
	now := time.Now()
	c.mu.Lock()
	c.loggedIn = true
	c.logins++
	c.lastErr = nil
	c.leaseTTL = g.ttl
	if g.period > 0 {
		c.leaseTTL = g.period
	}
	c.renewable = g.renewable
	c.setLifetime(now, g.ttl)
	if g.token == stale {
		// token auth gave the same token again: it cannot be extended
		// further; look again when it has expired, in case the file was
		// replaced by then
		c.refreshAt = c.expiresAt
	}
	c.mu.Unlock()
	c.log.Info("vault login", slog.String("ttl", g.ttl.String()), slog.Bool("renewable", g.renewable))
	c.startLoop.Do(func() { go c.keepAlive() })
	c.poke()
	return nil
}

func (c *Client) loginPath() string {
	switch m := c.auth.(type) {
	case kubernetesLogin:
		return "auth/" + m.Mount + "/login"
	case appRoleLogin:
		return "auth/" + m.Mount + "/login"
	default:
		return "auth/token/lookup-self"
	}
}

// setLifetime records a token lifetime of ttl from now; c.mu is held.
func (c *Client) setLifetime(now time.Time, ttl time.Duration) {
	if ttl <= 0 {
		c.expiresAt, c.refreshAt = time.Time{}, time.Time{}
		return
	}
	c.expiresAt = now.Add(ttl)
	c.refreshAt = now.Add(ttl * 2 / 3)
}

func (c *Client) poke() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// keepAlive renews the token at two thirds of its lifetime and logs in
// again when it cannot be renewed (not renewable, or near its max TTL).
func (c *Client) keepAlive() {
	defer close(c.done)
	for {
		c.mu.Lock()
		at := c.refreshAt
		c.mu.Unlock()
		var fire <-chan time.Time
		var t *time.Timer
		if !at.IsZero() {
			t = time.NewTimer(time.Until(at))
			fire = t.C
		}
		select {
		case <-c.stop:
			if t != nil {
				t.Stop()
			}
			return
		case <-c.wake:
			if t != nil {
				t.Stop()
			}
		case <-fire:
			c.refresh()
		}
	}
}

// refresh extends or replaces the token; on failure it tries again soon.
func (c *Client) refresh() {
	ctx, cancel := context.WithTimeout(c.life, 30*time.Second)
	defer cancel()
	c.mu.Lock()
	renewable, ttl, expires := c.renewable, c.leaseTTL, c.expiresAt
	c.mu.Unlock()
	tok := c.api.Token()
	if renewable {
		s, err := c.api.Auth().Token().RenewSelfWithContext(ctx, int(ttl/time.Second))
		if err == nil && s != nil && s.Auth != nil {
			got := time.Duration(s.Auth.LeaseDuration) * time.Second
			if got >= ttl/2 {
				c.mu.Lock()
				c.renewals++
				c.setLifetime(time.Now(), got)
				c.mu.Unlock()
				c.log.Debug("vault token renewed", slog.String("ttl", got.String()))
				return
			}
			c.log.Info("vault token near its max ttl; logging in again", slog.String("ttl", got.String()))
		} else if err != nil {
			c.log.Warn("vault token renewal failed; logging in again", slog.String("error", c.fail("renewing token", "auth/token/renew-self", err).Error()))
		}
	}
	if err := c.relogin(ctx, tok); err != nil {
		retry := 30 * time.Second
		if left := time.Until(expires); left > 0 {
			retry = min(max(left/4, time.Second), retry)
		}
		c.log.Warn("vault re-login failed; trying again", slog.String("in", retry.String()), slog.String("error", err.Error()))
		c.mu.Lock()
		c.refreshAt = time.Now().Add(retry)
		c.mu.Unlock()
	}
}

// call runs fn with a logged-in client. When Vault answers 403 and the
// token itself is no longer good (revoked or expired), it logs in again and
// runs fn once more.
func (c *Client) call(ctx context.Context, op, path string, fn func(*api.Client) (*api.Secret, error)) (*api.Secret, error) {
	if err := c.Login(ctx); err != nil {
		return nil, err
	}
	tok := c.api.Token()
	s, err := fn(c.api)
	if err != nil && status(err) == 403 && c.tokenGone(ctx) {
		c.log.Info("vault token refused (revoked or expired); logging in again", slog.String("op", op), slog.String("path", path))
		if lerr := c.relogin(ctx, tok); lerr != nil {
			return nil, lerr
		}
		s, err = fn(c.api)
	}
	if err != nil {
		return nil, c.fail(op, path, err)
	}
	return s, nil
}

// tokenGone reports whether the current token is refused even for looking
// itself up, which every live token with the default policy may do.
func (c *Client) tokenGone(ctx context.Context) bool {
	_, err := c.api.Auth().Token().LookupSelfWithContext(ctx)
	return status(err) == 403
}

// Status is what check shows about the connection; it holds no secret.
type Status struct {
	Address   string
	Auth      string
	LoggedIn  bool
	ExpiresAt time.Time // zero: does not expire (or not logged in)
	Renewable bool
	Logins    int
	Renewals  int
	Err       error // the last login failure, if the last login failed
}

// Status returns the connection's state without reaching Vault.
func (c *Client) Status() Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	return Status{
		Address: c.address, Auth: c.auth.describe(), LoggedIn: c.loggedIn,
		ExpiresAt: c.expiresAt, Renewable: c.renewable, Logins: c.logins, Renewals: c.renewals, Err: c.lastErr,
	}
}
