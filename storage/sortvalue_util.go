package storage

import (
	"bytes"
	"slices"
)

func sortByID(es []*Entity) {
	slices.SortFunc(es, func(a, b *Entity) int { return bytes.Compare(a.ID[:], b.ID[:]) })
}

func sortSlice(es []*Entity, cmp func(a, b *Entity) int) { slices.SortFunc(es, cmp) }
