package schedule

import (
	"errors"
	"fmt"
	"time"
)

// Validate checks what State relies on: a loadable time zone, day names
// mon..sun, HH:MM times with end after start (end may be 24:00), holiday dates
// as YYYY-MM-DD with end_date not before date, and start/end on partial-day
// holidays. All problems are joined into one error.
func (s *Schedule) Validate() error {
	var errs []error
	if s.Timezone != "" {
		if _, err := time.LoadLocation(s.Timezone); err != nil {
			errs = append(errs, fmt.Errorf("timezone %q: unknown", s.Timezone))
		}
	}
	for i, p := range s.OpenPeriods {
		if len(p.Days) == 0 {
			errs = append(errs, fmt.Errorf("open_periods[%d]: days required", i))
		}
		for _, d := range p.Days {
			if _, ok := weekdays[d]; !ok {
				errs = append(errs, fmt.Errorf("open_periods[%d]: day %q: want mon..sun", i, d))
			}
		}
		if _, _, err := p.bounds(); err != nil {
			errs = append(errs, fmt.Errorf("open_periods[%d]: %w", i, err))
		}
	}
	for i := range s.Holidays {
		if err := s.Holidays[i].validate(); err != nil {
			errs = append(errs, fmt.Errorf("holidays[%d]: %w", i, err))
		}
	}
	return errors.Join(errs...)
}

func (h *Holiday) validate() error {
	first, last, err := h.dates()
	if err != nil {
		return err
	}
	if h.AllDay {
		return nil
	}
	start, err := parseClock(h.Start, false)
	if err != nil {
		return fmt.Errorf("start: %w", err)
	}
	end, err := parseClock(h.End, true)
	if err != nil {
		return fmt.Errorf("end: %w", err)
	}
	if first.Equal(last) && end <= start {
		return fmt.Errorf("holiday %s-%s: end must be after start", h.Start, h.End)
	}
	return nil
}
