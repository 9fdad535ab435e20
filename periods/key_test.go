package periods

import (
	"slices"
	"testing"
	"time"
)

func utc(y int, m time.Month, d, h int) time.Time { return time.Date(y, m, d, h, 0, 0, 0, time.UTC) }

func TestParseKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    Key
		wantErr bool
	}{
		{"2024031514", 2024031514, false},
		{"2024031500", 2024031500, false},
		{"2024030000", 2024030000, false},
		{"2024000000", 2024000000, false},
		{"20240315143059", 2024031514, false}, // an instant: minutes and seconds dropped
		{"2024022900", 2024022900, false},     // leap day
		{"2023022900", 0, true},               // not a leap year
		{"1900022900", 0, true},               // century, not a leap year
		{"2000022900", 2000022900, false},     // 400-year leap year
		{"2024043100", 0, true},               // April has 30 days
		{"2024123124", 0, true},               // hour 24
		{"2024130000", 0, true},               // month 13
		{"2024001500", 0, true},               // month 00 with a day
		{"2024030010", 0, true},               // day 00 with an hour
		{"0000010100", 0, true},               // year 0
		{"202403151", 0, true},                // nine digits
		{"2024-03-15", 0, true},
		{"20240300003000", 0, true}, // an instant needs a day
		{"20240315146000", 0, true}, // minute 60
		{"", 0, true},
	}
	for _, tt := range tests {
		got, err := ParseKey(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParseKey(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestQualifierParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		q   Qualifier
		in  string
		ok  bool
		why string
	}{
		{Hourly, "2024031514", true, ""},
		{Hourly, "2024031500", true, "hour 00 is an hour"},
		{Hourly, "2024030000", false, "a month is not an hour"},
		{Daily, "2024031500", true, ""},
		{Daily, "2024031514", false, "an hour is not a day"},
		{Monthly, "2024030000", true, ""},
		{Monthly, "2024031500", false, ""},
		{Yearly, "2024000000", true, ""},
		{Yearly, "2024010000", false, ""},
		{Yearly, "20240000000000", false, "instants are not keys"},
	}
	for _, tt := range tests {
		_, err := tt.q.Parse(tt.in)
		if (err == nil) != tt.ok {
			t.Errorf("%s.Parse(%q) error %v; want ok %v (%s)", tt.q, tt.in, err, tt.ok, tt.why)
		}
	}
}

func TestCast(t *testing.T) {
	t.Parallel()
	tests := []struct {
		q       Qualifier
		in      Key
		want    Key
		wantErr bool
	}{
		{Daily, 2024031514, 2024031500, false},
		{Monthly, 2024031514, 2024030000, false},
		{Yearly, 2024031514, 2024000000, false},
		{Hourly, 2024031514, 2024031514, false},
		{Hourly, 2024031500, 2024031500, false},
		{Daily, 2024030000, 0, true}, // a month cast to a day
		{Monthly, 2024000000, 0, true},
		{Yearly, 2024000000, 2024000000, false},
		{Daily, 2024023000, 0, true}, // ill-formed
	}
	for _, tt := range tests {
		got, err := tt.q.Cast(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("%s.Cast(%v) = %v, %v; want %v, error %v", tt.q, tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestBounds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		q          Qualifier
		k          Key
		start, end time.Time
		next, prev Key
	}{
		{Hourly, 2024031514, utc(2024, 3, 15, 14), utc(2024, 3, 15, 15), 2024031515, 2024031513},
		{Hourly, 2024123123, utc(2024, 12, 31, 23), utc(2025, 1, 1, 0), 2025010100, 2024123122},
		{Hourly, 2024010100, utc(2024, 1, 1, 0), utc(2024, 1, 1, 1), 2024010101, 2023123123},
		{Hourly, 2024022923, utc(2024, 2, 29, 23), utc(2024, 3, 1, 0), 2024030100, 2024022922},
		{Daily, 2024022800, utc(2024, 2, 28, 0), utc(2024, 2, 29, 0), 2024022900, 2024022700},
		{Daily, 2023022800, utc(2023, 2, 28, 0), utc(2023, 3, 1, 0), 2023030100, 2023022700},
		{Daily, 2024030100, utc(2024, 3, 1, 0), utc(2024, 3, 2, 0), 2024030200, 2024022900},
		{Daily, 2024123100, utc(2024, 12, 31, 0), utc(2025, 1, 1, 0), 2025010100, 2024123000},
		{Daily, 2024043000, utc(2024, 4, 30, 0), utc(2024, 5, 1, 0), 2024050100, 2024042900},
		{Monthly, 2024020000, utc(2024, 2, 1, 0), utc(2024, 3, 1, 0), 2024030000, 2024010000},
		{Monthly, 2024120000, utc(2024, 12, 1, 0), utc(2025, 1, 1, 0), 2025010000, 2024110000},
		{Monthly, 2024010000, utc(2024, 1, 1, 0), utc(2024, 2, 1, 0), 2024020000, 2023120000},
		{Yearly, 2024000000, utc(2024, 1, 1, 0), utc(2025, 1, 1, 0), 2025000000, 2023000000},
		{Hourly, 1969123123, utc(1969, 12, 31, 23), utc(1970, 1, 1, 0), 1970010100, 1969123122},
	}
	for _, tt := range tests {
		if got := tt.q.Start(tt.k); !got.Equal(tt.start) || got.Location() != time.UTC {
			t.Errorf("%s.Start(%v) = %v; want %v", tt.q, tt.k, got, tt.start)
		}
		if got := tt.q.End(tt.k); !got.Equal(tt.end) {
			t.Errorf("%s.End(%v) = %v; want %v", tt.q, tt.k, got, tt.end)
		}
		if got := tt.q.Next(tt.k); got != tt.next {
			t.Errorf("%s.Next(%v) = %v; want %v", tt.q, tt.k, got, tt.next)
		}
		if got := tt.q.Prev(tt.k); got != tt.prev {
			t.Errorf("%s.Prev(%v) = %v; want %v", tt.q, tt.k, got, tt.prev)
		}
		if got := tt.q.KeyAt(tt.start); got != tt.k {
			t.Errorf("%s.KeyAt(%v) = %v; want %v", tt.q, tt.start, got, tt.k)
		}
		if got := tt.q.KeyAt(tt.end.Add(-time.Nanosecond)); got != tt.k {
			t.Errorf("%s.KeyAt(end-1ns) = %v; want %v", tt.q, got, tt.k)
		}
	}
}

func TestKeyAtZone(t *testing.T) {
	t.Parallel()
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Skip("no zone data")
	}
	// 00:30 in Paris on 1 March is 23:30 UTC on 29 February.
	at := time.Date(2024, 3, 1, 0, 30, 0, 0, paris)
	if got := Hourly.KeyAt(at); got != 2024022923 {
		t.Errorf("KeyAt = %v; want 2024022923", got)
	}
}

func TestChildren(t *testing.T) {
	t.Parallel()
	tests := []struct {
		q, finer    Qualifier
		k           Key
		n           int
		first, last Key
	}{
		{Daily, Hourly, 2024031500, 24, 2024031500, 2024031523},
		{Monthly, Daily, 2024020000, 29, 2024020100, 2024022900},
		{Monthly, Daily, 2023020000, 28, 2023020100, 2023022800},
		{Monthly, Daily, 2024040000, 30, 2024040100, 2024043000},
		{Monthly, Daily, 2024120000, 31, 2024120100, 2024123100},
		{Yearly, Monthly, 2024000000, 12, 2024010000, 2024120000},
		{Yearly, Daily, 2024000000, 366, 2024010100, 2024123100},
		{Yearly, Daily, 2023000000, 365, 2023010100, 2023123100},
		{Monthly, Hourly, 2024020000, 29 * 24, 2024020100, 2024022923},
		{Yearly, Hourly, 2025000000, 8760, 2025010100, 2025123123},
	}
	for _, tt := range tests {
		got := tt.q.Children(tt.k, tt.finer)
		if len(got) != tt.n || got[0] != tt.first || got[len(got)-1] != tt.last {
			t.Errorf("%s.Children(%v, %s): %d from %v to %v; want %d from %v to %v", tt.q, tt.k, tt.finer,
				len(got), got[0], got[len(got)-1], tt.n, tt.first, tt.last)
			continue
		}
		if !slices.IsSorted(got) {
			t.Errorf("%s.Children(%v, %s) not sorted", tt.q, tt.k, tt.finer)
		}
		for _, c := range got {
			if p, err := tt.q.Cast(c); err != nil || p != tt.k || !tt.finer.Valid(c) {
				t.Errorf("child %v of %v casts to %v, %v", c, tt.k, p, err)
			}
		}
	}
	if got := Hourly.Children(2024031514, Daily); got != nil {
		t.Errorf("children at a coarser level: %v", got)
	}
}

// TestOrdinalRoundTrip walks four centuries of days, and hours around
// the edges, checking Add against the standard library.
func TestOrdinalRoundTrip(t *testing.T) {
	t.Parallel()
	day := utc(1899, 12, 25, 0)
	k := Daily.KeyAt(day)
	for i := range 146097 + 20 {
		if got := Daily.KeyAt(day); got != k {
			t.Fatalf("day %d: Add gives %v, the calendar %v", i, k, got)
		}
		if !Daily.Start(k).Equal(day) {
			t.Fatalf("Start(%v) = %v; want %v", k, Daily.Start(k), day)
		}
		day = day.AddDate(0, 0, 1)
		k = Daily.Next(k)
	}
	if got := Hourly.Add(2024022823, 2); got != 2024022901 {
		t.Errorf("Add = %v", got)
	}
	if got := Monthly.Add(2024110000, 14); got != 2026010000 {
		t.Errorf("Add = %v", got)
	}
	if got := Monthly.Sub(2026010000, 2024110000); got != 14 {
		t.Errorf("Sub = %v", got)
	}
}

func TestKeyText(t *testing.T) {
	t.Parallel()
	var k Key
	if err := k.UnmarshalText([]byte("2024031514")); err != nil || k != 2024031514 {
		t.Fatalf("UnmarshalText = %v, %v", k, err)
	}
	if b, _ := Key(99010100).MarshalText(); string(b) != "0099010100" {
		t.Errorf("MarshalText = %s", b)
	}
	var q Qualifier
	if err := q.UnmarshalText([]byte("weekly")); err == nil {
		t.Error("weekly accepted")
	}
	for _, name := range []string{"discrete", "continuous"} {
		var m StateMachine
		if err := m.UnmarshalText([]byte(name)); err != nil {
			t.Fatal(err)
		}
		if b, _ := m.MarshalText(); string(b) != name {
			t.Errorf("state machine %s marshals as %s", name, b)
		}
	}
	for _, name := range []string{"normal", "children", "dependencies"} {
		var b Blocking
		if err := b.UnmarshalText([]byte(name)); err != nil {
			t.Fatal(err)
		}
		if text, _ := b.MarshalText(); string(text) != name {
			t.Errorf("blocking %s marshals as %s", name, text)
		}
	}
	for s := Embryo; s < numStates; s++ {
		b, _ := s.MarshalText()
		var back State
		if err := back.UnmarshalText(b); err != nil || back != s {
			t.Errorf("state %v round trip: %v, %v", s, back, err)
		}
	}
}
func TestFormatEvery(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{90 * time.Second: "1m30s", 15 * time.Minute: "15m", time.Hour: "1h",
		90 * time.Minute: "1h30m", 24 * time.Hour: "24h", 5 * time.Second: "5s", time.Hour + time.Second: "1h0m1s"} {
		if got := formatEvery(d); got != want {
			t.Errorf("%v: %q, want %q", d, got, want)
		}
		if back, err := time.ParseDuration(formatEvery(d)); err != nil || back != d {
			t.Errorf("%v reads back as %v, %v", d, back, err)
		}
	}
}
