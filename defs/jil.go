package defs

import "strings"

// AutoSys's JIL and gnomon's language share most words (start_times,
// run_calendar, n_retrys, term_run_time, std_in_file, ...). Where JIL
// writes something otherwise, a definition that uses JIL's word is
// refused as any unknown word is, and the message says what gnomon
// writes instead: an AutoSys user's habit costs one reading of an error,
// not a search of the documentation. The words are not taken as
// synonyms: one spelling of each attribute is what export writes and
// what the documentation describes.

// jilActions are JIL's actions, with gnomon's.
var jilActions = map[string]string{
	"insert_job": "insert_task",
	"update_job": "update_task",
	"delete_job": "delete_task",
	"delete_box": "delete_task",
}

// jilFields are JIL's attributes that gnomon writes otherwise, with what
// it writes.
var jilFields = map[string]string{
	"job_type":                  "type: callable (a CMD or FW job; an FW job is a callable task with watch_file, whose command may be true), bundle (a BOX job) or configuration",
	"box_name":                  "parent: BUNDLE",
	"std_out_file":              "out_log_file",
	"std_err_file":              "err_log_file",
	"watch_file_min_size":       "watch_min_size (in bytes, or 10K, 5M)",
	"watch_no_change":           "watch_steady, with a unit (watch_no_change counts minutes: write 2m)",
	"days_of_week":              "run_days",
	"date_conditions":           "nothing: a task with start_times, start_mins, cron, interval or run_calendar is scheduled by them",
	"alarm_if_fail":             "alert_on: failure",
	"send_notification":         "alert_on (the outcomes to tell) with alert_to",
	"notification_emailaddress": "alert_to",
	"notification_id":           "alert_to",
	"max_exit_success":          "a command that exits 0 for success (gnomon reads any other exit code as failure)",
	"auto_hold":                 "a freeze of the task when it is due (gnomon freeze -j TASK)",
	"job_load":                  "resources: NAME=N, with insert_resource: NAME and amount: N",
	"resources_required":        "resources",
	"must_start_times":          "must_start_by",
	"must_complete_times":       "must_complete_by",
	"watch_file_type":           "watch_file (gnomon's watchers wait for a file to appear and settle)",
	"watch_file_recursive":      "a glob in watch_file (/data/*/in/*.csv)",
	"run_window_days":           "run_days",
	"exclude_calendar_name":     "exclude_calendar",
	"timezone_name":             "timezone",
	"description_text":          "description",
}

// jilAction returns what to say of a JIL action: "; gnomon writes
// insert_task", or nothing for another word. A JIL action is checked as
// the action it stands for, its attributes with it.
func jilAction(key string) string {
	if g, ok := jilActions[key]; ok {
		return "; gnomon writes " + g + " (AutoSys's " + key + ")"
	}
	return ""
}

// jilMeant returns the attribute a JIL word's explanation begins with,
// if it does: the attribute the word stands for, which is then not also
// reported missing.
func jilMeant(gnomon string) []string {
	end := strings.IndexAny(gnomon, ": ")
	if end < 0 {
		end = len(gnomon)
	}
	if a := gnomon[:end]; isAttribute(a) {
		return []string{a}
	}
	return nil
}
