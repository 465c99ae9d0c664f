package client

import (
	"testing"
	"time"
)

// The old option names keep compiling and set what the new ones set.
func TestDeprecatedOptionNames(t *testing.T) {
	old := newOptions([]Option{WithRequestTimeout(5 * time.Second), WithMaxCallTime(7 * time.Second)})
	now := newOptions([]Option{WithDefaultTimeout(5 * time.Second), WithDefaultMaxTime(7 * time.Second)})
	if old.requestTimeout != 5*time.Second || old.maxCallTime != 7*time.Second ||
		old.requestTimeout != now.requestTimeout || old.maxCallTime != now.maxCallTime {
		t.Errorf("old names: timeout %v, max %v; new names: %v, %v", old.requestTimeout, old.maxCallTime, now.requestTimeout, now.maxCallTime)
	}
	if DefaultRequestTimeout != DefaultTimeout || newOptions(nil).requestTimeout != DefaultTimeout {
		t.Errorf("default timeout %v, old name %v", DefaultTimeout, DefaultRequestTimeout)
	}
	var a, b callOptions
	Repeatable()(&a)
	AsReplayable()(&b)
	if !a.repeatable || !b.repeatable {
		t.Errorf("Repeatable sets %v, AsReplayable %v", a.repeatable, b.repeatable)
	}
}
