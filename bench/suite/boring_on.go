//go:build boringcrypto

package main

import "crypto/boring"

func boringEnabled() bool { return boring.Enabled() }
