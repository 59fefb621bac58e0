package bench

import (
	"strings"
	"testing"
)

func TestDefaultConfigIsValid(t *testing.T) {
	c := DefaultConfig()
	if err := c.Validate(); err != nil {
		t.Errorf("default config: %v", err)
	}
}

func TestValidateWantsEnoughEndToEndTriesForAP99(t *testing.T) {
	c := DefaultConfig()
	c.EndToEndTries = minP99Samples - 1
	err := c.Validate()
	if err == nil || !strings.Contains(err.Error(), "--e2e-tries") {
		t.Errorf("--e2e-tries %d: error %v, want one naming the flag", c.EndToEndTries, err)
	}
}

func TestValidateNamesAnUnknownPart(t *testing.T) {
	c := DefaultConfig()
	c.Only = []string{PartRollout, "rollouts"}
	err := c.Validate()
	if err == nil || !strings.Contains(err.Error(), `--only: no part "rollouts"`) {
		t.Errorf("--only rollout,rollouts: error %v, want one naming the unknown part", err)
	}
}

func TestOnlyAndTheSkipFlagsTogether(t *testing.T) {
	tests := []struct {
		name   string
		only   []string
		skip   func(*Config)
		runs   []string
		docker bool
	}{
		{"every part by default", nil, func(*Config) {}, Parts, true},
		{"only the rolling updates", []string{PartRollout}, func(*Config) {}, []string{PartRollout}, true},
		{"only the control plane", []string{PartScale}, func(*Config) {}, []string{PartScale}, false},
		{"only the scheduler over nodes", []string{PartNodes}, func(*Config) {}, []string{PartNodes}, false},
		{"--skip-scale skips the scheduler over nodes too", nil, func(c *Config) { c.SkipScale = true },
			[]string{PartConvergence, PartTasks, PartHealth, PartReplacement, PartEndToEnd, PartRollout, PartMissingImage, PartGoBench}, true},
		{"only the tasks", []string{PartTasks}, func(*Config) {}, []string{PartTasks}, true},
		{"only the health-checked image", []string{PartHealth}, func(*Config) {}, []string{PartHealth}, true},
		{"a skip flag still applies", []string{PartRollout, PartScale}, func(c *Config) { c.SkipRollout = true }, []string{PartScale}, false},
		{"--skip-docker skips the rolling updates", nil, func(c *Config) { c.SkipDocker = true }, []string{PartScale, PartNodes, PartGoBench}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig()
			c.Only = tt.only
			tt.skip(&c)
			for _, part := range Parts {
				want := false
				for _, p := range tt.runs {
					want = want || p == part
				}
				if got := c.runs(part); got != want {
					t.Errorf("runs(%s) = %v, want %v", part, got, want)
				}
			}
			if got := c.runsDocker(); got != tt.docker {
				t.Errorf("runsDocker() = %v, want %v", got, tt.docker)
			}
		})
	}
}

func TestValidateNamesTheNodesFlags(t *testing.T) {
	tests := []struct {
		flag string
		set  func(*Config)
	}{
		{"--nodes-controllers", func(c *Config) { c.NodesControllers = 0 }},
		{"--nodes-count", func(c *Config) { c.NodesCount = 1 }},
		{"--nodes-grace", func(c *Config) { c.NodesGrace = 0 }},
		{"--nodes-sync-period", func(c *Config) { c.NodesSyncPeriod = 0 }},
		{"--nodes-periods", func(c *Config) { c.NodesPeriods = 0 }},
	}
	for _, tt := range tests {
		c := DefaultConfig()
		tt.set(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tt.flag) {
			t.Errorf("bad %s: error %v, want one naming the flag", tt.flag, err)
		}
	}
}
