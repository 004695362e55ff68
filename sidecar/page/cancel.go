package page

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
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
