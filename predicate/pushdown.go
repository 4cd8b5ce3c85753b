package predicate

// Pushdown returns the condition a storage engine can evaluate on its own:
// every function criterion is taken as true, and so is every NOT over a
// subtree that holds one (not-true would narrow; a function's answer is
// unknown until a compute member gives it). The result selects a superset
// of what Eval selects with any FunctionCaller, so a caller runs Pushdown
// in the engine and re-checks each candidate with Eval. A condition
// without function criteria is returned as it is.
func (c *Condition) Pushdown() *Condition {
	if !c.HasFunctions() {
		return c
	}
	return &Condition{root: pushdown(c.root), paths: c.paths}
}

// alwaysTrue is an empty AND.
var alwaysTrue = &node{kind: nAnd}

func pushdown(n *node) *node {
	if !hasFunc(n) {
		return n
	}
	switch n.kind {
	case nAnd, nOr:
		out := &node{kind: n.kind, children: make([]*node, len(n.children))}
		for i, ch := range n.children {
			out.children[i] = pushdown(ch)
		}
		return out
	}
	// A function leaf, or a NOT over one.
	return alwaysTrue
}

func hasFunc(n *node) bool {
	if n.kind == nFunc {
		return true
	}
	for _, ch := range n.children {
		if hasFunc(ch) {
			return true
		}
	}
	return false
}
