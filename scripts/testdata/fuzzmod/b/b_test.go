package b

import "testing"

func FuzzAlsoFails(f *testing.F) {
	f.Add(0)
	f.Fuzz(func(t *testing.T, n int) {
		if n == 0 {
			t.Fatal("zero")
		}
	})
}

func FuzzAlsoPasses(f *testing.F) {
	f.Add(1)
	f.Fuzz(func(t *testing.T, n int) {})
}
