package eventdep

import (
	"fmt"
	"testing"

	"github.com/gnomon-sched/gnomon/job"
)

func BenchmarkDecodeEvent(b *testing.B) {
	body := []byte(`{"eventType":"FILE","eventTimestamp":"2021-01-01T12:14:50.123Z","eventResourceId":"/landing/orders/part=3/file_1.csv"}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeEvent(body); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMatch looks up a FILE event five directories deep among n
// configurations, one of which it matches.
func BenchmarkMatch(b *testing.B) {
	for _, n := range []int{3, 10_000, 1_000_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			var x Index
			for k := range n {
				x.Add(fmt.Sprint("C", k), []job.DataDep{{Type: job.File, Resource: fmt.Sprintf("/landing/%d", k)}, {Type: job.Table, Resource: fmt.Sprint("table_", k)}})
			}
			var buf []Ref
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				buf = x.Match(job.File, "/landing/1/part=3/day=12/hour=04/file.csv", buf[:0])
				if len(buf) != 1 {
					b.Fatal(buf)
				}
			}
		})
	}
}
