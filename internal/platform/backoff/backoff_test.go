package backoff

import (
	"testing"
	"time"
)

func TestDelayDoublesWithinBounds(t *testing.T) {
	base, max := time.Second, 30*time.Second
	for _, c := range []struct {
		attempt int
		nominal time.Duration
	}{{0, time.Second}, {1, time.Second}, {2, 2 * time.Second}, {3, 4 * time.Second}, {5, 16 * time.Second}, {6, 30 * time.Second}, {60, 30 * time.Second}} {
		seen := map[time.Duration]bool{}
		for i := 0; i < 200; i++ {
			d := Delay(base, max, c.attempt)
			if d < c.nominal/2 || d > c.nominal {
				t.Fatalf("attempt %d: %v outside [%v, %v]", c.attempt, d, c.nominal/2, c.nominal)
			}
			seen[d] = true
		}
		if len(seen) < 10 {
			t.Errorf("attempt %d: only %d distinct delays in 200 draws: not jittered", c.attempt, len(seen))
		}
	}
}

func TestDelayDegenerateInputs(t *testing.T) {
	if d := Delay(0, time.Second, 3); d != 0 {
		t.Errorf("base 0: %v", d)
	}
	if d := Delay(time.Second, 0, 3); d < time.Second/2 || d > time.Second {
		t.Errorf("max below base: %v", d)
	}
}
