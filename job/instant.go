package job

import (
	"encoding/json"
	"time"
)

// Instant is an instant as nanoseconds since the Unix epoch, the zero
// value meaning none: a third of the size of a time.Time, for the times
// a scheduler keeps for every task. It encodes in JSON as a time.Time in
// UTC does.
type Instant int64

// At returns the instant of t (zero for the zero time).
func At(t time.Time) Instant {
	if t.IsZero() {
		return 0
	}
	return Instant(t.UnixNano())
}

// Time returns the instant in UTC (the zero time for the zero instant).
func (i Instant) Time() time.Time {
	if i == 0 {
		return time.Time{}
	}
	return time.Unix(0, int64(i)).UTC()
}

// IsZero reports whether i is the zero instant.
func (i Instant) IsZero() bool { return i == 0 }

// Before reports whether i is before t.
func (i Instant) Before(t time.Time) bool { return i.Time().Before(t) }

// After reports whether i is after t.
func (i Instant) After(t time.Time) bool { return i.Time().After(t) }

// MarshalJSON implements json.Marshaler.
func (i Instant) MarshalJSON() ([]byte, error) { return json.Marshal(i.Time()) }

// UnmarshalJSON implements json.Unmarshaler.
func (i *Instant) UnmarshalJSON(b []byte) error {
	var t time.Time
	if err := json.Unmarshal(b, &t); err != nil {
		return err
	}
	*i = At(t)
	return nil
}

// UnixNano returns the instant in nanoseconds since the Unix epoch.
func (i Instant) UnixNano() int64 { return int64(i) }

// Equal reports whether i is the instant t.
func (i Instant) Equal(t time.Time) bool { return i == At(t) }

// String formats the instant as time.Time does, in UTC.
func (i Instant) String() string { return i.Time().String() }
