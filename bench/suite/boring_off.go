//go:build !boringcrypto

package main

func boringEnabled() bool { return false }
