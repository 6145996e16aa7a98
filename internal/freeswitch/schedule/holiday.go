package schedule

import (
	"fmt"
	"time"
)

// covers reports whether the local instant falls inside the holiday. The
// holiday's bounds are built with time.Date in loc, so a DST change inside a
// holiday moves nothing: the bounds are wall-clock times.
func (h *Holiday) covers(local time.Time, loc *time.Location) (bool, error) {
	first, last, err := h.dates()
	if err != nil {
		return false, err
	}
	startMin, endMin := 0, 24*60
	if !h.AllDay {
		if startMin, err = parseClock(h.Start, false); err != nil {
			return false, fmt.Errorf("start: %w", err)
		}
		if endMin, err = parseClock(h.End, true); err != nil {
			return false, fmt.Errorf("end: %w", err)
		}
	}
	years := []int{first.Year()}
	if h.Yearly {
		// A yearly holiday may start last year and run into this one
		// (24 Dec - 2 Jan), so try both anchors.
		years = []int{local.Year() - 1, local.Year()}
	}
	for _, y := range years {
		shift := y - first.Year()
		from := time.Date(y, first.Month(), first.Day(), 0, startMin, 0, 0, loc)
		to := time.Date(last.Year()+shift, last.Month(), last.Day(), 0, endMin, 0, 0, loc)
		if !local.Before(from) && local.Before(to) {
			return true, nil
		}
	}
	return false, nil
}

// dates parses Date and EndDate (defaulting to Date) as calendar days.
func (h *Holiday) dates() (first, last time.Time, err error) {
	first, err = time.Parse(time.DateOnly, h.Date)
	if err != nil {
		return first, last, fmt.Errorf("date %q: want YYYY-MM-DD", h.Date)
	}
	last = first
	if h.EndDate != "" {
		if last, err = time.Parse(time.DateOnly, h.EndDate); err != nil {
			return first, last, fmt.Errorf("end_date %q: want YYYY-MM-DD", h.EndDate)
		}
		if last.Before(first) {
			return first, last, fmt.Errorf("end_date %s before date %s", h.EndDate, h.Date)
		}
	}
	return first, last, nil
}
