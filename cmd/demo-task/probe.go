package main

// This file is the sidecar mode of the demo task, --probe URL: the server
// GETs URL every --probe-interval and answers /healthz with 200 only while
// the last probe got a 200, so that a sidecar that probes its task's first
// container on 127.0.0.1 is healthy exactly while it reaches it.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"
)

// prober probes one URL in the background and remembers the last result.
type prober struct {
	url      string
	interval time.Duration
	// ok holds whether the last probe succeeded; false until one has.
	ok atomic.Bool
	// last is the last probe's failure, or "" after a success.
	last atomic.Value
}

// newProber returns a prober of url, or nil when url is empty.
func newProber(url string, interval time.Duration) *prober {
	if url == "" {
		return nil
	}
	p := &prober{url: url, interval: interval}
	p.last.Store("not probed yet")
	return p
}

// run probes at once and then every interval until ctx ends, writing each
// change of the result to stdout.
func (p *prober) run(ctx context.Context, stdout io.Writer) {
	ticker := time.NewTicker(p.interval)
	defer ticker.Stop()
	for {
		err := probeOnce(ctx, p.url)
		if ctx.Err() != nil {
			return
		}
		was := p.ok.Swap(err == nil)
		if err == nil {
			p.last.Store("")
			if !was {
				fmt.Fprintf(stdout, "probe %s: ok\n", p.url)
			}
		} else {
			p.last.Store(err.Error())
			if was {
				fmt.Fprintf(stdout, "probe %s: %v\n", p.url, err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// healthy reports whether the last probe succeeded, and else why not.
func (p *prober) healthy() (bool, string) {
	if p.ok.Load() {
		return true, ""
	}
	return false, p.last.Load().(string)
}

// probeOnce GETs url and succeeds only on 200.
func probeOnce(ctx context.Context, url string) error {
	ctx, cancel := context.WithTimeout(ctx, healthcheckTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s", resp.Status)
	}
	return nil
}
