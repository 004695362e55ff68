// Command opensslts is an RFC 3161 time-stamp authority for tests, signing with RSA through OpenSSL's
// `openssl ts -reply`, which has no server of its own: this program is the HTTP front that hands it
// each request. It is the second, independent authority beside Sigstore's timestamp-server
// (scripts/testenv/openssl-tsa.sh starts it; tests only).
//
// At start it makes, in -dir, a root CA and a TSA certificate the root signs (RSA; extendedKeyUsage
// timeStamping, critical, as RFC 3161 asks), the chain (chain.pem, the TSA's certificate first) and the
// configuration `openssl ts` reads. Then it serves on -listen:
//
//	POST /           a DER TimeStampReq (Content-Type application/timestamp-query, at most 64 KiB);
//	                 the answer is openssl's DER TimeStampResp (application/timestamp-reply): granted,
//	                 or, for a request it cannot read, a rejection (status 2); 400 with
//	                 openssl's words only when openssl gave no answer at all
//	GET  /chain.pem  the chain
//
// Requests are answered one at a time: openssl counts serial numbers in a file.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:18331", "the `address` to serve on")
	dir := flag.String("dir", "", "the `folder` for the certificates, keys and openssl's files (made when missing)")
	openssl := flag.String("openssl", "openssl", "the openssl `command`")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := run(*listen, *dir, *openssl, log); err != nil {
		log.Error("opensslts stopped", slog.String("err", err.Error()))
		os.Exit(1)
	}
}

func run(listen, dir, openssl string, log *slog.Logger) error {
	if dir == "" {
		return errors.New("-dir is needed")
	}
	a, err := newAuthority(dir, openssl)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: a.handler(log), ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(shut) //nolint:errcheck // the process ends either way
	}()
	log.Info("opensslts serving", slog.String("addr", ln.Addr().String()), slog.String("chain", a.chainFile()))
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serving on %s: %w", listen, err)
	}
	return nil
}
