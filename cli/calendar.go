package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/gnomon-sched/gnomon/api"
	"github.com/gnomon-sched/gnomon/calendar"
	"github.com/gnomon-sched/gnomon/defs"
	"github.com/gnomon-sched/gnomon/internal/termsafe"
	"github.com/gnomon-sched/gnomon/job"
)

func calendarCmd(env *Env, client func() *api.Client) *cobra.Command {
	c := &cobra.Command{
		Use:   "calendar list | show NAME | delete NAME",
		Short: "list, show or delete named calendars",
		Long: `calendar works on the named calendars (insert_calendar in a definition
file; see docs/definitions.md): list prints them with the tasks that name
them, show prints one and the days it holds in a range, delete deletes one
that no task and no other calendar names.`,
	}
	var listOut, showOut *outputFormat
	list := &cobra.Command{
		Use:   "list [-o json|yaml]",
		Short: "list the named calendars and the tasks that name them",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			resp, err := client().Calendars(cmd.Context())
			if err != nil {
				return err
			}
			if listOut.structured() {
				return listOut.write(env.Stdout, resp)
			}
			writeCalendars(env.Stdout, resp.Calendars)
			return nil
		},
	}
	listOut = addOutput(list, "the calendars as the API answers (GET /api/v1/calendars, docs/api.md)")
	var from, to, file string
	show := &cobra.Command{
		Use:   "show NAME [--from DATE] [--to DATE] [-f FILE] [-o json|yaml]",
		Short: "print a named calendar and the days it holds",
		Long: `show prints a named calendar's definition, the tasks that name it and the
days it holds from --from to --to (YYYY-MM-DD, both included; default from
today for a year). With -f it reads the calendar from a definition file,
offline, with the .ics files that file names.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var (
				v   *api.CalendarView
				err error
			)
			if file != "" {
				v, err = offlineCalendar(args[0], file, from, to, env.Getenv, env.Stderr, env.Clock.Now())
			} else {
				v, err = client().Calendar(cmd.Context(), args[0], from, to)
			}
			if err != nil {
				return err
			}
			if showOut.structured() {
				return showOut.write(env.Stdout, v)
			}
			writeCalendar(env.Stdout, v)
			return nil
		},
	}
	show.Flags().StringVar(&from, "from", "", "first date, YYYY-MM-DD (default today)")
	show.Flags().StringVar(&to, "to", "", "last date, YYYY-MM-DD (default a year after --from, less a day)")
	show.Flags().StringVarP(&file, "file", "f", "", "read the calendar from this definition file, offline")
	showOut = addOutput(show, "the calendar and its days as the API answers (GET /api/v1/calendars/{name}, docs/api.md)")
	del := &cobra.Command{
		Use:   "delete NAME",
		Short: "delete a named calendar that nothing names",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := client().DeleteCalendar(cmd.Context(), args[0]); err != nil {
				return err
			}
			fmt.Fprintln(env.Stdout, "Successfully processed")
			return nil
		},
	}
	c.AddCommand(list, show, del)
	return c
}

// writeCalendars prints one line per calendar: its name, how many dates it
// holds, its rules, its holidays and the tasks that name it.
func writeCalendars(w io.Writer, cals []api.CalendarView) {
	var b strings.Builder
	if len(cals) == 0 {
		fmt.Fprintln(w, "no calendars defined")
		return
	}
	fmt.Fprintf(&b, "%-24s %6s  %-36s %-20s %s\n", "Calendar", "Dates", "Rules", "Holidays", "Used by")
	for _, c := range cals {
		line := fmt.Sprintf("%-24s %6d  %-36s %-20s %s", termsafe.String(c.Name), len(c.Dates), strings.Join(c.Rules, "; "),
			termsafe.String(strings.Join(c.Holidays, ", ")), termsafe.String(strings.Join(c.UsedBy, ", ")))
		b.WriteString(strings.TrimRight(line, " ") + "\n")
	}
	fmt.Fprint(w, b.String())
}

// writeCalendar prints a calendar, the tasks that name it and the days it
// holds in its range, one a line with its day of the week.
func writeCalendar(w io.Writer, v *api.CalendarView) {
	var b strings.Builder
	fmt.Fprintf(&b, "Calendar: %s\n", termsafe.String(v.Name))
	for _, kv := range defs.CalendarAttrs(&v.Calendar) {
		if kv[0] == "dates" {
			continue // among the days below
		}
		fmt.Fprintf(&b, "%s: %s\n", defs.Label(kv[0]), termsafe.String(kv[1]))
	}
	if v.Workdays == "" && slices.ContainsFunc(v.Rules, func(r string) bool { return strings.Contains(r, "business") }) {
		fmt.Fprintf(&b, "Workdays: mo,tu,we,th,fr (the default)\n")
	}
	fmt.Fprintf(&b, "Dates: %d\n", len(v.Dates))
	used := "no task"
	if len(v.UsedBy) > 0 {
		used = strings.Join(v.UsedBy, ", ")
	}
	fmt.Fprintf(&b, "Used by: %s\n", termsafe.String(used))
	if len(v.HolidaysOf) > 0 {
		fmt.Fprintf(&b, "Holidays of: %s\n", termsafe.String(strings.Join(v.HolidaysOf, ", ")))
	}
	if len(v.Days) == 0 {
		fmt.Fprintf(&b, "no days from %s to %s\n", v.From, v.To)
	} else {
		fmt.Fprintf(&b, "Days from %s to %s: %d\n", v.From, v.To, len(v.Days))
	}
	for _, d := range v.Days {
		wd := ""
		if t, err := time.Parse(time.DateOnly, d); err == nil {
			wd = " " + t.Weekday().String()[:3]
		}
		fmt.Fprintf(&b, "%s%s\n", d, wd)
	}
	if v.Truncated {
		fmt.Fprintf(&b, "(more days follow: narrow --from/--to)\n")
	}
	fmt.Fprint(w, b.String())
}

// icsReader reads the .ics files a definition file names, relative to the
// file's directory: regular files of UTF-8 text, as definition files are.
func icsReader(defFile string) func(path string) ([]byte, error) {
	return func(p string) ([]byte, error) {
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(defFile), p)
		}
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !st.Mode().IsRegular() {
			return nil, fmt.Errorf("not a regular file")
		}
		if st.Size() > defs.MaxFileSize {
			return nil, fmt.Errorf("larger than %d bytes", defs.MaxFileSize)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		if !utf8.Valid(b) {
			return nil, fmt.Errorf("not UTF-8 text (an iCalendar file is)")
		}
		return b, nil
	}
}

// icsFiles reads the .ics files a definition text names, for the server,
// which reads their dates with its own clock. They are parsed here too,
// so that a file missing or not iCalendar is reported at its line; now
// is the instant the warnings about them are made at.
func icsFiles(file, text string, warn io.Writer, now time.Time) (map[string]string, error) {
	if len(defs.ICSFiles(file, text)) == 0 {
		return nil, nil
	}
	files := map[string]string{}
	read := icsReader(file)
	_, warnings, err := defs.ResolveICSWarnings(file, text, func(p string) ([]byte, error) {
		b, err := read(p)
		if err == nil {
			files[p] = string(b)
		}
		return b, err
	}, now)
	if err != nil {
		return nil, rejected(err)
	}
	warnAll(warn, warnings)
	return files, nil
}

// warnAll writes each warning on a line of its own.
func warnAll(w io.Writer, warnings []string) {
	for _, m := range warnings {
		fmt.Fprintln(w, "WARNING", m)
	}
}

// offlineDefinitions reads a definition file offline, with the .ics files
// it names (their recurring events expanded around instant now), and
// compiles its calendars.
func offlineDefinitions(file string, now time.Time, warn io.Writer) (*defs.Result, calendar.Lookup, error) {
	text, err := readDefinitions(file)
	if err != nil {
		return nil, nil, err
	}
	var warnings []string
	if text, warnings, err = defs.ResolveICSWarnings(file, text, icsReader(file), now); err != nil {
		return nil, nil, rejected(err)
	}
	warnAll(warn, warnings)
	acts, err := defs.Parse(file, text)
	if err != nil {
		return nil, nil, rejected(err)
	}
	res, err := defs.Apply(file, nil, acts, nil)
	if err != nil {
		return nil, nil, rejected(err)
	}
	var list []*job.Calendar
	for _, c := range res.Calendars {
		list = append(list, c)
	}
	days, _ := calendar.CompileAll(list, nil)
	return res, func(name string) *calendar.DaySet { return days[name] }, nil
}

// offlineCalendar shows a calendar a definition file defines.
func offlineCalendar(name, file, from, to string, getenv func(string) string, warn io.Writer, now time.Time) (*api.CalendarView, error) {
	start := calendar.DateOf(now, hostZone(getenv))
	var err error
	if from != "" {
		if start, err = calendar.ParseDate(from); err != nil {
			return nil, usageErr("--from: %v", err)
		}
	}
	y, m, d := start.YMD()
	end := calendar.MakeDate(y+1, m, d) - 1
	if to != "" {
		if end, err = calendar.ParseDate(to); err != nil {
			return nil, usageErr("--to: %v", err)
		}
	}
	if end < start {
		return nil, usageErr("--to is before --from")
	}
	res, days, err := offlineDefinitions(file, start.Start(time.UTC), warn)
	if err != nil {
		return nil, err
	}
	c, ok := res.Calendars[name]
	if !ok {
		return nil, &exitError{code: ExitRejected, msg: fmt.Sprintf("calendar %s not found in %s", name, file)}
	}
	v := &api.CalendarView{Calendar: *c, UsedBy: []string{}, From: start.String(), To: end.String(), Days: []string{}}
	for n, t := range res.Tasks {
		if slices.Contains(t.Calendars(), name) {
			v.UsedBy = append(v.UsedBy, n)
		}
	}
	slices.Sort(v.UsedBy)
	for n, o := range res.Calendars {
		if slices.Contains(o.HolidayCalendars(), name) {
			v.HolidaysOf = append(v.HolidaysOf, n)
		}
	}
	slices.Sort(v.HolidaysOf)
	if set := days(name); set != nil {
		ds, more := set.Between(start, end, api.MaxPage)
		for _, d := range ds {
			v.Days = append(v.Days, d.String())
		}
		v.Truncated = more
	}
	return v, nil
}
