package vault

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/hashicorp/vault/api"
)

// ErrPermissionDenied is matched (errors.Is) by an *Error for HTTP 403.
var ErrPermissionDenied = errors.New("permission denied")

// Error is Vault refusing or failing a call. It names the server, the
// operation, the path and the auth method; never a value or a token. An
// *Error for HTTP 404 matches fs.ErrNotExist, one for 403
// ErrPermissionDenied.
type Error struct {
	Address  string
	Op       string // e.g. "reading KV field", "signing with Transit key"
	Path     string // the API path, e.g. "secret/data/mcp/keys"
	Auth     string // e.g. "kubernetes auth (mount kubernetes, role mcp-executor)"
	Status   int    // HTTP status, 0 when Vault was not reached
	Messages []string
	Err      error
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "vault %s: %s %s with %s: ", e.Address, e.Op, e.Path, e.Auth)
	switch e.Status {
	case 0:
		fmt.Fprintf(&b, "%v", e.Err)
		return b.String()
	case 403:
		b.WriteString("permission denied (the token's policies do not allow this path, or the token was revoked or has expired)")
	case 404:
		b.WriteString("not found")
	default:
		fmt.Fprintf(&b, "HTTP %d", e.Status)
	}
	if len(e.Messages) > 0 {
		b.WriteString(": ")
		b.WriteString(strings.Join(e.Messages, "; "))
	}
	return b.String()
}

func (e *Error) Unwrap() []error {
	errs := []error{}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	switch e.Status {
	case 403:
		errs = append(errs, ErrPermissionDenied)
	case 404:
		errs = append(errs, fs.ErrNotExist)
	}
	return errs
}

// status returns the HTTP status of a Vault response error, 0 otherwise.
func status(err error) int {
	var re *api.ResponseError
	if errors.As(err, &re) {
		return re.StatusCode
	}
	return 0
}

func (c *Client) fail(op, path string, err error) error {
	e := &Error{Address: c.address, Op: op, Path: path, Auth: c.auth.describe(), Err: err}
	var re *api.ResponseError
	if errors.As(err, &re) {
		e.Status = re.StatusCode
		if !re.RawError { // a raw body is not Vault's message; leave it out
			e.Messages = re.Errors
		}
	}
	return e
}
