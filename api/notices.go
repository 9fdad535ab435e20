package api

import (
	"net/http"
	"strconv"

	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
)

// alerts lists alerts, newest first, with their attempts: ?job= selects a
// task's (or group member's) alerts, ?count= bounds them (default 20).
func (s *Server) alerts(w http.ResponseWriter, r *http.Request) error {
	limit, _, _, err := s.countAndDay(r, 20)
	if err != nil {
		return err
	}
	name := r.URL.Query().Get("job")
	if name != "" {
		if _, err := s.taskDef(r, name); err != nil {
			return err
		}
	}
	st := s.sched.Store()
	as, err := st.Alerts(r.Context(), store.AlertQuery{Task: name, Limit: limit})
	if err != nil {
		return err
	}
	resp := AlertsResponse{Alerts: []AlertView{}}
	for _, a := range as {
		att, err := st.Attempts(r.Context(), a.ID)
		if err != nil {
			return err
		}
		a.Created, a.Start, a.End = s.local(a.Created), s.local(a.Start), s.local(a.End)
		a.NextAt, a.SentAt, a.FirstAttempt = s.local(a.NextAt), s.local(a.SentAt), s.local(a.FirstAttempt)
		for i := range att {
			att[i].At = s.local(att[i].At)
		}
		if att == nil {
			att = []job.Attempt{}
		}
		resp.Alerts = append(resp.Alerts, AlertView{Alert: a, AttemptLog: att})
	}
	return writeJSON(w, http.StatusOK, resp)
}

// audit lists audit records oldest first: ?after= a sequence number,
// ?count= bounds them (default 100, at most 10000).
func (s *Server) audit(w http.ResponseWriter, r *http.Request) error {
	limit, _, _, err := s.countAndDay(r, 100)
	if err != nil {
		return err
	}
	var after int64
	if a := r.URL.Query().Get("after"); a != "" {
		if after, err = strconv.ParseInt(a, 10, 64); err != nil || after < 0 {
			return badRequest("after must be a sequence number (a whole number of at least 0), got %q", a)
		}
	}
	recs, err := s.sched.Store().Audit(r.Context(), after, min(limit, 10_000))
	if err != nil {
		return err
	}
	resp := AuditResponse{Records: []AuditView{}}
	for _, a := range recs {
		line := a.Line(s.loc)
		a.Launch, a.Stop = s.local(a.Launch), s.local(a.Stop)
		resp.Records = append(resp.Records, AuditView{AuditRecord: a, Line: line})
	}
	return writeJSON(w, http.StatusOK, resp)
}
