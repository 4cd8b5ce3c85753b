package a

import "testing"

// FuzzFails fails on its seed: the script must go on to the next target.
func FuzzFails(f *testing.F) {
	f.Add("boom")
	f.Fuzz(func(t *testing.T, s string) {
		if s == "boom" {
			t.Fatal("boom")
		}
	})
}

func FuzzPasses(f *testing.F) {
	f.Add("ok")
	f.Fuzz(func(t *testing.T, s string) {})
}
