package defs

import "slices"

// CheckLogFiles checks every log file the actions name (out_log_file,
// err_log_file) with check, which says why a path may not be one, and
// returns an error for each path refused, naming its line, its action and
// the field. It is for a server that confines the log files of its runs:
// Apply does not call it.
func CheckLogFiles(file string, acts []Action, check func(path string) error) Errors {
	var errs Errors
	for _, a := range acts {
		if a.Kind.base() == Delete {
			continue // a delete with attributes is reported by Apply
		}
		for _, f := range a.Fields {
			if (f.Key != "out_log_file" && f.Key != "err_log_file") || f.Value == "" {
				continue
			}
			if err := check(f.Value); err != nil {
				errs = append(errs, &Error{File: file, Line: f.Line, Kind: a.Kind, Target: a.Name, Msg: f.Key + ": " + err.Error()})
			}
		}
	}
	return errs
}

// Join returns the errors of err (nil, or Errors) and more, in line
// order; nil if there are none. An err that is not Errors is returned as
// it is.
func Join(err error, more Errors) error {
	if len(more) == 0 {
		return err
	}
	var errs Errors
	if err != nil {
		var ok bool
		if errs, ok = err.(Errors); !ok {
			return err
		}
	}
	errs = append(slices.Clip(errs), more...)
	slices.SortStableFunc(errs, func(x, y *Error) int { return x.Line - y.Line })
	return errs
}
