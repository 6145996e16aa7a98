// Package schedule answers one question for routing: is a schedule open at a
// given instant? It is pure (no I/O, no clock): callers pass the time, so
// dialplan renders are reproducible and testable.
//
// Opening hours are weekly periods in the schedule's IANA time zone, read on
// the local wall clock, so a period "09:00-17:00" stays 09:00-17:00 across a
// daylight-saving change. Holidays close the schedule; they may span several
// days, cover only part of a day, and repeat every year.
package schedule

import (
	"fmt"
	"time"
)

// Period is one weekly opening window: on each of Days, from Start to End
// (local "HH:MM", End may be "24:00"). Periods never cross midnight; a night
// shift is two periods.
type Period struct {
	Days  []string `json:"days"`
	Start string   `json:"start"`
	End   string   `json:"end"`
}

// Holiday closes the schedule from Date (and Start, unless AllDay) through
// EndDate (and End). EndDate defaults to Date. Yearly holidays repeat on the
// same month and day every year.
type Holiday struct {
	Name    string `json:"name"`
	Date    string `json:"date"`
	EndDate string `json:"end_date"`
	AllDay  bool   `json:"all_day"`
	Start   string `json:"start"`
	End     string `json:"end"`
	Yearly  bool   `json:"yearly"`
}

// Schedule is a tenant's opening hours and holidays, as stored (resources.md
// §2.10). A disabled schedule is always open.
type Schedule struct {
	ID          int64     `json:"id"`
	Name        string    `json:"name"`
	Timezone    string    `json:"timezone"`
	OpenPeriods []Period  `json:"open_periods"`
	Holidays    []Holiday `json:"holidays"`
	Enabled     bool      `json:"enabled"`
}

// State reports whether s is open at t. The schedule's own time zone is used,
// else defaultTZ, else UTC. When a holiday closes the schedule, that holiday
// is returned. A malformed schedule or unknown zone is an error (and closed).
func (s *Schedule) State(t time.Time, defaultTZ string) (open bool, holiday *Holiday, err error) {
	if !s.Enabled {
		return true, nil, nil
	}
	loc, err := s.location(defaultTZ)
	if err != nil {
		return false, nil, err
	}
	local := t.In(loc)
	for i := range s.Holidays {
		h := &s.Holidays[i]
		in, err := h.covers(local, loc)
		if err != nil {
			return false, nil, fmt.Errorf("schedule %q holiday %q: %w", s.Name, h.Name, err)
		}
		if in {
			return false, h, nil
		}
	}
	minute := local.Hour()*60 + local.Minute()
	day := local.Weekday()
	for _, p := range s.OpenPeriods {
		start, end, err := p.bounds()
		if err != nil {
			return false, nil, fmt.Errorf("schedule %q: %w", s.Name, err)
		}
		if minute < start || minute >= end {
			continue
		}
		for _, d := range p.Days {
			if wd, ok := weekdays[d]; ok && wd == day {
				return true, nil, nil
			}
		}
	}
	return false, nil, nil
}

// location resolves the zone the schedule is read in.
func (s *Schedule) location(defaultTZ string) (*time.Location, error) {
	name := s.Timezone
	if name == "" {
		name = defaultTZ
	}
	if name == "" {
		return time.UTC, nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("schedule %q time zone: %w", s.Name, err)
	}
	return loc, nil
}

// weekdays maps the stored day names to time.Weekday.
var weekdays = map[string]time.Weekday{
	"sun": time.Sunday, "mon": time.Monday, "tue": time.Tuesday, "wed": time.Wednesday,
	"thu": time.Thursday, "fri": time.Friday, "sat": time.Saturday,
}

// bounds returns the period as minutes of the day, [start, end).
func (p Period) bounds() (start, end int, err error) {
	if start, err = parseClock(p.Start, false); err != nil {
		return 0, 0, fmt.Errorf("period start: %w", err)
	}
	if end, err = parseClock(p.End, true); err != nil {
		return 0, 0, fmt.Errorf("period end: %w", err)
	}
	if end <= start {
		return 0, 0, fmt.Errorf("period %s-%s: end must be after start", p.Start, p.End)
	}
	return start, end, nil
}

// parseClock reads "HH:MM" as minutes since midnight; "24:00" only as an end.
func parseClock(s string, isEnd bool) (int, error) {
	if len(s) != 5 || s[2] != ':' || !digits(s[:2]) || !digits(s[3:]) {
		return 0, fmt.Errorf("time %q: want HH:MM", s)
	}
	h := int(s[0]-'0')*10 + int(s[1]-'0')
	m := int(s[3]-'0')*10 + int(s[4]-'0')
	if h == 24 && m == 0 && isEnd {
		return 24 * 60, nil
	}
	if h > 23 || m > 59 {
		return 0, fmt.Errorf("time %q: out of range", s)
	}
	return h*60 + m, nil
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
