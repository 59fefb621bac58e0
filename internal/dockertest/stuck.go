package dockertest

// This file tells, after a run that failed, whether the engine stopped
// answering part of its API. Docker 20.10's libnetwork can deadlock when
// many containers exit while endpoints are deleted (moby/moby#46661, fixed
// in moby/libnetwork#2679, which Debian's 20.10.24 lacks): from then on
// /info, container removals and starts hang while /_ping and lists still
// answer, and the tests fail on timeouts that name no cause.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/docker/docker/client"
)

// infoWait is how long the check waits for /info: an engine that answers
// takes milliseconds, a loaded one a second or two.
const infoWait = 15 * time.Second

// EngineStuck returns an error naming the fault when the engine answers a
// ping but not /info within wait; nil when it answers both, or neither
// (no engine: the tests said so already).
func EngineStuck(ctx context.Context, cli *client.Client, wait time.Duration) error {
	pctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	if _, err := cli.Ping(pctx); err != nil {
		return nil
	}
	ictx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	_, err := cli.Info(ictx)
	if err == nil || !errors.Is(ictx.Err(), context.DeadlineExceeded) {
		return nil
	}
	return fmt.Errorf("the Docker Engine answers /_ping but not /info within %s: it is likely stuck in Docker 20.10's "+
		"libnetwork deadlock (moby/moby#46661), and every test that removed or started a container after it hung; "+
		"restart dockerd (its goroutine dump: kill -USR1 $(pidof dockerd)), remove the containers labelled %s, and run the tests again",
		wait, RunLabel)
}

// reportStuck prints EngineStuck's finding, if any, to the run's output.
func reportStuck() {
	cli, err := newClient()
	if err != nil {
		return
	}
	defer cli.Close()
	if err := EngineStuck(context.Background(), cli, infoWait); err != nil {
		fmt.Fprintf(os.Stderr, "dockertest: %v\n", err)
	}
}
