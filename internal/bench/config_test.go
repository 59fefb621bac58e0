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

func TestOnlyNamesThePartsARunMeasures(t *testing.T) {
	c := DefaultConfig()
	for _, part := range Parts {
		if !c.runs(part) {
			t.Errorf("by default, %s does not run", part)
		}
	}
	c.Only = []string{PartRollout, PartTasks}
	for _, part := range Parts {
		if got, want := c.runs(part), part == PartRollout || part == PartTasks; got != want {
			t.Errorf("--only rollout,tasks: runs(%s) = %v, want %v", part, got, want)
		}
	}
}
