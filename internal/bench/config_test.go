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
