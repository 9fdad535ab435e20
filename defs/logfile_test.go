package defs

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckLogFiles(t *testing.T) {
	t.Parallel()
	text := `insert_task: a
type: callable
command: true
out_log_file: ok.out
err_log_file: bad.err

update_task: b
out_log_file: bad.out
err_log_file:

delete_task: c
out_log_file: bad.out

insert_task: d
type: callable
command: true
out_log_file: ok.out
err_log_file: ok.err
priority: urgent
`
	acts, err := Parse("f.def", text)
	if err != nil {
		t.Fatal(err)
	}
	check := func(p string) error {
		if strings.HasPrefix(p, "bad") {
			return errors.New(p + " is refused")
		}
		return nil
	}
	errs := CheckLogFiles("f.def", acts, check)
	var got []string
	for _, e := range errs {
		got = append(got, e.Error())
	}
	want := []string{"f.def:5: insert_task a: err_log_file: bad.err is refused", "f.def:8: update_task b: out_log_file: bad.out is refused"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("CheckLogFiles:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Joined with the errors of Apply, in line order.
	_, aerr := Apply("f.def", nil, acts, nil)
	joined := Join(aerr, errs)
	var all Errors
	if !errors.As(joined, &all) || len(all) < 3 {
		t.Fatalf("Join = %v", joined)
	}
	for i := 1; i < len(all); i++ {
		if all[i-1].Line > all[i].Line {
			t.Errorf("not in line order: %v", joined)
		}
	}
	if Join(nil, nil) != nil || Join(nil, errs).Error() != errs.Error() {
		t.Error("Join of nothing")
	}
	other := errors.New("other")
	if Join(other, errs) != other {
		t.Error("Join of an error that is not Errors")
	}
}
