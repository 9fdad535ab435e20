package eventdep

import (
	"fmt"
	"math"
	"time"
)

// ParseTimestamp reads an event timestamp:
//
//	YYYY-MM-DD ("T" | " ") hh:mm:ss [ "." 1*9DIGIT ] [ "Z" | ("+"|"-") hh ":" mm ]
//
// A timestamp without a zone is UTC. The date and time must exist, and the
// instant must fit in int64 nanoseconds.
func ParseTimestamp(s string) (time.Time, error) {
	p := tsParser{s: s}
	year := p.digits(4)
	p.lit('-')
	month := p.digits(2)
	p.lit('-')
	day := p.digits(2)
	if p.err == nil && (p.i >= len(s) || (s[p.i] != 'T' && s[p.i] != ' ')) {
		p.fail("expected 'T' or a space between the date and the time")
	}
	p.i++
	hour := p.digits(2)
	p.lit(':')
	minute := p.digits(2)
	p.lit(':')
	sec := p.digits(2)
	nsec := 0
	if p.err == nil && p.i < len(s) && s[p.i] == '.' {
		p.i++
		n := 0
		for p.i < len(s) && s[p.i] >= '0' && s[p.i] <= '9' {
			if n == 9 {
				p.fail("more than 9 fraction digits")
				break
			}
			nsec = nsec*10 + int(s[p.i]-'0')
			n++
			p.i++
		}
		if n == 0 && p.err == nil {
			p.fail("a '.' must be followed by 1 to 9 digits")
		}
		for ; n < 9 && n > 0; n++ {
			nsec *= 10
		}
	}
	offset := 0
	if p.err == nil && p.i < len(s) {
		switch c := s[p.i]; c {
		case 'Z':
			p.i++
		case '+', '-':
			p.i++
			oh := p.digits(2)
			p.lit(':')
			om := p.digits(2)
			if p.err == nil && (oh > 23 || om > 59) {
				p.fail("the zone offset is out of range")
			}
			offset = oh*3600 + om*60
			if c == '-' {
				offset = -offset
			}
		default:
			p.fail("expected 'Z', a '+hh:mm' or '-hh:mm' offset, or the end")
		}
	}
	if p.err == nil && p.i != len(s) {
		p.fail("unexpected text after the timestamp")
	}
	if p.err != nil {
		return time.Time{}, p.err
	}
	if month < 1 || month > 12 || day < 1 || day > daysIn(year, month) {
		return time.Time{}, fmt.Errorf("%q: the date does not exist", s)
	}
	if hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, fmt.Errorf("%q: the time of day does not exist", s)
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, nsec, time.UTC).Add(-time.Duration(offset) * time.Second)
	if t.Before(minInstant) || t.After(maxInstant) {
		return time.Time{}, fmt.Errorf("%q: out of the supported range %s to %s", s, minInstant.Format(time.RFC3339), maxInstant.Format(time.RFC3339))
	}
	return t, nil
}

var (
	minInstant = time.Unix(0, math.MinInt64).UTC()
	maxInstant = time.Unix(0, math.MaxInt64).UTC()
)

func daysIn(year, month int) int {
	return time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

type tsParser struct {
	s   string
	i   int
	err error
}

func (p *tsParser) fail(msg string) {
	if p.err == nil {
		p.err = fmt.Errorf("%q: %s (want YYYY-MM-DDThh:mm:ss[.fraction][Z|±hh:mm])", p.s, msg)
	}
}

func (p *tsParser) digits(n int) int {
	if p.err != nil {
		return 0
	}
	v := 0
	for k := 0; k < n; k++ {
		if p.i >= len(p.s) || p.s[p.i] < '0' || p.s[p.i] > '9' {
			p.fail(fmt.Sprintf("expected %d digits at position %d", n, p.i+1-k))
			return 0
		}
		v = v*10 + int(p.s[p.i]-'0')
		p.i++
	}
	return v
}

func (p *tsParser) lit(c byte) {
	if p.err != nil {
		return
	}
	if p.i >= len(p.s) || p.s[p.i] != c {
		p.fail(fmt.Sprintf("expected '%c' at position %d", c, p.i+1))
		return
	}
	p.i++
}
