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
		{"only the tasks", []string{PartTasks}, func(*Config) {}, []string{PartTasks}, true},
		{"only the health-checked image", []string{PartHealth}, func(*Config) {}, []string{PartHealth}, true},
		{"only the pulled image", []string{PartPull}, func(*Config) {}, []string{PartPull}, true},
		{"a skip flag still applies", []string{PartRollout, PartTasks}, func(c *Config) { c.SkipRollout = true }, []string{PartTasks}, true},
		{"--skip-docker skips every part", nil, func(c *Config) { c.SkipDocker = true }, nil, false},
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
