package config

import (
	"sort"
	"strings"
)

// notSettings are SVC_ variables svc reads outside the configuration (the
// test suite's), so they draw no unknown-variable warning.
var notSettings = map[string]bool{"SVC_TEST_POSTGRES_URL": true, "SVC_SKIP_BROWSER_TEST": true}

// unknownWarnings names every SVC_ variable of the environment or a file
// that is no setting, with the closest known name: a typo such as
// SVC_HTTP_PROT otherwise leaves the default in force silently.
func unknownWarnings(env []string, files map[string]string, fileOf map[string]string) []string {
	known := map[string]bool{}
	var names []string
	for _, v := range Vars(&Config{}) {
		known[v.Name] = true
		names = append(names, v.Name)
		if v.File {
			known[v.Name+"_FILE"] = true
			names = append(names, v.Name+"_FILE")
		}
	}
	where := map[string]string{}
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "SVC_") {
			where[k] = "the environment"
		}
	}
	for k := range files {
		if _, ok := where[k]; !ok && strings.HasPrefix(k, "SVC_") {
			where[k] = fileOf[k]
		}
	}
	var out []string
	for k, src := range where {
		if known[k] || notSettings[k] {
			continue
		}
		msg := k + " (in " + src + ") is not a setting and is ignored"
		if c := closest(k, names); c != "" {
			msg += "; did you mean " + c + "?"
		}
		out = append(out, msg)
	}
	sort.Strings(out)
	return out
}

// closest is the known name at the smallest edit distance from name, if
// that distance is small enough to be a typo (at most a third of the name).
func closest(name string, known []string) string {
	best, bestD := "", len(name)/3+1
	for _, k := range known {
		if d := editDistance(name, k); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance over bytes (names are ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// UnknownWarnings is Load's unknown-variable warnings alone, for commands
// that do not load the service configuration (version, init, import,
// export) but should still point out a mistyped SVC_ variable. A file that
// cannot be read gives no warning here; the command that loads it says so.
func UnknownWarnings(src Source) []string {
	if src.Getenv == nil {
		src.Getenv = func(string) (string, bool) { return "", false }
	}
	files, fileOf, _, err := readFiles(src)
	if err != nil {
		files, fileOf = nil, nil
	}
	var env []string
	if src.Environ != nil {
		env = src.Environ()
	}
	return unknownWarnings(env, files, fileOf)
}
