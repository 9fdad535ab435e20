package periods

import (
	"fmt"
	"time"
)

// Qualifier is the length of a timeperiod: hourly, daily, monthly or
// yearly. A larger value is a coarser period. The zero value is no
// qualifier.
type Qualifier uint8

// Qualifiers, finest first.
const (
	// Hourly is the qualifier of hours, keys YYYYMMDDHH.
	Hourly Qualifier = iota + 1
	// Daily is the qualifier of days, keys YYYYMMDD00.
	Daily
	// Monthly is the qualifier of months, keys YYYYMM0000.
	Monthly
	// Yearly is the qualifier of years, keys YYYY000000.
	Yearly
)

var qualifierNames = [...]string{"", "hourly", "daily", "monthly", "yearly"}

// String returns the qualifier's name as definition files spell it.
func (q Qualifier) String() string {
	if q.valid() {
		return qualifierNames[q]
	}
	return fmt.Sprintf("qualifier(%d)", int(q))
}

func (q Qualifier) valid() bool { return q >= Hourly && q <= Yearly }

// ParseQualifier reads a qualifier's name.
func ParseQualifier(s string) (Qualifier, error) {
	for q := Hourly; q <= Yearly; q++ {
		if qualifierNames[q] == s {
			return q, nil
		}
	}
	return 0, fmt.Errorf("unknown qualifier %q (want hourly, daily, monthly or yearly)", s)
}

// MarshalText implements encoding.TextMarshaler.
func (q Qualifier) MarshalText() ([]byte, error) {
	if !q.valid() {
		return nil, fmt.Errorf("marshal %s", q)
	}
	return []byte(q.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (q *Qualifier) UnmarshalText(b []byte) error {
	v, err := ParseQualifier(string(b))
	*q = v
	return err
}

// Key identifies a timeperiod: its decimal digits read YYYYMMDDHH, and the
// fields finer than its qualifier are zero. The hour 2024-03-15 14:00 is
// 2024031514, its day 2024031500, its month 2024030000 and its year
// 2024000000. Keys of one qualifier sort as their periods do. A key does
// not say its qualifier (2024031500 is both a day and the hour 00 of that
// day): the level it belongs to does. The zero Key is no key.
//
// Keys are always UTC. Years run from 1 to 9999.
type Key int64

// String formats the key as its ten digits.
func (k Key) String() string { return fmt.Sprintf("%010d", int64(k)) }

// MarshalText implements encoding.TextMarshaler: the ten digits.
func (k Key) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler. It accepts a key of
// any qualifier (ParseKey).
func (k *Key) UnmarshalText(b []byte) error {
	v, err := ParseKey(string(b))
	*k = v
	return err
}

func (k Key) year() int  { return int(k / 1000000) }
func (k Key) month() int { return int(k / 10000 % 100) }
func (k Key) day() int   { return int(k / 100 % 100) }
func (k Key) hour() int  { return int(k % 100) }

func makeKey(y, m, d, h int) Key {
	return Key(int64(y)*1000000 + int64(m)*10000 + int64(d)*100 + int64(h))
}

// finest returns the finest qualifier the key is valid for, assuming it is
// well formed: yearly when its month is 00, monthly when its day is 00,
// otherwise hourly (a day is also the hour 00 of that day).
func (k Key) finest() Qualifier {
	switch {
	case k.month() == 0:
		return Yearly
	case k.day() == 0:
		return Monthly
	}
	return Hourly
}

// wellFormed returns why k is not a key of any qualifier, or "".
func (k Key) wellFormed() string {
	y, m, d, h := k.year(), k.month(), k.day(), k.hour()
	switch {
	case k <= 0 || y < 1 || y > 9999:
		return "year out of range 0001..9999"
	case m > 12:
		return fmt.Sprintf("month %02d out of range", m)
	case m == 0 && (d != 0 || h != 0):
		return "month 00 with a day or hour set"
	case d > daysIn(y, m):
		return fmt.Sprintf("day %02d out of range for %04d-%02d", d, y, m)
	case d == 0 && h != 0:
		return "day 00 with an hour set"
	case h > 23:
		return fmt.Sprintf("hour %02d out of range", h)
	}
	return ""
}

// ParseKey reads a key of any qualifier: ten digits YYYYMMDDHH, or fourteen
// digits YYYYMMDDHHmmSS of which the minutes and seconds are dropped.
func ParseKey(s string) (Key, error) {
	if len(s) != 10 && len(s) != 14 {
		return 0, fmt.Errorf("bad timeperiod key %q: want ten digits YYYYMMDDHH", s)
	}
	var v int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("bad timeperiod key %q: want ten digits YYYYMMDDHH", s)
		}
		if i < 10 {
			v = v*10 + int64(c-'0')
		}
	}
	if len(s) == 14 && (s[10:12] > "59" || s[12:14] > "59") {
		return 0, fmt.Errorf("bad timeperiod key %q: minutes or seconds out of range", s)
	}
	k := Key(v)
	if why := k.wellFormed(); why != "" {
		return 0, fmt.Errorf("bad timeperiod key %q: %s", s, why)
	}
	if len(s) == 14 && k.finest() != Hourly {
		return 0, fmt.Errorf("bad timeperiod key %q: an instant needs a day", s)
	}
	return k, nil
}

// Parse reads a key of exactly this qualifier: ten digits with the fields
// finer than the qualifier zero.
func (q Qualifier) Parse(s string) (Key, error) {
	k, err := ParseKey(s)
	if err != nil {
		return 0, err
	}
	if len(s) != 10 || !q.Valid(k) {
		return 0, fmt.Errorf("bad timeperiod key %q: not %s key (%s)", s, q.article(), q.pattern())
	}
	return k, nil
}

// article returns the qualifier's name with its indefinite article.
func (q Qualifier) article() string {
	if q == Hourly {
		return "an hourly"
	}
	return "a " + q.String()
}

func (q Qualifier) pattern() string {
	switch q {
	case Hourly:
		return "YYYYMMDDHH"
	case Daily:
		return "YYYYMMDD00"
	case Monthly:
		return "YYYYMM0000"
	}
	return "YYYY000000"
}

// Valid reports whether k is a key of this qualifier.
func (q Qualifier) Valid(k Key) bool {
	if !q.valid() || k.wellFormed() != "" {
		return false
	}
	switch q {
	case Hourly:
		return k.day() != 0
	case Daily:
		return k.day() != 0 && k.hour() == 0
	case Monthly:
		return k.month() != 0 && k.day() == 0
	}
	return k.month() == 0
}

// Cast returns the period of this qualifier that contains k, which may be
// a key of this qualifier or a finer one (2024031514 cast to daily is
// 2024031500). A key coarser than the qualifier is an error.
func (q Qualifier) Cast(k Key) (Key, error) {
	if why := k.wellFormed(); why != "" {
		return 0, fmt.Errorf("bad timeperiod key %s: %s", k, why)
	}
	if !q.valid() {
		return 0, fmt.Errorf("cast %s to %s", k, q)
	}
	if k.finest() > q {
		return 0, fmt.Errorf("timeperiod key %s is %s, coarser than %s", k, k.finest(), q)
	}
	return q.truncate(k), nil
}

// truncate zeroes the fields of k finer than q.
func (q Qualifier) truncate(k Key) Key {
	switch q {
	case Daily:
		return k / 100 * 100
	case Monthly:
		return k / 10000 * 10000
	case Yearly:
		return k / 1000000 * 1000000
	}
	return k
}

// KeyAt returns the key of the period of this qualifier that contains the
// instant t.
func (q Qualifier) KeyAt(t time.Time) Key {
	t = t.UTC()
	y, m, d := t.Date()
	return q.truncate(makeKey(y, int(m), d, t.Hour()))
}

// Start returns the first instant of the period k of this qualifier, in UTC.
func (q Qualifier) Start(k Key) time.Time {
	return time.Unix(q.startUnix(k), 0).UTC()
}

// End returns the instant just after the period k of this qualifier: the
// start of the next period. Periods are half-open, [Start, End).
func (q Qualifier) End(k Key) time.Time {
	return time.Unix(q.endUnix(k), 0).UTC()
}

// startUnix returns Start(k) in seconds since the Unix epoch.
func (q Qualifier) startUnix(k Key) int64 {
	m, d := k.month(), k.day()
	if m == 0 {
		m = 1
	}
	if d == 0 {
		d = 1
	}
	return (daysFromCivil(k.year(), m, d)*24 + int64(k.hour())) * 3600
}

func (q Qualifier) endUnix(k Key) int64 { return q.startUnix(q.Add(k, 1)) }

// Next returns the period after k.
func (q Qualifier) Next(k Key) Key { return q.Add(k, 1) }

// Prev returns the period before k.
func (q Qualifier) Prev(k Key) Key { return q.Add(k, -1) }

// Add returns the period n periods after k (before it for negative n).
func (q Qualifier) Add(k Key, n int64) Key { return q.fromOrdinal(q.ordinal(k) + n) }

// Sub returns the number of periods from b to a: a = Add(b, Sub(a, b)).
func (q Qualifier) Sub(a, b Key) int64 { return q.ordinal(a) - q.ordinal(b) }

// Children returns the periods of the finer qualifier that make up period
// k of this one, in order: the 24 hours of a day, the 28 to 31 days of a
// month, and so on (a year's days or hours when levels are skipped).
func (q Qualifier) Children(k Key, finer Qualifier) []Key {
	if finer >= q || !finer.valid() {
		return nil
	}
	first := finer.KeyAt(q.Start(k))
	n := finer.Sub(finer.KeyAt(q.End(k)), first)
	keys := make([]Key, n)
	for i := range keys {
		keys[i] = finer.Add(first, int64(i))
	}
	return keys
}

// ordinal numbers the periods of a qualifier consecutively.
func (q Qualifier) ordinal(k Key) int64 {
	switch q {
	case Hourly:
		return daysFromCivil(k.year(), k.month(), k.day())*24 + int64(k.hour())
	case Daily:
		return daysFromCivil(k.year(), k.month(), k.day())
	case Monthly:
		return int64(k.year())*12 + int64(k.month()) - 1
	}
	return int64(k.year())
}

func (q Qualifier) fromOrdinal(n int64) Key {
	switch q {
	case Hourly:
		days := floorDiv(n, 24)
		y, m, d := civilFromDays(days)
		return makeKey(y, m, d, int(n-days*24))
	case Daily:
		y, m, d := civilFromDays(n)
		return makeKey(y, m, d, 0)
	case Monthly:
		y := floorDiv(n, 12)
		return makeKey(int(y), int(n-y*12)+1, 0, 0)
	}
	return makeKey(int(n), 0, 0, 0)
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// daysFromCivil returns the days from 1970-01-01 to the given date of the
// proleptic Gregorian calendar.
func daysFromCivil(y, m, d int) int64 {
	yy := int64(y)
	if m <= 2 {
		yy--
	}
	era := floorDiv(yy, 400)
	yoe := yy - era*400
	mp := int64(m+9) % 12
	doy := (153*mp+2)/5 + int64(d) - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// civilFromDays is the inverse of daysFromCivil.
func civilFromDays(z int64) (y, m, d int) {
	z += 719468
	era := floorDiv(z, 146097)
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	yy := yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = int(doy - (153*mp+2)/5 + 1)
	m = int(mp+2)%12 + 1
	if m <= 2 {
		yy++
	}
	return int(yy), m, d
}

func daysIn(y, m int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}
