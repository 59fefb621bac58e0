package dockertest_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/client"

	"github.com/replication-manager/replication-manager/internal/dockertest"
)

// fakeEngine answers /_ping, and /info only when infoHangs is false: the
// part of the API the deadlock leaves answering, and the part it stops.
func fakeEngine(t *testing.T, infoHangs bool) *client.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Api-Version", "1.41")
		switch {
		case strings.HasSuffix(r.URL.Path, "/_ping"):
			_, _ = w.Write([]byte("OK"))
		case strings.HasSuffix(r.URL.Path, "/info") && infoHangs:
			<-r.Context().Done()
		case strings.HasSuffix(r.URL.Path, "/info"):
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"ID":"fake"}`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	cli, err := client.NewClientWithOpts(client.WithHost("tcp://"+strings.TrimPrefix(srv.URL, "http://")), client.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cli.Close() })
	return cli
}

func TestAnEngineThatPingsButHangsOnInfoIsNamedStuck(t *testing.T) {
	err := dockertest.EngineStuck(t.Context(), fakeEngine(t, true), 200*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "moby/moby#46661") {
		t.Fatalf("EngineStuck = %v, want the deadlock named", err)
	}
}

func TestAnEngineThatAnswersInfoIsNotStuck(t *testing.T) {
	if err := dockertest.EngineStuck(t.Context(), fakeEngine(t, false), 5*time.Second); err != nil {
		t.Fatalf("EngineStuck = %v, want nil", err)
	}
}

func TestNoEngineIsNotStuck(t *testing.T) {
	cli, err := client.NewClientWithOpts(client.WithHost("tcp://127.0.0.1:1"))
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	if err := dockertest.EngineStuck(t.Context(), cli, time.Second); err != nil {
		t.Fatalf("EngineStuck with no engine = %v, want nil: the tests say so already", err)
	}
}
