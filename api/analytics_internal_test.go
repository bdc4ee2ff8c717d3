package api

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func mustDate(t *testing.T, s string) localDate {
	t.Helper()
	d, err := time.Parse(dateLayout, s)
	require.NoError(t, err)
	return dateOf(d)
}

// A local day starts at local midnight, or where a DST change skips
// midnight, when the clocks land: in :30 and :45 zones and across DST,
// each start is a quarter hour (a rollup bucket boundary) and a day lasts
// 23, 24 or 25 hours.
func TestStartOfLocalDay(t *testing.T) {
	for _, c := range []struct {
		zone, day, start string
		hours            float64
	}{
		{"Africa/Cairo", "2026-01-15", "2026-01-14T22:00:00Z", 24},
		{"Asia/Riyadh", "2026-01-15", "2026-01-14T21:00:00Z", 24},
		{"Asia/Kolkata", "2026-01-15", "2026-01-14T18:30:00Z", 24},
		{"Asia/Kathmandu", "2026-01-15", "2026-01-14T18:15:00Z", 24},
		{"UTC", "2026-01-15", "2026-01-15T00:00:00Z", 24},
		// Cairo's summer time starts on the last Friday of April at 00:00:
		// that midnight does not exist, the day starts at 01:00 (+03).
		{"Africa/Cairo", "2026-04-24", "2026-04-23T22:00:00Z", 23},
		{"Africa/Cairo", "2026-04-25", "2026-04-24T21:00:00Z", 24},
		// It ends on the last Thursday of October at 24:00: 23:00 twice.
		{"Africa/Cairo", "2026-10-29", "2026-10-28T21:00:00Z", 25},
		{"Africa/Cairo", "2026-10-30", "2026-10-29T22:00:00Z", 24},
		// London changes at 01:00, not midnight: the day still starts at 00:00.
		{"Europe/London", "2026-03-29", "2026-03-29T00:00:00Z", 23},
		{"Europe/London", "2026-10-25", "2026-10-24T23:00:00Z", 25},
		// Lord Howe moves by half an hour.
		{"Australia/Lord_Howe", "2026-10-04", "2026-10-03T13:30:00Z", 23.5},
	} {
		loc, err := time.LoadLocation(c.zone)
		require.NoError(t, err)
		d := mustDate(t, c.day)
		start := startOfDay(d, loc)
		require.Equal(t, c.start, start.Format(time.RFC3339), "%s %s", c.zone, c.day)
		require.Zero(t, start.Unix()%(15*60), "a quarter hour")
		next := startOfDay(d.addDays(1), loc)
		require.Equal(t, c.hours, next.Sub(start).Hours(), "%s %s", c.zone, c.day)
		require.Equal(t, d, dateOf(start.In(loc)))
		require.Equal(t, d, dateOf(next.Add(-time.Nanosecond).In(loc)), "the day's last instant is still that day")
	}
}

// Periods cover the range without gaps, weeks start on the chosen day and
// months on the 1st, the first and last are clipped, and countPeriods
// agrees with them for every range shape.
func TestPeriods(t *testing.T) {
	ps := periods(mustDate(t, "2026-01-29"), mustDate(t, "2026-03-02"), "month", time.Saturday)
	require.Equal(t, []period{{mustDate(t, "2026-01-29"), mustDate(t, "2026-01-31")}, {mustDate(t, "2026-02-01"), mustDate(t, "2026-02-28")},
		{mustDate(t, "2026-03-01"), mustDate(t, "2026-03-02")}}, ps)
	// 2026-11-24 is a Tuesday.
	ps = periods(mustDate(t, "2026-11-24"), mustDate(t, "2026-12-08"), "week", time.Saturday)
	require.Equal(t, []period{{mustDate(t, "2026-11-24"), mustDate(t, "2026-11-27")}, {mustDate(t, "2026-11-28"), mustDate(t, "2026-12-04")},
		{mustDate(t, "2026-12-05"), mustDate(t, "2026-12-08")}}, ps)
	ps = periods(mustDate(t, "2026-11-23"), mustDate(t, "2026-11-29"), "week", time.Monday)
	require.Equal(t, []period{{mustDate(t, "2026-11-23"), mustDate(t, "2026-11-29")}}, ps)
	start := mustDate(t, "2026-01-01")
	for _, interval := range analyticsIntervals {
		for _, weekStart := range weekdays {
			for from := range 10 {
				for length := range 80 {
					f := start.addDays(from * 3)
					to := f.addDays(length)
					ps := periods(f, to, interval, weekStart)
					require.Equal(t, len(ps), countPeriods(f, to, interval, weekStart), "%s %v %s..%s", interval, weekStart, f, to)
					require.Equal(t, f, ps[0].first)
					require.Equal(t, to, ps[len(ps)-1].last)
					for i := 1; i < len(ps); i++ {
						require.Equal(t, ps[i-1].last.addDays(1), ps[i].first)
						if interval == "week" {
							require.Equal(t, weekStart, ps[i].first.civil().Weekday())
						}
					}
				}
			}
		}
	}
}

// Rates have 4 decimals and are null on a zero denominator; the average is
// rounded half away from zero.
func TestRatesAndAverage(t *testing.T) {
	require.Nil(t, rate(1, 0))
	require.Equal(t, 0.6667, *rate(2, 3))
	require.Equal(t, 1.0, *rate(5, 5))
	require.Nil(t, divideHalfUp(10, 0))
	require.EqualValues(t, 2, *divideHalfUp(5, 3))
	require.EqualValues(t, 3, *divideHalfUp(5, 2))
	require.EqualValues(t, -3, *divideHalfUp(-5, 2))
	require.EqualValues(t, 1, *divideHalfUp(4, 3))
}
