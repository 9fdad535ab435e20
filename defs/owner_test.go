package defs

import (
	"errors"
	"strings"
	"testing"

	"github.com/gnomon-sched/gnomon/job"
)

func TestOwner(t *testing.T) {
	t.Parallel()
	t.Run("accepted", func(t *testing.T) {
		t.Parallel()
		text := "insert_task: a\n" + callable + "owner: batch\n\ninsert_task: b\n" + callable + "owner: etl_1:staff\n"
		res, err := applyText(nil, nil, text)
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Tasks["a"].Extras().Owner; got != "batch" {
			t.Errorf("a: owner %q, want batch", got)
		}
		if got := res.Tasks["b"].Extras().Owner; got != "etl_1:staff" {
			t.Errorf("b: owner %q, want etl_1:staff", got)
		}
		// It survives Format and the JSON form.
		var b strings.Builder
		if err := Format(&b, []*job.Task{res.Tasks["b"]}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "owner: etl_1:staff\n") {
			t.Errorf("Format lost the owner:\n%s", b.String())
		}
		// An empty value on update clears it.
		again, err := applyText(res.Tasks, nil, "update_task: b\nowner:\n")
		if err != nil {
			t.Fatal(err)
		}
		if got := again.Tasks["b"].Extras().Owner; got != "" {
			t.Errorf("owner after clearing: %q", got)
		}
	})
	t.Run("configuration in the JSON shape", func(t *testing.T) {
		t.Parallel()
		res, err := applyText(nil, nil, `[{"name":"C","dependencies":[{"type":"FILE","resourceId":"/in/","lifeDuration":"3600"}],"command":"x","out_log_file":"o","err_log_file":"e","owner":"loader"}]`)
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Tasks["C"].Extras().Owner; got != "loader" {
			t.Errorf("owner %q, want loader", got)
		}
	})
	for _, tt := range []struct{ name, text, want string }{
		{"a number", "insert_task: a\n" + callable + "owner: 1000\n", `f:6: insert_task a: owner: "1000" is not a user name (write owner: USER or owner: USER:GROUP`},
		{"a bad group", "insert_task: a\n" + callable + "owner: batch:\n", `f:6: insert_task a: owner: "" is not a group name`},
		{"spaces", "insert_task: a\n" + callable + "owner: bat ch\n", `f:6: insert_task a: owner: "bat ch" is not a user name`},
		{"a bundle", "insert_task: b\ntype: bundle\nowner: batch\n", "f:3: insert_task b: owner: field is not allowed for bundle"},
		{"a function", "insert_task: f\ntype: callable\nfunction: log\nowner: batch\n", "f:4: insert_task f: owner: a function runs inside the server, as the server's user: owner applies to a command"},
		{"a group", "insert_task: a\n" + callable + "insert_group: g\njobs: a\nowner: batch\n", "f:8: insert_group g: owner: field is not allowed for a group"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			acts, err := Parse("f", tt.text)
			if err == nil {
				_, err = Apply("f", nil, acts, nil)
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one holding %q", err, tt.want)
			}
		})
	}
}

func TestCheckOwners(t *testing.T) {
	t.Parallel()
	text := "insert_task: a\n" + callable + "owner: batch\n\nupdate_task: b\nowner: root\n\ninsert_task: c\n" + callable + "owner: 12\n"
	acts, err := Parse("f.def", text)
	if err != nil {
		t.Fatal(err)
	}
	errs := CheckOwners("f.def", acts, func(owner string) error {
		if owner == "root" {
			return errors.New("refused")
		}
		return nil
	})
	var got []string
	for _, e := range errs {
		got = append(got, e.Error())
	}
	// The malformed owner of c is Apply's to report, not CheckOwners'.
	if want := "f.def:9: update_task b: owner: refused"; strings.Join(got, "\n") != want {
		t.Errorf("CheckOwners:\n%s\nwant\n%s", strings.Join(got, "\n"), want)
	}
}
