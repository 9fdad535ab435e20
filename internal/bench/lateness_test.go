package bench

import (
	"testing"
	"testing/synctest"
	"time"
)

func TestDueNear(t *testing.T) {
	t.Parallel()
	minute := time.Date(2026, 11, 24, 10, 30, 0, 0, time.UTC)
	at := func(d time.Duration) int64 { return minute.Add(d).UnixNano() }
	for _, c := range []struct {
		name string
		k    int
		at   int64
		want int64
	}{
		{"on time", 5, at(5 * time.Second), at(5 * time.Second)},
		{"late", 5, at(5*time.Second + 3*time.Millisecond), at(5 * time.Second)},
		{"early", 5, at(5*time.Second - 3*time.Millisecond), at(5 * time.Second)},
		{"late into the next minute", 59, at(time.Minute + 2*time.Second), at(59 * time.Second)},
		{"early, from the minute before", 0, at(59 * time.Second), at(time.Minute)},
		{"schedule above 60", 125, at(5*time.Second + time.Millisecond), at(5 * time.Second)},
		{"29 s late", 10, at(39 * time.Second), at(10 * time.Second)},
	} {
		if got := DueNear(c.k, c.at); got != c.want {
			t.Errorf("%s: DueNear(%d, %s) = %s, want %s", c.name, c.k, time.Unix(0, c.at).UTC(), time.Unix(0, got).UTC(), time.Unix(0, c.want).UTC())
		}
	}
}

func TestTally(t *testing.T) {
	t.Parallel()
	minute := time.Date(2026, 11, 24, 10, 30, 0, 0, time.UTC)
	due := func(s int) int64 { return minute.Add(time.Duration(s) * time.Second).UnixNano() }
	ms := int64(time.Millisecond)
	// 70 schedules: at seconds 0-9 two are due, at 10-59 one.
	from, to := minute.Add(8*time.Second+time.Millisecond), minute.Add(12*time.Second)
	fires := []Fire{
		{K: 9, Due: due(9), At: due(9) + 2*ms},
		{K: 69, Due: due(9), At: due(9) + 1*ms},
		{K: 69, Due: due(9), At: due(9) + 4*ms}, // doubled
		{K: 10, Due: due(10), At: due(10) + 3*ms},
		{K: 11, Due: due(11), At: due(11) + 5*ms},
		{K: 12, Due: due(11), At: due(11)},           // stray: 12 is due at second 12
		{K: 8, Due: due(8), At: due(8)},              // due before the window
		{K: 12, Due: due(12), At: due(12)},           // due at its end
		{K: 70, Due: due(10), At: due(10)},           // no such schedule
		{K: 11, Due: due(11) + ms, At: due(11) + ms}, // not a whole second
	}
	l := Tally(70, from, to, fires)
	if l.Due != 4 || l.Fired != 4 || l.Doubled != 1 || l.Stray != 3 || l.Missed() != 0 {
		t.Errorf("due %d, fired %d, doubled %d, stray %d, missed %d; want 4, 4, 1, 3, 0", l.Due, l.Fired, l.Doubled, l.Stray, l.Missed())
	}
	want := []time.Duration{time.Millisecond, 2 * time.Millisecond, 3 * time.Millisecond, 4 * time.Millisecond, 5 * time.Millisecond}
	if len(l.Late) != len(want) {
		t.Fatalf("lateness %v, want %v", l.Late, want)
	}
	for i := range want {
		if l.Late[i] != want[i] {
			t.Fatalf("lateness %v, want %v", l.Late, want)
		}
	}
	if l := Tally(70, from, to, fires[3:4]); l.Missed() != 3 {
		t.Errorf("with one fire of 4: missed %d, want 3", l.Missed())
	}
}

// TestSchedulers runs the baseline and every peer for a few minutes of
// fake time: each must fire every occurrence once, on time.
func TestSchedulers(t *testing.T) {
	t.Parallel()
	const n = 150
	run := map[string]func(t *testing.T, from, to time.Time) []Fire{
		"baseline": func(_ *testing.T, _, to time.Time) []Fire { return HeapTimer(n, to.Add(time.Second)) },
	}
	for _, name := range Peers() {
		run[name] = func(t *testing.T, from, to time.Time) []Fire {
			p, err := StartPeer(name, n, 10*n)
			if err != nil {
				t.Fatal(err)
			}
			l, err := Await(n, from, to, time.Second, 10*time.Second, p.Fires)
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Stop(); err != nil {
				t.Fatal(err)
			}
			if l.Missed() != 0 {
				t.Errorf("Await returned with %d missed", l.Missed())
			}
			fires, _ := p.Fires()
			return fires
		}
	}
	for name, run := range run {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				from := time.Now().Add(time.Second)
				to := from.Add(3 * time.Minute)
				l := Tally(n, from, to, run(t, from, to))
				if l.Due != 3*n || l.Fired != l.Due || l.Doubled != 0 || l.Stray != 0 {
					t.Errorf("due %d, fired %d, doubled %d, stray %d; want %d, %d, 0, 0", l.Due, l.Fired, l.Doubled, l.Stray, 3*n, 3*n)
				}
				if l.Late[len(l.Late)-1] != 0 {
					t.Errorf("a fire %s late in fake time", l.Late[len(l.Late)-1])
				}
			})
		})
	}
}
