package page

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/consent"
	"github.com/seed-6e06167c/mcp-executor/receipts/slip"
)

// ReadCancellation reads the cancellation file at path (the record's JSON)
// and checks it against the slip s with consent.CheckCancellation. A
// missing file is os.ErrNotExist.
func ReadCancellation(path string, s *slip.Slip) (*slip.Cancellation, error) {
	data, err := readRegular(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("page: reading the cancellation file %s: %w", path, err)
	}
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("page: the cancellation file %s is larger than 1 MiB", path)
	}
	v, err := recordValue(data)
	if err != nil {
		return nil, fmt.Errorf("page: the cancellation file %s: %w", path, err)
	}
	c, err := consent.CheckCancellation(v, s)
	if err != nil {
		return nil, fmt.Errorf("page: the cancellation file %s does not check: %w", path, err)
	}
	return c, nil
}

// FirstCancellation reads the cancellation files at paths in order and
// returns the first that checks against s, with its path. It is
// os.ErrNotExist when none is there; otherwise, when none checks, the
// first error of a file that is there.
func FirstCancellation(paths []string, s *slip.Slip) (*slip.Cancellation, string, error) {
	var firstErr error
	for _, path := range paths {
		c, err := ReadCancellation(path, s)
		if err == nil {
			return c, path, nil
		}
		if !errors.Is(err, os.ErrNotExist) && firstErr == nil {
			firstErr = err
		}
	}
	if firstErr == nil {
		firstErr = os.ErrNotExist
	}
	return nil, "", firstErr
}

// WatchCancellations watches every path as WatchCancellation does and
// calls honour once, for the first cancellation that checks at any of
// them; it returns then, or when ctx ends.
func WatchCancellations(ctx context.Context, paths []string, s *slip.Slip, poll time.Duration, logger *slog.Logger, honour func(*slip.Cancellation)) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var once sync.Once
	var wg sync.WaitGroup
	for _, path := range paths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			WatchCancellation(ctx, path, s, poll, logger, func(c *slip.Cancellation) {
				once.Do(func() {
					cancel() // the other watches end
					honour(c)
				})
			})
		}()
	}
	wg.Wait()
}

// WatchCancellation reads the cancellation file at path every poll (0:
// one second) until one checks against s, then calls honour once and
// returns; it returns when ctx ends. A file that does not check is logged
// (once per change of reason) and read again later.
func WatchCancellation(ctx context.Context, path string, s *slip.Slip, poll time.Duration, logger *slog.Logger, honour func(*slip.Cancellation)) {
	if poll <= 0 {
		poll = time.Second
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	tick := time.NewTicker(poll)
	defer tick.Stop()
	var lastBad string
	for {
		c, err := ReadCancellation(path, s)
		if err == nil {
			honour(c)
			return
		}
		if !errors.Is(err, os.ErrNotExist) && err.Error() != lastBad {
			lastBad = err.Error()
			logger.Warn("page: a cancellation file does not check", slog.String("file", path), slog.String("error", lastBad))
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
