package periods_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/gnomon-sched/gnomon/periods"
)

func ExampleParse() {
	_, err := periods.Parse("sites.json", []byte(`{
  "settings": {"startTimeperiod": "2024010100", "timezone": "Europe/Paris"},
  "trees": [
    {"name": "site", "levels": [
      {"process": "site_daily", "qualifier": "daily"},
      {"process": "site_weekly", "qualifier": "weekly"}
    ]}
  ]
}`), periods.Options{})
	var ps periods.Problems
	if errors.As(err, &ps) {
		for _, p := range ps {
			fmt.Println(p)
		}
	}
	// Output:
	// sites.json:2: settings.timezone: time zone "Europe/Paris": only UTC is supported (keys are UTC; displays may convert)
	// sites.json:6: trees[0].levels[1].qualifier: unknown qualifier "weekly" (want hourly, daily, monthly or yearly)
}

func ExampleQualifier() {
	k, _ := periods.ParseKey("2024022914")
	day, _ := periods.Daily.Cast(k)
	month, _ := periods.Monthly.Cast(k)
	fmt.Println(day, periods.Daily.Start(day), periods.Daily.End(day))
	fmt.Println(month, periods.Monthly.Next(month), len(periods.Monthly.Children(month, periods.Daily)))
	// Output:
	// 2024022900 2024-02-29 00:00:00 +0000 UTC 2024-03-01 00:00:00 +0000 UTC
	// 2024020000 2024030000 29
}

func ExampleForest() {
	f := periods.New(periods.Config{})
	now := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	apply := func(ev periods.Event) *periods.Output {
		out, err := f.Apply(ev, now)
		if err != nil {
			panic(err)
		}
		for _, c := range out.Changes {
			fmt.Printf("%s %s@%s %s -> %s (rule %d)\n", now.Format("15:04:05.000000000"), c.Process, c.Timeperiod, c.From, c.To, c.Rule)
		}
		return out
	}
	apply(periods.Define{File: "site.json", Text: `{
  "settings": {"startTimeperiod": "2024010100", "lagMinutes": 5},
  "trees": [{"name": "site", "levels": [{"process": "site_hourly", "qualifier": "hourly", "command": "aggregate.sh"}]}]
}`})
	now = f.NextWake() // the next hour starts
	apply(periods.Tick{})
	now = f.NextWake() // the first hour is due: 01:05 and a nanosecond
	out := apply(periods.Tick{})
	run := out.Effects[0].(periods.StartRun)
	fmt.Println("run", run.RunID, run.Command, run.Start.Format(time.Kitchen), run.End.Format(time.Kitchen))
	apply(periods.RunResult{Process: run.Process, Timeperiod: run.Timeperiod, RunID: run.RunID, Outcome: periods.OutcomeProcessed})
	fmt.Println("next wake", f.NextWake().Format("15:04"))
	// Output:
	// 01:05:00.000000001 site_hourly@2024010100 embryo -> in_progress (rule 1)
	// run 1 aggregate.sh 12:00AM 1:00AM
	// 01:05:00.000000001 site_hourly@2024010100 in_progress -> processed (rule 5)
	// next wake 02:00
}
