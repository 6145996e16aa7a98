package dialplan

import "strconv"

func itoa(n int) string { return strconv.Itoa(n) }

func i64toa(n int64) string { return strconv.FormatInt(n, 10) }

func boolStr(v bool) string {
	if v {
		return "true"
	}
	return "false"
}
