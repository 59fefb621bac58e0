package agent

// This file pulls images beside the sync (docs/CONTRACT.md, Images): a
// sync that needs an image the engine lacks asks the puller and moves on;
// the pull runs in a goroutine of its own, one per image reference at a
// time and at most pullsPerNode at once, and wakes every controller that
// waited for it when it ends. A failed pull backs off per image, doubling
// from pullFirstDelay to pullMaxDelay, so that an image that cannot be
// pulled costs the engine a few calls a minute, whatever asks for it.

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/replication-manager/replication-manager/api"
)

const (
	// pullsPerNode is how many pulls run at once on one engine.
	pullsPerNode = 3
	// pullFirstDelay and pullMaxDelay bound the backoff after a failed
	// pull of one image.
	pullFirstDelay = time.Second
	pullMaxDelay   = 5 * time.Minute
)

// pullWait is what a sync learns from the puller about one image.
type pullWait struct {
	// ready: a pull recent enough for the asker has brought the image.
	ready bool
	// pulling: a pull is under way, since since; the asker is woken when
	// it ends.
	pulling bool
	since   time.Time
	// err is the last pull's failure while its backoff runs, and retryIn
	// how long that has left.
	err     error
	retryIn time.Duration
}

// imagePull is what the puller knows of one image reference.
type imagePull struct {
	running bool
	started time.Time
	// okStarted and okFinished are the times of the last successful pull.
	okStarted, okFinished time.Time
	// err is the last pull's failure, failures how many in a row, and
	// retryAt when the next may start.
	err      error
	failures int
	retryAt  time.Time
	// waiters are the controllers to wake when the pull ends.
	waiters map[string]bool
}

// puller runs the pulls of one node.
type puller struct {
	pull   func(ctx context.Context, image string) error
	now    func() time.Time
	wake   func(id string)
	record func(id string, ev note)
	slots  chan struct{}

	mu     sync.Mutex
	images map[string]*imagePull
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func newPuller(pull func(context.Context, string) error, now func() time.Time, wake func(string), record func(string, note)) *puller {
	ctx, cancel := context.WithCancel(context.Background())
	return &puller{pull: pull, now: now, wake: wake, record: record, slots: make(chan struct{}, pullsPerNode),
		images: map[string]*imagePull{}, ctx: ctx, cancel: cancel}
}

// stop cancels the pulls under way and waits for them.
func (p *puller) stop() {
	p.cancel()
	p.wg.Wait()
}

// failing returns the last failure of image's pulls, if its last pull
// failed: the engine lacks the image, and the next look pulls without
// asking first.
func (p *puller) failing(image string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ip := p.images[image]; ip != nil {
		return ip.err
	}
	return nil
}

// want asks for image on behalf of controller id. With fresh false (the
// engine lacked the image at since) a pull that ended at or after since
// will do; with fresh true (imagePullPolicy Always) only one that began at
// or after since. Otherwise it joins the pull under way, waits out the
// backoff of a failed one, or starts one.
func (p *puller) want(id, image string, since time.Time, fresh bool) pullWait {
	p.mu.Lock()
	defer p.mu.Unlock()
	ip := p.images[image]
	if ip == nil {
		ip = &imagePull{waiters: map[string]bool{}}
		p.images[image] = ip
	}
	if !ip.okFinished.IsZero() && ((fresh && !ip.okStarted.Before(since)) || (!fresh && !ip.okFinished.Before(since))) {
		return pullWait{ready: true}
	}
	if ip.running {
		ip.waiters[id] = true
		return pullWait{pulling: true, since: ip.started}
	}
	now := p.now()
	if !fresh && ip.err == nil && !ip.okFinished.IsZero() && now.Sub(ip.okFinished) < time.Minute {
		// the engine lacks the image a pull brought a moment ago: count
		// it as a failure, or each look would pull again
		ip.failures++
		ip.err = fmt.Errorf("pull %s: the engine lacks the image after its pull", image)
		ip.retryAt = ip.okFinished.Add(pullDelay(ip.failures))
	}
	if ip.err != nil && now.Before(ip.retryAt) {
		return pullWait{err: ip.err, retryIn: ip.retryAt.Sub(now)}
	}
	ip.running, ip.started = true, now
	ip.waiters[id] = true
	p.wg.Add(1)
	go p.run(image, ip, now)
	return pullWait{pulling: true, since: now}
}

// run pulls image once a slot is free, records the result and wakes the
// waiters, each with an event.
func (p *puller) run(image string, ip *imagePull, started time.Time) {
	defer p.wg.Done()
	select {
	case p.slots <- struct{}{}:
	case <-p.ctx.Done():
		return
	}
	err := p.pull(p.ctx, image)
	<-p.slots
	if p.ctx.Err() != nil {
		return // stopping: no result to keep
	}
	p.mu.Lock()
	now := p.now()
	ip.running = false
	waiters := ip.waiters
	ip.waiters = map[string]bool{}
	var ev note
	if err == nil {
		ip.okStarted, ip.okFinished, ip.err, ip.failures = started, now, nil, 0
		ev = note{api.EventNormal, "Pulled", fmt.Sprintf("pulled image %s in %s", image, now.Sub(started).Round(time.Millisecond))}
	} else {
		ip.failures++
		delay := pullDelay(ip.failures)
		ip.err, ip.retryAt = err, now.Add(delay)
		ev = note{api.EventWarning, "PullFailed", fmt.Sprintf("%v (next attempt in %s)", err, delay)}
	}
	p.mu.Unlock()
	for id := range waiters {
		p.record(id, ev)
		p.wake(id)
	}
}

// pullDelay is the backoff after failures failed pulls in a row.
func pullDelay(failures int) time.Duration {
	return min(pullFirstDelay<<min(failures-1, 20), pullMaxDelay)
}
