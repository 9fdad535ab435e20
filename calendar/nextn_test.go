package calendar

import (
	"testing"
	"time"
)

// The next fires of cron expressions, as other crons' test suites state
// them (expression, zone, start, next N), for the readings
// docs/definitions.md ("Cron expressions", "How other crons differ") and
// docs/semantics.md ("Daylight saving") give: each expected instant is
// worked out from those pages, not from a run.
func TestCronNextN(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		expr, zone, start string
		want              []string
	}{
		// A time the clock skips fires once, when the gap ends; a time it
		// shows twice fires once, the first time.
		{"0 30 2 * * *", "America/New_York", "2026-03-07T12:00:00Z", []string{"2026-03-08T07:00:00Z", "2026-03-09T06:30:00Z"}},
		{"0 30 1 * * *", "America/New_York", "2026-10-31T12:00:00Z", []string{"2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z"}},
		{"1 2 * * *", "Europe/Paris", "2026-03-28T12:00:00Z", []string{"2026-03-29T01:00:00Z", "2026-03-30T00:01:00Z"}},
		// An hour field led by * follows elapsed time: both 01:00s of a
		// fall-back night, and no 02:00 on a spring-forward one.
		{"0 0 * * * *", "America/New_York", "2026-11-01T04:30:00Z", []string{"2026-11-01T05:00:00Z", "2026-11-01T06:00:00Z", "2026-11-01T07:00:00Z"}},
		{"0 0 * * * *", "America/New_York", "2026-03-08T05:30:00Z", []string{"2026-03-08T06:00:00Z", "2026-03-08T07:00:00Z", "2026-03-08T08:00:00Z"}},
		{"14 14 * * *", "Asia/Kolkata", "2026-01-03T08:39:03Z", []string{"2026-01-03T08:44:00Z", "2026-01-04T08:44:00Z"}},
		{"0 0 9 10 * ?", "America/Sao_Paulo", "2026-10-17T12:00:00Z", []string{"2026-11-10T12:00:00Z", "2026-12-10T12:00:00Z"}},
		// Vixie's day rule: a stepped * must hold with the other field; two
		// restricted fields, either.
		{"0 0 */10 * sun", "UTC", "2026-01-01T00:00:00Z", []string{"2026-01-11T00:00:00Z", "2026-02-01T00:00:00Z", "2026-03-01T00:00:00Z", "2026-05-31T00:00:00Z"}},
		{"0 0 13 * fri", "UTC", "2026-01-10T00:00:00Z", []string{"2026-01-13T00:00:00Z", "2026-01-16T00:00:00Z", "2026-01-23T00:00:00Z", "2026-01-30T00:00:00Z"}},
		{"0 0 * * *,sat#3", "UTC", "2026-01-01T00:00:00Z", []string{"2026-01-02T00:00:00Z", "2026-01-03T00:00:00Z"}},
		// Steps count on through a wrap; a range from a day to itself is
		// that day.
		{"0 0 * * thu-tue/2", "UTC", "2026-01-01T00:00:00Z", []string{"2026-01-03T00:00:00Z", "2026-01-05T00:00:00Z", "2026-01-08T00:00:00Z", "2026-01-10T00:00:00Z"}},
		{"0 0 1 apr-mar/2 *", "UTC", "2026-01-01T12:00:00Z", []string{"2026-02-01T00:00:00Z", "2026-04-01T00:00:00Z", "2026-06-01T00:00:00Z", "2026-08-01T00:00:00Z"}},
		{"0 0 * * sun-sun", "UTC", "2026-01-01T00:00:00Z", []string{"2026-01-04T00:00:00Z", "2026-01-11T00:00:00Z"}},
		{"0 0 * * 7-3", "UTC", "2026-01-01T00:00:00Z", []string{"2026-01-04T00:00:00Z", "2026-01-05T00:00:00Z", "2026-01-06T00:00:00Z", "2026-01-07T00:00:00Z", "2026-01-11T00:00:00Z"}},
		// Seconds first, a year last, @every.
		{"15,45 */20 * * * *", "UTC", "2026-01-01T00:19:50Z", []string{"2026-01-01T00:20:15Z", "2026-01-01T00:20:45Z", "2026-01-01T00:40:15Z"}},
		{"*/60 * * * * *", "UTC", "2026-01-01T00:00:30Z", []string{"2026-01-01T00:01:00Z", "2026-01-01T00:02:00Z"}},
		{"0 0 12 ? * mon#1 2027-2028", "UTC", "2026-06-01T00:00:00Z", []string{"2027-01-04T12:00:00Z", "2027-02-01T12:00:00Z", "2027-03-01T12:00:00Z"}},
		{"0 15 10 ? * friL 2026", "UTC", "2026-10-01T00:00:00Z", []string{"2026-10-30T10:15:00Z", "2026-11-27T10:15:00Z", "2026-12-25T10:15:00Z"}},
		{"@every 45m", "UTC", "2026-01-01T00:10:00Z", []string{"2026-01-01T00:45:00Z", "2026-01-01T01:30:00Z"}},
		// Days that depend on the month.
		{"0 0 L-2 2 *", "UTC", "2027-01-01T00:00:00Z", []string{"2027-02-26T00:00:00Z", "2028-02-27T00:00:00Z"}},
		{"0 0 1W * *", "UTC", "2026-01-01T00:00:00Z", []string{"2026-02-02T00:00:00Z", "2026-03-02T00:00:00Z", "2026-04-01T00:00:00Z"}},
		{"0 0 31W * *", "UTC", "2026-01-01T00:00:00Z", []string{"2026-01-30T00:00:00Z", "2026-03-31T00:00:00Z", "2026-05-29T00:00:00Z"}},
	} {
		loc, err := time.LoadLocation(c.zone)
		if err != nil {
			t.Fatal(err)
		}
		s, err := ParseCron(c.expr, loc)
		if err != nil {
			t.Errorf("%q: %v", c.expr, err)
			continue
		}
		// The next fires strictly after the start, as the peers count them.
		got, _ := Between(s, utc(c.start).Add(time.Nanosecond), utc("2300-01-01T00:00:00Z"), len(c.want)+1)
		var texts []string
		for _, g := range got {
			texts = append(texts, g.UTC().Format(time.RFC3339))
		}
		if c.expr == "0 15 10 ? * friL 2026" {
			check(t, c.expr+" in "+c.zone, texts, c.want...) // none after its last year
			continue
		}
		check(t, c.expr+" in "+c.zone, texts[:min(len(texts), len(c.want))], c.want...)
	}
}
