package workflow

import (
	"slices"
	"strings"
)

// findDefiniteLoop returns a cycle made only of edges the cascade would
// always take (not manual, not disabled, no criterion; scheduled edges
// count too), as "A -> B -> A", or "" when there is none. States and edges
// are visited in sorted order so the reported path is deterministic.
func findDefiniteLoop(w *Workflow) string {
	states := sortedStates(w)
	edges := make(map[string][]string, len(states))
	for _, s := range states {
		var next []string
		for _, t := range w.States[s].Transitions {
			if !t.Manual && !t.Disabled && t.Criterion == nil {
				next = append(next, t.Next)
			}
		}
		slices.Sort(next)
		edges[s] = slices.Compact(next)
	}
	const (
		unseen = iota
		onPath
		done
	)
	mark := make(map[string]int, len(states))
	var path []string
	var cycle []string
	var visit func(s string) bool
	visit = func(s string) bool {
		mark[s] = onPath
		path = append(path, s)
		for _, n := range edges[s] {
			switch mark[n] {
			case onPath:
				i := slices.Index(path, n)
				cycle = append(append(cycle, path[i:]...), n)
				return true
			case unseen:
				if visit(n) {
					return true
				}
			}
		}
		path = path[:len(path)-1]
		mark[s] = done
		return false
	}
	for _, s := range states {
		if mark[s] == unseen && visit(s) {
			return strings.Join(cycle, " -> ")
		}
	}
	return ""
}
