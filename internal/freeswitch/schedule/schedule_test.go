package schedule

import (
	"testing"
	"time"
)

func mustTime(t *testing.T, zone, value string) time.Time {
	t.Helper()
	loc, err := time.LoadLocation(zone)
	if err != nil {
		t.Fatalf("load zone %s: %v", zone, err)
	}
	v, err := time.ParseInLocation("2006-01-02 15:04", value, loc)
	if err != nil {
		t.Fatalf("parse %s: %v", value, err)
	}
	return v
}

var weekdaysNineToFive = []Period{{Days: []string{"mon", "tue", "wed", "thu", "fri"}, Start: "09:00", End: "17:00"}}

func TestStateWeeklyPeriods(t *testing.T) {
	// 2026-11-23 is a Monday, 2026-11-22 a Sunday.
	tests := []struct {
		name      string
		sched     Schedule
		defaultTZ string
		zone, at  string // the instant, written in zone
		want      bool
	}{
		{"open monday morning UTC", Schedule{Enabled: true, OpenPeriods: weekdaysNineToFive}, "", "UTC", "2026-11-23 09:00", true},
		{"closed before start", Schedule{Enabled: true, OpenPeriods: weekdaysNineToFive}, "", "UTC", "2026-11-23 08:59", false},
		{"end is exclusive", Schedule{Enabled: true, OpenPeriods: weekdaysNineToFive}, "", "UTC", "2026-11-23 17:00", false},
		{"closed sunday", Schedule{Enabled: true, OpenPeriods: weekdaysNineToFive}, "", "UTC", "2026-11-22 12:00", false},
		{"disabled is always open", Schedule{Enabled: false, OpenPeriods: weekdaysNineToFive}, "", "UTC", "2026-11-22 03:00", true},
		{"no periods is closed", Schedule{Enabled: true}, "", "UTC", "2026-11-23 12:00", false},
		// 07:30 UTC Monday is 09:30 in Johannesburg (UTC+2): open there.
		{"johannesburg open while UTC early", Schedule{Enabled: true, Timezone: "Africa/Johannesburg", OpenPeriods: weekdaysNineToFive}, "", "UTC", "2026-11-23 07:30", true},
		// Same instant, New York (UTC-5 in November) is 02:30: closed.
		{"new york closed same instant", Schedule{Enabled: true, Timezone: "America/New_York", OpenPeriods: weekdaysNineToFive}, "", "UTC", "2026-11-23 07:30", false},
		{"default zone used when schedule has none", Schedule{Enabled: true, OpenPeriods: weekdaysNineToFive}, "Africa/Johannesburg", "UTC", "2026-11-23 07:30", true},
		{"schedule zone beats default", Schedule{Enabled: true, Timezone: "America/New_York", OpenPeriods: weekdaysNineToFive}, "Africa/Johannesburg", "UTC", "2026-11-23 07:30", false},
		// Monday 01:00 UTC is still Sunday 20:00 in New York: the day is local.
		{"day boundary evaluated locally", Schedule{Enabled: true, Timezone: "America/New_York", OpenPeriods: []Period{{Days: []string{"sun"}, Start: "18:00", End: "24:00"}}}, "", "UTC", "2026-11-23 01:00", true},
		{"24:00 end covers last minute", Schedule{Enabled: true, OpenPeriods: []Period{{Days: []string{"sun"}, Start: "00:00", End: "24:00"}}}, "", "UTC", "2026-11-22 23:59", true},
		{"24:00 end does not leak into next day", Schedule{Enabled: true, OpenPeriods: []Period{{Days: []string{"sun"}, Start: "00:00", End: "24:00"}}}, "", "UTC", "2026-11-23 00:00", false},
		// Europe/London leaves BST on 2026-10-25 (Sunday) at 02:00 local.
		// 09:30 local after the switch is 09:30 UTC; before it, 08:30 UTC.
		{"london after DST end local 09:30", Schedule{Enabled: true, Timezone: "Europe/London", OpenPeriods: []Period{{Days: []string{"sun"}, Start: "09:00", End: "10:00"}}}, "", "UTC", "2026-10-25 09:30", true},
		{"london DST day 08:30 UTC is 08:30 local", Schedule{Enabled: true, Timezone: "Europe/London", OpenPeriods: []Period{{Days: []string{"sun"}, Start: "09:00", End: "10:00"}}}, "", "UTC", "2026-10-25 08:30", false},
		{"london day before DST end 08:30 UTC is 09:30 BST", Schedule{Enabled: true, Timezone: "Europe/London", OpenPeriods: []Period{{Days: []string{"sat"}, Start: "09:00", End: "10:00"}}}, "", "UTC", "2026-10-24 08:30", true},
		{"second period of the day", Schedule{Enabled: true, OpenPeriods: []Period{{Days: []string{"mon"}, Start: "08:00", End: "12:00"}, {Days: []string{"mon"}, Start: "13:00", End: "17:00"}}}, "", "UTC", "2026-11-23 12:30", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			open, h, err := tt.sched.State(mustTime(t, tt.zone, tt.at), tt.defaultTZ)
			if err != nil {
				t.Fatalf("State: %v", err)
			}
			if open != tt.want || h != nil {
				t.Fatalf("open=%v holiday=%v, want open=%v and no holiday", open, h, tt.want)
			}
		})
	}
}

func TestStateHolidays(t *testing.T) {
	open := []Period{{Days: []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}, Start: "00:00", End: "24:00"}}
	tests := []struct {
		name    string
		zone    string
		holiday Holiday
		at      string // in the schedule's zone
		want    string // holiday name closing it, "" = open
	}{
		{"all-day holiday closes", "UTC", Holiday{Name: "xmas", Date: "2026-12-25", AllDay: true}, "2026-12-25 12:00", "xmas"},
		{"all-day holiday ends at midnight", "UTC", Holiday{Name: "xmas", Date: "2026-12-25", AllDay: true}, "2026-12-26 00:00", ""},
		{"all-day holiday starts at midnight", "UTC", Holiday{Name: "xmas", Date: "2026-12-25", AllDay: true}, "2026-12-24 23:59", ""},
		{"yearly repeats next year", "UTC", Holiday{Name: "xmas", Date: "2020-12-25", AllDay: true, Yearly: true}, "2027-12-25 08:00", "xmas"},
		{"non-yearly does not repeat", "UTC", Holiday{Name: "once", Date: "2020-12-25", AllDay: true}, "2027-12-25 08:00", ""},
		{"multi-day middle", "UTC", Holiday{Name: "shutdown", Date: "2026-12-24", EndDate: "2026-12-27", AllDay: true}, "2026-12-26 10:00", "shutdown"},
		{"multi-day last day included", "UTC", Holiday{Name: "shutdown", Date: "2026-12-24", EndDate: "2026-12-27", AllDay: true}, "2026-12-27 23:00", "shutdown"},
		{"multi-day after end", "UTC", Holiday{Name: "shutdown", Date: "2026-12-24", EndDate: "2026-12-27", AllDay: true}, "2026-12-28 00:00", ""},
		{"yearly across new year, january part", "UTC", Holiday{Name: "summer", Date: "2020-12-24", EndDate: "2021-01-02", AllDay: true, Yearly: true}, "2027-01-01 12:00", "summer"},
		{"yearly across new year, december part", "UTC", Holiday{Name: "summer", Date: "2020-12-24", EndDate: "2021-01-02", AllDay: true, Yearly: true}, "2026-12-30 12:00", "summer"},
		{"yearly across new year, outside", "UTC", Holiday{Name: "summer", Date: "2020-12-24", EndDate: "2021-01-02", AllDay: true, Yearly: true}, "2027-01-03 00:00", ""},
		{"partial-day inside", "UTC", Holiday{Name: "party", Date: "2026-12-24", Start: "13:00", End: "17:00"}, "2026-12-24 13:00", "party"},
		{"partial-day before", "UTC", Holiday{Name: "party", Date: "2026-12-24", Start: "13:00", End: "17:00"}, "2026-12-24 12:59", ""},
		{"partial-day end exclusive", "UTC", Holiday{Name: "party", Date: "2026-12-24", Start: "13:00", End: "17:00"}, "2026-12-24 17:00", ""},
		{"partial multi-day runs from start to end", "UTC", Holiday{Name: "move", Date: "2026-12-24", EndDate: "2026-12-26", Start: "12:00", End: "10:00"}, "2026-12-25 03:00", "move"},
		{"holiday in local zone", "Africa/Johannesburg", Holiday{Name: "day", Date: "2026-12-16", AllDay: true}, "2026-12-16 00:30", "day"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Schedule{Name: "s", Enabled: true, Timezone: tt.zone, OpenPeriods: open, Holidays: []Holiday{tt.holiday}}
			if err := s.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			isOpen, h, err := s.State(mustTime(t, tt.zone, tt.at), "")
			if err != nil {
				t.Fatalf("State: %v", err)
			}
			got := ""
			if h != nil {
				got = h.Name
			}
			if got != tt.want || isOpen != (tt.want == "") {
				t.Fatalf("open=%v holiday=%q, want holiday %q", isOpen, got, tt.want)
			}
		})
	}
}

func TestStateHolidayAcrossUTCDate(t *testing.T) {
	// 2026-12-15 23:30 UTC is already 16 Dec 01:30 in Johannesburg.
	s := Schedule{Name: "s", Enabled: true, Timezone: "Africa/Johannesburg",
		OpenPeriods: []Period{{Days: []string{"wed"}, Start: "00:00", End: "24:00"}},
		Holidays:    []Holiday{{Name: "reconciliation", Date: "2026-12-16", AllDay: true}}}
	open, h, err := s.State(mustTime(t, "UTC", "2026-12-15 23:30"), "")
	if err != nil || open || h == nil || h.Name != "reconciliation" {
		t.Fatalf("open=%v holiday=%v err=%v, want closed by reconciliation", open, h, err)
	}
}

func TestStateErrors(t *testing.T) {
	tests := []struct {
		name  string
		sched Schedule
	}{
		{"unknown zone", Schedule{Enabled: true, Timezone: "Mars/Olympus"}},
		{"bad period", Schedule{Enabled: true, OpenPeriods: []Period{{Days: []string{"mon"}, Start: "9", End: "17:00"}}}},
		{"bad holiday", Schedule{Enabled: true, Holidays: []Holiday{{Name: "x", Date: "25/12/2026", AllDay: true}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			open, _, err := tt.sched.State(mustTime(t, "UTC", "2026-11-23 10:00"), "")
			if err == nil || open {
				t.Fatalf("open=%v err=%v, want closed with error", open, err)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		sched   Schedule
		wantErr bool
	}{
		{"valid", Schedule{Timezone: "Europe/London", OpenPeriods: weekdaysNineToFive, Holidays: []Holiday{{Date: "2026-12-25", AllDay: true}, {Date: "2026-12-24", Start: "12:00", End: "24:00"}}}, false},
		{"end 24:00 ok", Schedule{OpenPeriods: []Period{{Days: []string{"sat"}, Start: "10:00", End: "24:00"}}}, false},
		{"unknown day", Schedule{OpenPeriods: []Period{{Days: []string{"monday"}, Start: "09:00", End: "17:00"}}}, true},
		{"no days", Schedule{OpenPeriods: []Period{{Start: "09:00", End: "17:00"}}}, true},
		{"end before start", Schedule{OpenPeriods: []Period{{Days: []string{"mon"}, Start: "17:00", End: "09:00"}}}, true},
		{"end equals start", Schedule{OpenPeriods: []Period{{Days: []string{"mon"}, Start: "09:00", End: "09:00"}}}, true},
		{"start 24:00", Schedule{OpenPeriods: []Period{{Days: []string{"mon"}, Start: "24:00", End: "24:00"}}}, true},
		{"minutes out of range", Schedule{OpenPeriods: []Period{{Days: []string{"mon"}, Start: "09:60", End: "17:00"}}}, true},
		{"single digit hour", Schedule{OpenPeriods: []Period{{Days: []string{"mon"}, Start: "9:00", End: "17:00"}}}, true},
		{"bad zone", Schedule{Timezone: "Nowhere/Land"}, true},
		{"holiday bad date", Schedule{Holidays: []Holiday{{Date: "2026-13-01", AllDay: true}}}, true},
		{"holiday end_date before date", Schedule{Holidays: []Holiday{{Date: "2026-12-25", EndDate: "2026-12-24", AllDay: true}}}, true},
		{"partial holiday without times", Schedule{Holidays: []Holiday{{Date: "2026-12-25"}}}, true},
		{"partial holiday end before start", Schedule{Holidays: []Holiday{{Date: "2026-12-25", Start: "15:00", End: "14:00"}}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.sched.Validate()
			if (err != nil) != tt.wantErr {
				t.Fatalf("Validate() = %v, wantErr %v", err, tt.wantErr)
			}
		})
	}
}
