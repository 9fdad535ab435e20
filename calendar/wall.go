package calendar

import "time"

// wall is a civil date and time of day, without a zone: seconds since
// 1970-01-01 00:00:00 counted as if every day had 86400 seconds. Calendars
// generate wall times; a Location turns them into instants.
type wall int64

const day = 86400

// mkWall returns the wall time of a date and a second of the day (which may
// exceed a day: 25:30 is half past one the next day).
func mkWall(y int, m time.Month, d int, sec int64) wall {
	return wall(daysFromCivil(int64(y), int64(m), int64(d))*day + sec)
}

// wallOf returns the wall clock reading of instant t in loc.
func wallOf(t time.Time, loc *time.Location) wall {
	return wall(t.Unix() + int64(offset(t.Unix(), loc)))
}

// days returns the day number (days since 1970-01-01) and the second of that day.
func (w wall) days() (int64, int64) {
	d := int64(w) / day
	s := int64(w) % day
	if s < 0 {
		d--
		s += day
	}
	return d, s
}

func (w wall) date() (y int, m time.Month, d int) {
	n, _ := w.days()
	yy, mm, dd := civilFromDays(n)
	return int(yy), time.Month(mm), int(dd)
}

func weekdayOf(days int64) time.Weekday {
	return time.Weekday(((days % 7) + 7 + 4) % 7) // 1970-01-01 was a Thursday
}

// daysFromCivil and civilFromDays convert between proleptic Gregorian dates
// and day numbers (H. Hinnant's algorithms).
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era = (y - 399) / 400
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

func civilFromDays(z int64) (y, m, d int64) {
	z += 719468
	era := z / 146097
	if z < 0 && z%146097 != 0 {
		era = (z - 146096) / 146097
	}
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	m = mp + 3
	if m > 12 {
		m -= 12
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

func daysIn(y int, m time.Month) int {
	if m == time.February {
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	}
	return 31 - int((m-1)%7%2)
}

// offset returns the zone offset in seconds of loc at Unix second s.
func offset(s int64, loc *time.Location) int {
	_, off := time.Unix(s, 0).In(loc).Zone()
	return off
}

// occurrences returns the instants (Unix seconds) at which the wall clock of
// loc reads w: none in a spring-forward gap, two in a fall-back overlap. It
// assumes at most one offset change within a day of w, which holds for every
// zone in the tz database since 1970 except a few historic corrections.
func occurrences(w wall, loc *time.Location) (first, second int64, n int) {
	base := int64(w)
	var offs [3]int
	for i, d := range [3]int64{-day, 0, day} {
		offs[i] = offset(base+d, loc)
	}
	for i, o := range offs {
		if i > 0 && (o == offs[0] || (i == 2 && o == offs[1])) {
			continue
		}
		c := base - int64(o)
		if offset(c, loc) != o {
			continue
		}
		switch {
		case n == 0:
			first, n = c, 1
		case c == first || (n == 2 && c == second):
		case c < first:
			first, second, n = c, first, 2
		default:
			second, n = c, 2
		}
	}
	if n == 2 && second < first {
		first, second = second, first
	}
	return first, second, n
}

// resolve maps a wall time to the first instant at which the clock reads it
// or later: its first occurrence, or, for a time in a spring-forward gap,
// the instant the gap ends.
func resolve(w wall, loc *time.Location) int64 {
	if f, _, n := occurrences(w, loc); n > 0 {
		return f
	}
	// In a gap. Reading w with the offset in force before the gap gives an
	// instant after the change; the zone period it falls in starts when the
	// gap ends.
	lo := offset(int64(w)-day, loc)
	c := int64(w) - int64(lo)
	start, _ := time.Unix(c, 0).In(loc).ZoneBounds()
	if start.IsZero() || start.Unix() > c {
		return c
	}
	return start.Unix()
}
