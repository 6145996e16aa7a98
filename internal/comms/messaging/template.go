package messaging

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

var placeholderRE = regexp.MustCompile(`\{\{\s*([0-9]{1,2})\s*\}\}`)

// placeholders returns the highest {{n}} a template body uses, and whether
// they run 1..n without gaps.
func placeholders(body string) (int, bool) {
	seen := map[int]bool{}
	max := 0
	for _, m := range placeholderRE.FindAllStringSubmatch(body, -1) {
		n, _ := strconv.Atoi(m[1])
		seen[n] = true
		if n > max {
			max = n
		}
	}
	for i := 1; i <= max; i++ {
		if !seen[i] {
			return max, false
		}
	}
	return max, true
}

// render fills a template body's placeholders with vars ({{1}} is vars[0]).
func render(body string, vars []string) string {
	return placeholderRE.ReplaceAllStringFunc(body, func(m string) string {
		n, _ := strconv.Atoi(strings.Trim(m, "{} "))
		if n >= 1 && n <= len(vars) {
			return vars[n-1]
		}
		return m
	})
}

// checkVariables checks vars against a template: exactly the number of
// values its placeholders (and declared variable_count) call for, none
// empty (providers refuse empty parameters), none holding a placeholder.
func checkVariables(t Template, vars []string) error {
	n, contiguous := placeholders(t.Body)
	if !contiguous {
		return fmt.Errorf("template %s has gaps in its placeholders; fix the template", t.ID)
	}
	if t.VariableCount > n {
		n = t.VariableCount
	}
	if len(vars) != n {
		return fmt.Errorf("template %s takes exactly %d variable(s), got %d", t.ID, n, len(vars))
	}
	for i, v := range vars {
		if strings.TrimSpace(v) == "" {
			return fmt.Errorf("variable %d is empty", i+1)
		}
		if placeholderRE.MatchString(v) {
			return fmt.Errorf("variable %d contains a placeholder", i+1)
		}
		if len([]rune(v)) > 1024 {
			return fmt.Errorf("variable %d is longer than 1024 characters", i+1)
		}
	}
	return nil
}
