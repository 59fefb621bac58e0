package main

import (
	"slices"
	"testing"
	"time"

	"github.com/replication-manager/replication-manager/api"
)

func TestCompletionOffersTheNodesAndTheLabelsOfTheirKeys(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	lease := e.grantLease(time.Hour)
	e.registerNode(api.Node{Name: "a", RegisteredAt: e.now}, lease)
	e.registerNode(api.Node{Name: "b", RegisteredAt: e.now}, lease)
	assertOK(t, e.runCLI("label", "node", "b", "zone=c", "disk=ssd"))
	etcd := []string{"--etcd-servers", e.etcd.ClientURL}

	for _, tt := range []struct {
		name string
		args []string
		want []string
	}{
		{"cordon", append(etcd, "cordon", ""), []string{"a", "b"}},
		{"uncordon", append(etcd, "uncordon", "b"), []string{"b"}},
		{"drain", append(etcd, "drain", ""), []string{"a", "b"}},
		{"one NODE only", append(etcd, "drain", "a", ""), nil},
		{"label", append(etcd, "label", ""), []string{"node"}},
		{"label node", append(etcd, "label", "node", ""), []string{"a", "b"}},
		{"the removal of a key's label", append(etcd, "label", "node", "b", "z"), []string{"zone-"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			words, directive := complete(t, tt.args...)
			if !slices.Equal(words, tt.want) || directive != noFileComp {
				t.Errorf("completion %q, %q; want %q, %q", words, directive, tt.want, noFileComp)
			}
		})
	}
}
